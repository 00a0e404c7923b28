package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.gguf.TinyGguf;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A model of a current architecture (a generated random-weight Qwen3, {@link TinyGguf#architecture}) on the engine path
 * the run sets up: on the project-built llama.cpp (the vendored run, the default wherever bin/build-llama has built it)
 * it loads and answers; on llama.cpp b4916 (the binding's library: OAM_LLAMA_LIBRARY=binding in the default run, and
 * the JNI engine) {@code session/create} refuses it, naming the architecture and what would run it.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class FfmQwen3Test {
    @Test
    void aQwen3ModelLoadsOnTheCurrentLlamaCppAndIsRefusedByName() throws Exception {
        Path file = TinyEngines.MODELS.resolve("qwen3").resolve("tiny-qwen3.gguf");
        TinyGguf.tiny().architecture("qwen3").name("tiny-random-qwen3").write(file);
        boolean current = EngineChoice.planned(SystemSettings.host()).current();
        assertThat(current)
                .as(
                        "the run's llama.cpp: %s",
                        EngineChoice.planned(SystemSettings.host()).description())
                .isEqualTo("vendored".equals(System.getProperty("oam.test.llamaLibrary")) && TinyEngines.ffmPossible());
        LlamaBackend backend = new LlamaBackend(
                LlamaSettings.read(dev.oam.core.Environment.system()).sized(1, 1, 1, 2048), List.of("en"));
        try (Conversation c = new Conversation(
                InMemoryClient.connect(BridgeConfiguration.builder().backends(List.of(backend))),
                java.time.Duration.ofMinutes(2))) {
            String spec =
                    "{\"type\":\"llama\",\"path\":" + Json.write(Json.mapper().valueToTree(file.toString())) + "}";
            if (current) {
                c.call(
                        1,
                        "session/create",
                        "{\"session\":\"q\",\"model\":" + spec
                                + ",\"options\":{\"maxResponseTokens\":8,\"temperature\":0}}");
                JsonNode answer = c.call(2, "session/respond", "{\"session\":\"q\",\"prompt\":\"hello\"}");
                assertThat(answer.path("usage").path("outputTokens").asInt()).isPositive();
                // where it runs: the CPU of the project build (model/availability's device)
                assertThat(backend.create(Conversation.object(spec), "model")
                                .availability()
                                .device())
                        .isEqualTo("CPU (cpu build)");
            } else {
                c.request(1, "session/create", "{\"session\":\"q\",\"model\":" + spec + "}");
                JsonNode error = c.error(1);
                assertThat(error.path("code").asInt()).isEqualTo(-32602);
                assertThat(error.path("message").asText())
                        .contains(
                                "'model.path'",
                                "tiny-qwen3.gguf is a 'qwen3' model",
                                "b4916",
                                "cannot run",
                                "bin/build-llama",
                                "llama-server");
            }
        } finally {
            backend.close();
        }
    }
}
