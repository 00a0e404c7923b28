package dev.oam.server;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The official {@code openai} Python package against the server: src/test/python/openai_client_check.py. The package
 * comes from PyPI into the project's cache folder through bin/lib/openai-python.sh (once; later runs are offline);
 * without Python 3.9+ or PyPI the test fails and says why.
 */
class OpenAIPythonClientTest {
    private static final String SCRIPT = "["
            + "{\"text\":\"Hello from oam\"},"
            + "{\"toolCalls\":[{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}]},"
            + "{\"template\":\"It is {toolOutput} in Paris.\"},"
            + "{\"toolCalls\":[{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\"}},{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Bergen\"}}]},"
            + "{\"text\":\"The road north is long and cold\",\"chunks\":4},"
            + "{\"json\":{\"quantity\":2,\"dish\":\"stew\"}}"
            + "]";

    @Test
    void theOfficialPythonClientPassesEveryCheck() throws Exception {
        Path root =
                Path.of(System.getProperty("oam.root", "..")).toAbsolutePath().normalize();
        String pythonPath = run(
                        List.of("bash", root.resolve("bin/lib/openai-python.sh").toString()),
                        Map.of(),
                        "installing openai")
                .strip();
        try (OpenAIServer server = TestServers.start(
                TestServers.script(SCRIPT),
                options -> options.withSecurity("py-key", List.of()).withAliases(Map.of("gpt-4o-mini", "system")))) {
            String out = run(
                    List.of(
                            "python3",
                            root.resolve("oam-server/src/test/python/openai_client_check.py")
                                    .toString(),
                            server.uri() + "/v1",
                            "py-key"),
                    Map.of("PYTHONPATH", pythonPath),
                    "the Python client check");
            assertThat(out).contains("9 passed, 0 failed");
        }
    }

    /** Runs a child process to the end; its output is the test's evidence. */
    private static String run(List<String> command, Map<String, String> env, String what)
            throws IOException, InterruptedException {
        Path log = Files.createTempFile("oam-python", ".log");
        try {
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectErrorStream(false)
                    .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
            builder.environment().putAll(env);
            Process process = builder.start();
            process.getOutputStream().close();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int code = process.waitFor();
            String err = Files.readString(log);
            System.out.println(out);
            System.err.println(err);
            assertThat(code).as(what + " failed:\n" + out + "\n" + err).isZero();
            return out;
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
