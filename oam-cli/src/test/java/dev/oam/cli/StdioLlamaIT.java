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
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real {@code bin/oam stdio --model tiny.gguf} child runs a forced tool call on the embedded llama.cpp backend, keeps
 * stdout to JSON-RPC, extracts the native library into {@code OAM_NATIVE_DIR} and leaves its {@code java.io.tmpdir}
 * alone (the binding's own loader deletes {@code llama*} there).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StdioLlamaIT {
    private static final String TOOL =
            "{\"name\":\"open_gate\",\"description\":\"Open a named gate.\",\"parameters\":{\"type\":\"object\","
                    + "\"properties\":{\"gate\":{\"type\":\"string\",\"enum\":[\"north\",\"south\"]}},\"required\":[\"gate\"]}}";

    private static List<String> listing(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }

    @Test
    void aForcedToolCallOnAGgufSystemModel(@TempDir Path dir) throws Exception {
        Path model = dir.resolve("stdio-tiny.gguf");
        TinyGguf.tiny().name("stdio-tiny").write(model);
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        Files.writeString(tmp.resolve("llama-canary.txt"), "keep me");
        Files.createDirectories(tmp.resolve("llamadir"));
        Path natives = dir.resolve("native");
        List<String> before = listing(tmp);
        // the binding's library (whose extraction this checks), not a project build bin/build-llama left in the cache
        List<String> command = List.of(
                "env",
                "OAM_NATIVE_DIR=" + natives,
                "TMPDIR=" + tmp,
                "OAM_JAVA_OPTS=-Djava.io.tmpdir=" + tmp,
                "OAM_LLAMA_LIBRARY=binding",
                "OAM_LLAMA_THREADS=1",
                "OAM_LLAMA_THREADS_BATCH=1",
                "OAM_LLAMA_CONTEXT=2048",
                Transports.launcher().toString(),
                "stdio",
                "--model",
                model.toString());
        StdioClient client = StdioClient.start(command);
        try (Conversation c = new Conversation(client)) {
            JsonNode init = c.call(1, "initialize", "{\"protocolVersion\":\"1.0\"}");
            assertThat(init.path("server").path("name").asText()).isEqualTo("open-apple-models");
            assertThat(init.path("capabilities").path("models"))
                    .extracting(JsonNode::asText)
                    .contains("llama");

            c.call(
                    2,
                    "session/create",
                    "{\"session\":\"guard\",\"tools\":[" + TOOL + "],\"options\":{\"toolChoice\":\"required\","
                            + "\"maxToolRounds\":1,\"maxResponseTokens\":8}}");
            c.request(
                    3,
                    "session/respond",
                    "{\"session\":\"guard\",\"prompt\":\"Open the north gate.\",\"stream\":true}");
            JsonNode call = c.toolCall();
            assertThat(call.path("params").path("call").path("name").asText()).isEqualTo("open_gate");
            assertThat(call.path("params")
                            .path("call")
                            .path("arguments")
                            .path("gate")
                            .asText())
                    .isIn("north", "south");
            c.reply(call, "{\"output\":{\"opened\":true}}");
            JsonNode result = c.result(3);
            assertThat(result.path("toolCalls")).hasSize(1);
            assertThat(result.path("toolCalls")
                            .get(0)
                            .path("output")
                            .path("opened")
                            .asBoolean())
                    .isTrue();
            assertThat(result.path("text").isTextual()).isTrue();
            assertThat(result.path("usage").path("inputTokens").asInt()).isPositive();

            JsonNode availability = c.call(4, "model/availability", null);
            assertThat(availability.path("available").asBoolean()).isTrue();
            assertThat(availability.path("variant").asText()).isEqualTo("stdio-tiny");
            assertThat(availability.path("contextSize").asInt()).isEqualTo(2048);

            client.endInput();
            assertThat(client.awaitStopped(Duration.ofSeconds(30))).isTrue();
            assertThat(client.exitCode()).isZero();
            assertThat(client.garbage()).as("stdout carries JSON-RPC only").isEmpty();
            assertThat(client.stderr()).doesNotContain("restricted method");
            assertThat(client.stderr())
                    .as("native logs only at --log-level debug")
                    .doesNotContain("llama_model_loader");
        }
        assertThat(listing(tmp))
                .as("nothing llama* created or deleted in java.io.tmpdir")
                .isEqualTo(before);
        try (Stream<Path> files = Files.walk(natives)) {
            assertThat(files.filter(Files::isRegularFile)
                            .map(p -> p.getFileName().toString()))
                    .anyMatch(n -> n.contains("jllama"));
        }
    }

    @Test
    void nativeLogsGoToStderrAtDebugLevel(@TempDir Path dir) throws Exception {
        Path model = dir.resolve("debug-tiny.gguf");
        TinyGguf.tiny().name("debug-tiny").write(model);
        List<String> command = List.of(
                "env",
                "OAM_NATIVE_DIR=" + dir.resolve("native"),
                "OAM_LLAMA_THREADS=1",
                "OAM_LLAMA_THREADS_BATCH=1",
                "OAM_LLAMA_CONTEXT=2048",
                Transports.launcher().toString(),
                "stdio",
                "--log-level",
                "debug",
                "--model",
                model.toString());
        StdioClient client = StdioClient.start(command);
        try (Conversation c = new Conversation(client)) {
            c.call(1, "session/create", "{\"session\":\"s\",\"options\":{\"maxResponseTokens\":2}}");
            assertThat(c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hi.\"}")
                            .path("text")
                            .isTextual())
                    .isTrue();
            client.endInput();
            assertThat(client.awaitStopped(Duration.ofSeconds(30))).isTrue();
            assertThat(client.garbage()).as("stdout carries JSON-RPC only").isEmpty();
            assertThat(client.stderr()).contains("llama_model_loader");
        }
    }
}
