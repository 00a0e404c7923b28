package dev.oam.ffi;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.ffi.NativeFiles.Run;
import dev.oam.testing.gguf.TinyGguf;
import dev.oam.testing.hub.FakeHub;
import dev.oam.testing.openai.FakeOpenAIServer;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * bindings/python with this machine's python3: its unittest suite (over libOpenAppleModelsFFI and over an {@code oam
 * stdio} child) and example.py both ways. Fails the build when they fail. {@code -Doam.python=/path/to/python3} picks
 * another interpreter.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class PythonBindingIT {
    private static Path bindings() {
        return NativeFiles.repositoryRoot().resolve("bindings/python");
    }

    private static String python() {
        return System.getProperty("oam.python", "python3");
    }

    private static Path model;
    private static FakeOpenAIServer server;
    private static FakeHub hub;

    /** The model backends' peers for the suite's model tests: a generated GGUF and the fake OpenAI server. */
    @BeforeAll
    static void peers(@TempDir Path temp) throws Exception {
        model = temp.resolve("python-tiny.gguf");
        TinyGguf.tiny().name("python-tiny").write(model);
        server = FakeOpenAIServer.start().otherwise(PythonBindingIT::answer);
        hub = FakeHub.start();
        hub.addFile("owner", "repo", "python-tiny.gguf", java.nio.file.Files.readAllBytes(model));
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
        if (hub != null) {
            hub.close();
        }
    }

    /**
     * The fake model of the Python tests, whatever order they run in: it calls open_gate when tools are offered, then
     * answers from the tool's result, and otherwise says what it heard.
     */
    private static FakeOpenAIServer.Reply answer(FakeOpenAIServer.Recorded request) {
        JsonNode messages = request.messages();
        JsonNode last = messages.get(messages.size() - 1);
        if (last.path("role").asText().equals("tool")) {
            return FakeOpenAIServer.text(
                    "The gate answered: " + last.path("content").asText());
        }
        if (request.hasTools()) {
            return FakeOpenAIServer.call("open_gate", "{\"gate\":\"north\"}");
        }
        return FakeOpenAIServer.text(request.body().path("model").asText() + " heard: "
                + last.path("content").asText());
    }

    private static Map<String, String> environment() {
        Path dir = NativeFiles.dir();
        String java = Path.of(NativeFiles.javaHome(), "bin", "java").toString();
        Map<String, String> env = new HashMap<>();
        env.put("OAM_LIBRARY", dir.resolve(NativeFiles.library()).toString());
        env.put("OAM_REQUIRE_NATIVE", "1");
        env.put("OAM_JAVA_HOME", NativeFiles.javaHome());
        // A quick-starting JVM for the many short-lived stdio children of the tests.
        env.put(
                "OAM_STDIO_COMMAND",
                java + " -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar " + dir.resolve("oam.jar") + " stdio");
        env.put("OAM_CLASSPATH", null);
        env.put("OAM_BRIDGE_LOG", null);
        env.put("OAM_TEST_GGUF", model.toString());
        env.put("OAM_TEST_OPENAI_URL", server.baseUrl());
        env.put("OAM_TEST_HUB_URL", hub.uri().toString());
        env.put("OAM_MODEL", null);
        env.put("OAM_MODEL_NAME", null);
        env.put("OAM_API_KEY", null);
        env.put("OAM_NATIVE_DIR", dir.resolveSibling("llama-native").toString());
        env.put("OAM_LLAMA_THREADS", "1");
        env.put("OAM_LLAMA_THREADS_BATCH", "1");
        env.put("OAM_LLAMA_CONTEXT", "2048");
        env.put("PYTHONDONTWRITEBYTECODE", "1");
        env.put("PYTHONUNBUFFERED", "1");
        return env;
    }

    private static Run python(String... arguments) {
        List<String> command = new java.util.ArrayList<>(
                List.of("sh", "-c", "cd \"$0\" && exec \"$@\"", bindings().toString(), python()));
        command.addAll(List.of(arguments));
        return NativeFiles.run(command, environment(), 600);
    }

    @Test
    void theUnittestSuitePasses() {
        Run run = python("-m", "unittest", "-v", "test_open_apple_models");
        System.err.println(run.err());
        assertThat(run.exit()).as(run.describe()).isZero();
        assertThat(run.err())
                .contains("\nOK")
                .doesNotContain("libOpenAppleModelsFFI is not built")
                .doesNotContain("OAM_STDIO_COMMAND is not set")
                .containsPattern("NativeBridgeTest\\.test_a_tool_round_trip_with_streaming\\) \\.\\.\\. ok")
                .containsPattern("StdioBridgeTest\\.test_a_tool_round_trip_with_streaming\\) \\.\\.\\. ok");
        for (String transport : List.of("NativeModelTest", "StdioModelTest")) {
            for (String test : List.of(
                    "test_a_llama_session_calls_a_tool",
                    "test_an_openai_session_calls_a_tool",
                    "test_oam_model_names_a_gguf_system_model",
                    "test_oam_model_names_an_openai_system_model",
                    "test_bad_model_files_and_a_server_that_is_down_fail_alone")) {
                assertThat(run.err()).containsPattern(transport + "\\." + test + "\\) \\.\\.\\. ok");
            }
        }
        // This one's "ok" may come after the library's message on the same stderr; the suite's "OK" says it passed.
        assertThat(run.err())
                .contains(
                        "NativeModelTest.test_a_system_model_the_library_cannot_serve_fails_the_bridge_not_the_process)")
                .doesNotContainPattern("cannot_serve_fails_the_bridge_not_the_process\\) \\.\\.\\. skipped")
                .containsPattern(
                        "oam ffi error: cannot create the bridge: .*OAM_MODEL: cannot use the model '[^']*absent-[0-9]+\\.gguf'.*"
                                + "does not exist");
        assertThat(server.problems()).isEmpty();
    }

    @Test
    void theExampleRunsInProcess() {
        assertExample(python("example.py"));
    }

    @Test
    void theExampleRunsOverStdio() {
        assertExample(python("example.py", "--stdio"));
    }

    private static void assertExample(Run run) {
        assertThat(run.exit()).as(run.describe()).isZero();
        assertThat(run.out())
                .contains("server open-apple-models 0.1.0; model available: False (model_not_ready)")
                .contains("blocking ping: {}")
                .contains("shop: We have this: {\"item\":\"iron sword\",\"stock\":3}")
                .contains("shop: Sorry. Error: No item called 'mithril'.")
                .contains("guard decides: {'reasoning': 'Three wolves is too many.', 'choice': 'retreat'}")
                .contains("error: -32020 session_not_found")
                .endsWith("done\n");
    }
}
