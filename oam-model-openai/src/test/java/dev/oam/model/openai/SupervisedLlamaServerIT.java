package dev.oam.model.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.Log;
import dev.oam.testing.Conversation;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.RealModels;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The supervised llama-server backend on the real llama-server bin/test builds (llama-cpp-python 0.3.36's llama.cpp),
 * on both real models: SmolLM2 with its own template, Gemma 3 270M (no template) with Gemma's turns. A turn runs, a
 * server killed between turns is started again for the next one, and closing the bridge stops it.
 */
@Tag("real-model")
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class SupervisedLlamaServerIT {
    private LlamaServerBackend backend;
    private Conversation c;
    private final ByteArrayOutputStream logs = new ByteArrayOutputStream();
    private Log.Level level;

    @BeforeEach
    void setUp() {
        level = Log.level();
        Log.setLevel(Log.Level.INFO);
        Log.setStream(new PrintStream(logs, true, StandardCharsets.UTF_8));
        backend = new LlamaServerBackend(Map.<String, String>of()::get);
        c = new Conversation(
                InMemoryClient.connect(BridgeConfiguration.builder().backends(List.of(backend))),
                Duration.ofMinutes(5));
        c.call("init", "initialize", "{\"protocolVersion\":\"1.0\"}");
    }

    @AfterEach
    void tearDown() {
        c.close();
        backend.close();
        Log.setStream(System.err);
        Log.setLevel(level);
    }

    private static String spec(Path model) {
        return "{\"type\":\"llama-server\",\"path\":\"" + model + "\",\"binary\":\"" + RealModels.llamaServer()
                + "\",\"contextSize\":2048,\"threads\":2}";
    }

    @Test
    void smolLM2AnswersSurvivesAKilledServerAndStopsWithTheBridge() throws Exception {
        JsonNode created = c.call(
                1,
                "session/create",
                "{\"session\":\"s\",\"instructions\":\"You are a friendly innkeeper.\"," + "\"model\":"
                        + spec(RealModels.smollm2()) + ",\"options\":{\"maxResponseTokens\":16,\"temperature\":0}}");
        assertThat(created.path("warnings")).isEmpty();
        JsonNode first = c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Good evening!\"}");
        assertThat(first.path("text").asText()).isNotBlank();
        assertThat(logs.toString(StandardCharsets.UTF_8)).contains("version: ", "is ready on http://127.0.0.1:");

        SupervisedServer server = backend.servers().get(0);
        long pid = server.pid();
        ProcessHandle process = ProcessHandle.of(pid).orElseThrow();
        process.destroyForcibly();
        process.onExit().get(1, TimeUnit.MINUTES);

        JsonNode second = c.call(3, "session/respond", "{\"session\":\"s\",\"prompt\":\"Do you have a room?\"}");
        assertThat(second.path("text").asText()).isNotBlank();
        assertThat(server.starts()).isEqualTo(2);
        long restarted = server.pid();
        assertThat(restarted).isNotEqualTo(pid);
        assertThat(logs.toString(StandardCharsets.UTF_8)).contains("exited (killed by signal 9); starting it again");

        c.close();
        backend.close();
        assertThat(ProcessHandle.of(restarted).map(ProcessHandle::isAlive).orElse(false))
                .isFalse();
    }

    @Test
    void gemmaWithoutTemplateRunsOnGemmasTurns() {
        JsonNode created = c.call(
                1,
                "session/create",
                "{\"session\":\"g\",\"model\":" + spec(RealModels.gemma())
                        + ",\"options\":{\"maxResponseTokens\":16,\"temperature\":0}}");
        assertThat(created.path("warnings").toString()).contains("has no chat template", "Gemma's turn format");
        JsonNode answer = c.call(2, "session/respond", "{\"session\":\"g\",\"prompt\":\"Name a colour.\"}");
        assertThat(answer.path("text").asText()).isNotBlank().doesNotContain("<start_of_turn>", "<end_of_turn>");
        assertThat(logs.toString(StandardCharsets.UTF_8)).contains("--chat-template-file");
    }
}
