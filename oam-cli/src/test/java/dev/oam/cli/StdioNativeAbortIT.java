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
 * Native-crash containment of a real {@code bin/oam stdio}: a model file that passes oam's GGUF check but makes
 * llama.cpp abort ({@link TinyGguf#writeAbortingModel}) ends the process with the documented exit code 134, says so on
 * stderr, leaves the JVM's crash report in the private folder (not the working directory) and only protocol lines on
 * stdout; a fresh bridge started afterwards works.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StdioNativeAbortIT {
    @Test
    void aNativeAbortEndsTheBridgeCleanlyAndAFreshOneWorks(@TempDir Path dir) throws Exception {
        Path aborting = dir.resolve("aborting.gguf");
        TinyGguf.writeAbortingModel(aborting);
        Path cache = dir.resolve("cache");
        Path cwd = Files.createDirectories(dir.resolve("cwd"));
        Path natives = dir.resolve("native");

        StdioClient client = StdioClient.start(List.of(
                "env",
                "-C",
                cwd.toString(),
                "XDG_CACHE_HOME=" + cache,
                "OAM_NATIVE_DIR=" + natives,
                "OAM_LLAMA_THREADS=1",
                "OAM_LLAMA_THREADS_BATCH=1",
                "OAM_LLAMA_CONTEXT=2048",
                Transports.launcher().toString(),
                "stdio"));
        long pid = client.pid(); // env and bin/oam exec, so this is the JVM's
        try (Conversation c = new Conversation(client)) {
            c.call(1, "initialize", "{\"protocolVersion\":\"1.0\"}");
            c.call(2, "ping", null);
            c.call(
                    3,
                    "session/create",
                    "{\"session\":\"doomed\",\"model\":{\"type\":\"llama\",\"path\":\"" + json(aborting)
                            + "\"},\"options\":{\"maxResponseTokens\":4}}");
            c.request(4, "session/respond", "{\"session\":\"doomed\",\"prompt\":\"Hello.\"}");
            assertThat(client.awaitStopped(Duration.ofSeconds(120)))
                    .as("the bridge ends")
                    .isTrue();

            assertThat(client.exitCode()).as(client.stderr()).isEqualTo(134);
            assertThat(client.garbage()).as("stdout carries JSON-RPC only").isEmpty();
            assertThat(c.messages())
                    .as("what reached stdout: the three answers before the abort")
                    .allSatisfy(m -> assertThat(m.path("jsonrpc").asText()).isEqualTo("2.0"))
                    .extracting(m -> m.path("id").asInt())
                    .containsExactly(1, 2, 3);
            String stderr = client.stderr();
            assertThat(stderr).contains("GGML_ASSERT(id_to_token.size() == token_to_id.size()) failed");
            Path report = cache.resolve("oam").resolve("hs_err_pid" + pid + ".log");
            assertThat(stderr)
                    .contains("oam: native code aborted oam stdio (SIGABRT")
                    .contains("exits with code 134")
                    .contains(report.toString());
            assertThat(stderr).as("the gdb backtrace stays off").doesNotContain("[Inferior");
        }
        try (Stream<Path> files = Files.list(cache.resolve("oam"))) {
            assertThat(files.map(p -> p.getFileName().toString())).contains("hs_err_pid" + pid + ".log");
        }
        String report = Files.readString(cache.resolve("oam").resolve("hs_err_pid" + pid + ".log"));
        // Either engine's load (FFM on JDK 22+ Linux/macOS, JNI elsewhere) is who called into llama.cpp.
        assertThat(report)
                .as("the report shows who called into llama.cpp")
                .containsAnyOf("dev.oam.model.llama.jni.JniEngine.open", "dev.oam.model.llama.ffm.FfmEngine.open")
                .contains("dev.oam.core.os.NativeAbort.onSignal");
        try (Stream<Path> files = Files.list(cwd)) {
            assertThat(files).as("nothing in the working directory").isEmpty();
        }

        // A fresh bridge on a sound model answers.
        Path sound = dir.resolve("sound.gguf");
        TinyGguf.tiny().name("sound-tiny").write(sound);
        StdioClient fresh = StdioClient.start(List.of(
                "env",
                "-C",
                cwd.toString(),
                "XDG_CACHE_HOME=" + cache,
                "OAM_NATIVE_DIR=" + natives,
                "OAM_LLAMA_THREADS=1",
                "OAM_LLAMA_THREADS_BATCH=1",
                "OAM_LLAMA_CONTEXT=2048",
                Transports.launcher().toString(),
                "stdio",
                "--model",
                sound.toString()));
        try (Conversation c = new Conversation(fresh)) {
            c.call(1, "session/create", "{\"session\":\"s\",\"options\":{\"maxResponseTokens\":2}}");
            JsonNode answer = c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}");
            assertThat(answer.path("text").isTextual()).isTrue();
            fresh.endInput();
            assertThat(fresh.awaitStopped(Duration.ofSeconds(30))).isTrue();
            assertThat(fresh.exitCode()).isZero();
            assertThat(fresh.garbage()).isEmpty();
        }
    }

    /**
     * The same model under {@code OAM_MODEL_HOST=process}: the child model host (started from the shaded jar) dies, the
     * bridge answers {@code -32001} naming the abort, keeps serving a session on a sound model and exits 0.
     */
    @Test
    void withTheProcessHostTheAbortCostsOneModel(@TempDir Path dir) throws Exception {
        Path aborting = dir.resolve("aborting.gguf");
        TinyGguf.writeAbortingModel(aborting);
        Path sound = dir.resolve("sound.gguf");
        TinyGguf.tiny().name("sound-tiny").write(sound);
        Path cache = dir.resolve("cache");
        Path cwd = Files.createDirectories(dir.resolve("cwd"));
        StdioClient client = StdioClient.start(List.of(
                "env",
                "-C",
                cwd.toString(),
                "XDG_CACHE_HOME=" + cache,
                "OAM_NATIVE_DIR=" + dir.resolve("native"),
                "OAM_MODEL_HOST=process",
                "OAM_LLAMA_THREADS=1",
                "OAM_LLAMA_THREADS_BATCH=1",
                "OAM_LLAMA_CONTEXT=2048",
                Transports.launcher().toString(),
                "stdio"));
        try (Conversation c = new Conversation(client)) {
            c.call(
                    1,
                    "session/create",
                    "{\"session\":\"doomed\",\"model\":{\"type\":\"llama\",\"path\":\"" + json(aborting)
                            + "\"},\"options\":{\"maxResponseTokens\":4}}");
            c.call(
                    2,
                    "session/create",
                    "{\"session\":\"fine\",\"model\":{\"type\":\"llama\",\"path\":\"" + json(sound)
                            + "\"},\"options\":{\"maxResponseTokens\":4}}");
            JsonNode error = c.request(3, "session/respond", "{\"session\":\"doomed\",\"prompt\":\"Hello.\"}")
                    .error(3);
            assertThat(error.path("code").asInt()).isEqualTo(-32001);
            assertThat(error.path("data").path("exitCode").asInt()).isEqualTo(134);
            assertThat(error.path("message").asText())
                    .contains("GGML_ASSERT(id_to_token.size() == token_to_id.size()) failed");
            assertThat(Path.of(error.path("data").path("crashReport").asText()))
                    .exists()
                    .startsWith(cache);
            assertThat(c.call(4, "ping", null).isObject()).isTrue();
            assertThat(c.call(5, "session/respond", "{\"session\":\"fine\",\"prompt\":\"Hello.\"}")
                            .path("text")
                            .isTextual())
                    .isTrue();
            client.endInput();
            assertThat(client.awaitStopped(Duration.ofSeconds(60))).isTrue();
            assertThat(client.exitCode()).as(client.stderr()).isZero();
            assertThat(client.garbage()).as("stdout carries JSON-RPC only").isEmpty();
            assertThat(client.stderr())
                    .as("the child's stderr reaches the bridge's")
                    .contains("oam: native code aborted the oam model host");
        }
        try (Stream<Path> files = Files.list(cwd)) {
            assertThat(files).as("nothing in the working directory").isEmpty();
        }
    }

    private static String json(Path path) {
        return path.toString().replace("\\", "\\\\").replace("\"", "\\\"");
    }
}
