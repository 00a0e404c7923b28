package dev.oam.ffi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.ffi.NativeFiles.Run;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * bindings/python with this machine's python3: its unittest suite (over libOpenAppleModelsFFI and
 * over an {@code oam stdio} child) and example.py both ways. Fails the build when they fail.
 * {@code -Doam.python=/path/to/python3} picks another interpreter.
 */
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class PythonBindingIT {
    private static Path bindings() {
        return NativeFiles.repositoryRoot().resolve("bindings/python");
    }

    private static String python() {
        return System.getProperty("oam.python", "python3");
    }

    private static Map<String, String> environment() {
        Path dir = NativeFiles.dir();
        String java = Path.of(NativeFiles.javaHome(), "bin", "java").toString();
        Map<String, String> env = new HashMap<>();
        env.put("OAM_LIBRARY", dir.resolve(NativeFiles.library()).toString());
        env.put("OAM_REQUIRE_NATIVE", "1");
        env.put("OAM_JAVA_HOME", NativeFiles.javaHome());
        // A quick-starting JVM for the many short-lived stdio children of the tests.
        env.put("OAM_STDIO_COMMAND", java + " -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -jar " + dir.resolve("oam.jar") + " stdio");
        env.put("OAM_CLASSPATH", null);
        env.put("OAM_BRIDGE_LOG", null);
        env.put("PYTHONDONTWRITEBYTECODE", "1");
        env.put("PYTHONUNBUFFERED", "1");
        return env;
    }

    private static Run python(String... arguments) {
        List<String> command = new java.util.ArrayList<>(List.of("sh", "-c", "cd \"$0\" && exec \"$@\"", bindings().toString(), python()));
        command.addAll(List.of(arguments));
        return NativeFiles.run(command, environment(), 600);
    }

    @Test
    void theUnittestSuitePasses() {
        Run run = python("-m", "unittest", "-v", "test_open_apple_models");
        System.err.println(run.err());
        assertThat(run.exit()).as(run.describe()).isZero();
        assertThat(run.err()).contains("\nOK")
                .doesNotContain("libOpenAppleModelsFFI is not built")
                .doesNotContain("OAM_STDIO_COMMAND is not set")
                .containsPattern("NativeBridgeTest\\.test_a_tool_round_trip_with_streaming\\) \\.\\.\\. ok")
                .containsPattern("StdioBridgeTest\\.test_a_tool_round_trip_with_streaming\\) \\.\\.\\. ok");
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
        assertThat(run.out()).contains("server open-apple-models 0.1.0; model available: False (model_not_ready)")
                .contains("blocking ping: {}")
                .contains("shop: We have this: {\"item\":\"iron sword\",\"stock\":3}")
                .contains("shop: Sorry. Error: No item called 'mithril'.")
                .contains("guard decides: {'reasoning': 'Three wolves is too many.', 'choice': 'retreat'}")
                .contains("error: -32020 session_not_found")
                .endsWith("done\n");
    }
}
