package dev.oam.ffi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.ffi.NativeFiles.Run;
import dev.oam.testing.gguf.TinyGguf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * libOpenAppleModelsFFI from C: each test runs one scenario of {@code oam-ffi-tests} (see src/test/c/ffi_tests.c) in
 * its own process, which prints what it checked on stderr. No scenario may write to stdout: the library must leave it
 * to the host.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class NativeLibraryIT {
    private static Run scenario(String name, Map<String, String> env) {
        Map<String, String> all = new HashMap<>();
        all.put("OAM_JAVA_HOME", NativeFiles.javaHome());
        all.put("OAM_CLASSPATH", null);
        all.put("OAM_BRIDGE_LOG", null);
        all.put("OAM_JVM_OPTIONS", null);
        all.put("GGML_NO_BACKTRACE", null);
        all.putAll(env);
        Run run = NativeFiles.run(
                List.of(NativeFiles.dir().resolve("oam-ffi-tests").toString(), name), all, 150);
        System.err.println("--- " + name + ":\n" + run.err());
        assertThat(run.out()).as("nothing on stdout: %s", run.describe()).isEmpty();
        return run;
    }

    private static Run passes(String name) {
        return passes(name, Map.of());
    }

    private static Run passes(String name, Map<String, String> env) {
        Run run = scenario(name, env);
        assertThat(run.exit()).as(run.describe()).isZero();
        assertThat(run.err()).contains("PASSED " + name);
        return run;
    }

    // ---------------------------------------------------------------- the contract of the header

    @Test
    void everyRequestIsAnsweredExactlyOnceWhileEightThreadsSendAndTheCallbackAnswersToolCalls() {
        passes("stress");
    }

    @Test
    void settingsGivenAsJsonReplaceTheEnvironmentAndMalformedOnesAreRefused() {
        String settings = "{\"javaHome\": " + jsonString(NativeFiles.javaHome()) + ", \"classPath\": "
                + jsonString(NativeFiles.dir().resolve("oam.jar").toString())
                + ", \"logLevel\": \"info\", \"maxSessions\": 1, \"scriptedModels\": true, \"model\": null}";
        Map<String, String> env = new HashMap<>();
        env.put("OAM_JAVA_HOME", null); // only the settings can say where Java is
        env.put("JAVA_HOME", null);
        env.put("OAM_JVM_DIRS", "/nonexistent");
        env.put("OAM_CLASSPATH", "/nonexistent/oam.jar"); // the setting wins over the variable
        env.put("OAM_TEST_SETTINGS", settings);
        Run run = passes("json-settings", env);
        assertThat(run.err())
                .contains("15 malformed settings refused")
                .contains("the settings are refused: unknown setting \"nope\"")
                .contains("the setting \"maxSessions\" must be a number")
                .contains("the setting \"logLevel\" appears twice")
                .contains("text follows the settings object")
                .contains("starting the JVM") // an info line: the logLevel setting took effect
                .contains(NativeFiles.javaHome());
    }

    private static String jsonString(String text) {
        return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    @Test
    void destroyCancelsTurnsAndToolCallsInFlightAndNoCallbackFollows() {
        passes("destroy-inflight");
    }

    @Test
    void destroyFromInsideTheCallbackReturnsAtOnceAndIsTheLastCallback() {
        passes("destroy-in-callback");
    }

    @Test
    void sendRefusesNullAndInvalidUtf8() {
        passes("send-invalid");
    }

    @Test
    void twoBridgesInOneProcessAreIndependent() {
        passes("two-bridges");
    }

    @Test
    void aHundredCreateDestroyCyclesLeaveNoThreadsBehind() {
        passes("cycles");
    }

    @Test
    void callBlockingReturnsTheResponseAndCancelsOnTimeout() {
        passes("call-blocking");
    }

    @Test
    void theJvmsJniChecksFindNothingToComplainAbout(@TempDir Path temp) throws IOException {
        for (String name : List.of("stress", "call-blocking", "destroy-in-callback", "send-invalid")) {
            Run run = passes(name, Map.of("OAM_JVM_OPTIONS", "-Xcheck:jni"));
            assertThat(run.err()).as(name).doesNotContain("WARNING").doesNotContain("FATAL ERROR");
        }
        // With the llama backend registered (it is in oam.jar), short of creating a llama model: once one runs,
        // de.kherud:llama's own JNI code draws "JNI call made without checking exceptions" warnings (on stdout).
        Run run = passes(
                "lazy-llama", lazyLlama(temp, Map.of("OAM_JVM_OPTIONS", "-Xcheck:jni", "OAM_TEST_NO_LLAMA_TURN", "1")));
        assertThat(run.err())
                .contains("no jllama before a llama model")
                .doesNotContain("WARNING")
                .doesNotContain("FATAL ERROR");
    }

    // ---------------------------------------------------------------- process hygiene

    @Test
    void aJvmTheLibraryStartsHasNoGgmlBacktracesAndAPrivateCrashFolder(@TempDir Path temp) {
        Path cache = temp.resolve("cache"); // not there yet: the library makes it
        Path reports = cache.resolve("oam");
        Run run = passes(
                "hygiene",
                Map.of(
                        "XDG_CACHE_HOME",
                        cache.toString(),
                        "OAM_TEST_ERROR_FILE",
                        "-XX:ErrorFile=" + reports.resolve("hs_err_pid%p.log")));
        assertThat(run.err()).contains("GGML_NO_BACKTRACE before: <unset>");
        assertThat(reports).isDirectory();
    }

    @Test
    void aGgmlNoBacktraceTheHostSetIsKept() {
        Run run = passes("hygiene", Map.of("GGML_NO_BACKTRACE", "host-value"));
        assertThat(run.err()).contains("GGML_NO_BACKTRACE before: host-value");
    }

    /** The llama backend is on the class path of oam.jar and registered by every create, yet loads nothing native. */
    private static Map<String, String> lazyLlama(Path temp, Map<String, String> more) throws IOException {
        Path model = temp.resolve("lazy.gguf");
        TinyGguf.tiny().name("lazy").write(model);
        Map<String, String> env = new HashMap<>(Map.of(
                "OAM_TEST_GGUF",
                model.toString(),
                "OAM_NATIVE_DIR",
                NativeFiles.dir().resolveSibling("llama-native").toString(),
                "OAM_LLAMA_THREADS",
                "1",
                "OAM_LLAMA_THREADS_BATCH",
                "1",
                "OAM_LLAMA_CONTEXT",
                "2048",
                // the binding's jllama, whose mapping the C test looks for, not a project build found in the cache
                "OAM_LLAMA_LIBRARY",
                "binding"));
        env.putAll(more);
        return env;
    }

    @Test
    void llamaCppIsLoadedOnlyWhenALlamaModelIsCreated(@TempDir Path temp) throws IOException {
        Run run = passes("lazy-llama", lazyLlama(temp, Map.of()));
        assertThat(run.err()).contains("no jllama before a llama model").contains("jllama mapped after the llama turn");
    }

    // ---------------------------------------------------------------- finding the JVM and the jar

    @Test
    void joinsAJvmTheHostAlreadyRunsAndLoadsTheJarInItsOwnClassLoader() {
        passes("join", Map.of("OAM_TEST_JAVA_HOME", NativeFiles.javaHome(), "OAM_JAVA_HOME", ""));
    }

    @Test
    void aJavaHomeOlderThan21IsSkippedForANewerJdk(@TempDir Path temp) throws IOException {
        Path old = fakeJdk(temp.resolve("old"), "17.0.2");
        Path jvms = Files.createDirectories(temp.resolve("jvms"));
        Path link = Files.createSymbolicLink(jvms.resolve("current"), Path.of(NativeFiles.javaHome()));
        Run run;
        try {
            run = passes(
                    "ping",
                    Map.of(
                            "OAM_JAVA_HOME",
                            "",
                            "JAVA_HOME",
                            old.toString(),
                            "OAM_JVM_DIRS",
                            jvms.toString(),
                            "OAM_BRIDGE_LOG",
                            "info"));
        } finally {
            Files.delete(link);
        }
        assertThat(run.err())
                .contains("JAVA_HOME=" + old + " is not a Java 21 or newer")
                .contains("starting the JVM " + jvms.resolve("current"));
    }

    @Test
    void noJdkAtAllIsExplainedAndCreateReturnsNull(@TempDir Path empty) {
        Run run = passes("expect-null", Map.of("OAM_JAVA_HOME", "", "JAVA_HOME", "", "OAM_JVM_DIRS", empty.toString()));
        assertThat(run.err())
                .contains("no Java 21 or newer was found")
                .contains(empty.toString())
                .contains("OAM_JAVA_HOME");
    }

    @Test
    void anOamJavaHomeOlderThan21IsRefused(@TempDir Path temp) throws IOException {
        Path old = fakeJdk(temp.resolve("old"), "17.0.2");
        Run run = passes("expect-null", Map.of("OAM_JAVA_HOME", old.toString()));
        assertThat(run.err()).contains("OAM_JAVA_HOME=" + old + " is Java 17; the bridge needs Java 21 or newer");
    }

    @Test
    void aMissingClasspathEntryIsExplained() {
        Run run = passes("expect-null", Map.of("OAM_CLASSPATH", "/nonexistent/oam.jar"));
        assertThat(run.err()).contains("OAM_CLASSPATH names /nonexistent/oam.jar, which does not exist");
    }

    @Test
    void theJarIsLookedForNextToTheLibrary(@TempDir Path temp) throws IOException {
        // A copy of the library and the test program without oam.jar beside them (they find each other by rpath).
        Path dir = NativeFiles.dir();
        Files.copy(dir.resolve(NativeFiles.library()), temp.resolve(NativeFiles.library()));
        Path program = Files.copy(dir.resolve("oam-ffi-tests"), temp.resolve("oam-ffi-tests"));
        assertThat(program.toFile().setExecutable(true)).isTrue();
        Run run = NativeFiles.run(
                List.of(program.toString(), "expect-null"), Map.of("OAM_JAVA_HOME", NativeFiles.javaHome()), 60);
        assertThat(run.exit()).as(run.describe()).isZero();
        assertThat(run.err()).contains("there is no " + temp.toRealPath().resolve("oam.jar") + " next to the library");
        // With OAM_CLASSPATH the same copy works.
        run = NativeFiles.run(
                List.of(program.toString(), "ping"),
                Map.of(
                        "OAM_JAVA_HOME",
                        NativeFiles.javaHome(),
                        "OAM_CLASSPATH",
                        dir.resolve("oam.jar").toString()),
                60);
        assertThat(run.exit()).as(run.describe()).isZero();
    }

    @Test
    void aJvmThatFailsToStartIsExplainedAndNotRetried() {
        Run run = passes("failed-jvm-twice", Map.of("OAM_JVM_OPTIONS", "-Xno-such-option"));
        assertThat(run.err()).contains("JNI_CreateJavaVM failed").contains("cannot be started twice");
    }

    @Test
    void aBadSettingFailsCreateWithItsNameUntilFixed() {
        Run run = passes("bad-setting");
        assertThat(run.err()).contains("OAM_BRIDGE_MAX_SESSIONS=zero must be a whole number of at least 1");
    }

    @Test
    void logLevelOffSilencesTheLibrary(@TempDir Path empty) {
        Run run = scenario(
                "expect-null",
                Map.of(
                        "OAM_JAVA_HOME",
                        "",
                        "JAVA_HOME",
                        "",
                        "OAM_JVM_DIRS",
                        empty.toString(),
                        "OAM_BRIDGE_LOG",
                        "off"));
        assertThat(run.exit()).isZero();
        assertThat(run.err()).doesNotContain("oam ffi");
    }

    // ---------------------------------------------------------------- the C example

    @Test
    void theExampleRingsTheBellThroughTheScriptedModel() {
        Run run = NativeFiles.run(
                List.of(NativeFiles.dir().resolve("example").toString()),
                Map.of("OAM_JAVA_HOME", NativeFiles.javaHome()),
                120);
        assertThat(run.exit()).as(run.describe()).isZero();
        assertThat(run.out())
                .startsWith("libOpenAppleModelsFFI 0.1.0\n")
                .contains("model/availability: {\"jsonrpc\":\"2.0\",\"id\":\"local-")
                .contains("\"reason\":\"model_not_ready\"")
                .contains("\"method\":\"tool/call\"")
                .contains("-> {\"jsonrpc\":\"2.0\",\"id\":\"t-1\",\"result\":{\"output\":{\"rang\":true,\"times\":3}}}")
                .contains("\"requestId\":\"turn\"")
                .contains("<- {\"jsonrpc\":\"2.0\",\"id\":\"turn\",\"result\":{\"session\":\"bell\","
                        + "\"text\":\"I rang the bell: {\\\"rang\\\":true,\\\"times\\\":3}\"")
                .endsWith("done\n");
    }

    private static Path fakeJdk(Path home, String version) throws IOException {
        Files.createDirectories(home.resolve("lib/server"));
        Files.writeString(home.resolve("release"), "JAVA_VERSION=\"" + version + "\"\n");
        Files.writeString(home.resolve("lib/server/libjvm.so"), "not a library");
        return home;
    }
}
