package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.StreamCapture;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Only protocol messages reach the real stdout of {@code oam stdio}, whatever else writes to "stdout": Java code,
 * native code writing to fd 1, the JVM's fatal-error banner. The stray writes are made by {@link StrayWriterMain}, a
 * child that runs {@code oam stdio}'s own code path; the launcher's part (environment, native access, crash-report
 * folder) is checked on a real {@code bin/oam stdio} and {@code java -jar oam.jar stdio}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StdoutGuardIT {
    private static final String CREATE = """
            {"jsonrpc":"2.0","id":1,"method":"session/create","params":{"session":"s","model":\
            {"type":"scripted","steps":[{"template":"{prompt}"},{"template":"{prompt}"}]}}}""";

    @BeforeAll
    static void needsTheGuard() {
        // The fd-level guard needs FFM (JDK 22+) and a POSIX system; /proc is used to look at the child.
        assumeThat(Runtime.version().feature() >= 22 && Files.isDirectory(Path.of("/proc/self/fd")))
                .isTrue();
    }

    // ---------------------------------------------------------------- stray writes in a guarded child

    @Test
    void systemOutPrintlnGoesToStderrAndTheProtocolGoesOn(@TempDir Path dir) throws Exception {
        try (Child child = Child.strayWriter(dir)) {
            answersBefore(child);
            child.send("#stray java");
            child.send(respond(3, "after"));
            assertThat(child.awaitResponse(3).path("result").path("text").asText())
                    .isEqualTo("after");
            assertThat(child.finish()).isZero();
            assertThat(child.stdoutLines()).hasSize(3).allSatisfy(StdoutGuardIT::isJsonRpc);
            assertThat(child.stderr()).contains("STRAY-JAVA from System.out");
        }
    }

    @Test
    void nativeWritesToDescriptorOneGoToStderr(@TempDir Path dir) throws Exception {
        try (Child child = Child.strayWriter(dir)) {
            answersBefore(child);
            child.send("#stray native");
            child.send(respond(3, "after"));
            assertThat(child.awaitResponse(3).path("result").path("text").asText())
                    .isEqualTo("after");
            assertThat(child.finish()).isZero();
            assertThat(child.stdoutLines()).hasSize(3).allSatisfy(StdoutGuardIT::isJsonRpc);
            assertThat(child.stderr()).contains("STRAY-NATIVE from write(1)");
        }
    }

    @Test
    void withoutTheGuardANativeWriteWouldCorruptStdout(@TempDir Path dir) throws Exception {
        // The control: what the two tests above would see if the guard did nothing.
        try (Child child = Child.strayWriter(dir, "--unguarded")) {
            answersBefore(child);
            child.send("#stray native");
            child.send(respond(3, "after"));
            child.awaitResponse(3);
            assertThat(child.finish()).isZero();
            assertThat(child.stdoutLines()).contains("STRAY-NATIVE from write(1)");
        }
    }

    @Test
    void aJvmCrashLeavesOnlyTheAnswersOnStdoutAndItsReportInTheErrorFileFolder(@TempDir Path dir) throws Exception {
        Path reports = Files.createDirectories(dir.resolve("reports"));
        try (Child child = Child.strayWriter(dir, "-XX:ErrorFile=" + reports.resolve("hs_err_pid%p.log"))) {
            answersBefore(child);
            child.send("#stray crash");
            assertThat(child.finish()).isNotZero();
            assertThat(child.stdoutLines()).hasSize(2).allSatisfy(StdoutGuardIT::isJsonRpc);
            assertThat(child.stderr()).contains("A fatal error has been detected by the Java Runtime Environment");
        }
        try (Stream<Path> files = Files.list(reports)) {
            assertThat(files.map(p -> p.getFileName().toString())).anyMatch(name -> name.startsWith("hs_err_pid"));
        }
        try (Stream<Path> files = Files.list(dir.resolve("cwd"))) {
            assertThat(files).as("nothing in the working directory").isEmpty();
        }
    }

    @Test
    void ggmlBacktracesAreSwitchedOffInProcessUnlessTheUserChose(@TempDir Path dir) throws Exception {
        // Covers `java -jar oam.jar stdio`, which has no launcher to export the variable.
        try (Child child = Child.strayWriter(dir)) {
            answersBefore(child);
            child.send("#stray env");
            child.send(respond(3, "after"));
            child.awaitResponse(3);
            assertThat(child.finish()).isZero();
            assertThat(child.stderr()).contains("GGML_NO_BACKTRACE=1");
        }
        try (Child child = Child.start(Child.strayWriterCommand(), dir, Map.of("GGML_NO_BACKTRACE", "mine"))) {
            answersBefore(child);
            child.send("#stray env");
            child.send(respond(3, "after"));
            child.awaitResponse(3);
            assertThat(child.finish()).isZero();
            assertThat(child.stderr()).contains("GGML_NO_BACKTRACE=mine");
        }
    }

    // ---------------------------------------------------------------- the real launcher and jar

    @Test
    void binOamStdioRunsGuardedWithNativeAccessNoBacktracesAndAPrivateCrashFolder(@TempDir Path dir) throws Exception {
        Path cache = dir.resolve("cache");
        List<String> command = List.of(Transports.launcher().toString(), "stdio");
        try (Child child = Child.start(command, dir, Map.of("XDG_CACHE_HOME", cache.toString()))) {
            answersBefore(child);
            long pid = child.process.pid(); // bin/oam execs java: the same process
            assertThat(environment(pid)).contains("GGML_NO_BACKTRACE=1");
            assertThat(commandLine(pid))
                    .contains("--enable-native-access=ALL-UNNAMED")
                    .contains("-XX:ErrorFile=" + cache.resolve("oam/hs_err_pid%p.log"));
            assertThat(cache.resolve("oam")).isDirectory();
            assertThatDescriptorOneIsStderr(pid);
            assertThat(child.finish()).isZero();
            assertThat(child.stdoutLines()).hasSize(2).allSatisfy(StdoutGuardIT::isJsonRpc);
            // The guard used FFM's restricted methods: with native access enabled that is silent.
            assertThat(child.stderr()).doesNotContain("restricted method");
        }
    }

    @Test
    void binOamKeepsAGgmlNoBacktraceTheUserSet(@TempDir Path dir) throws Exception {
        List<String> command = List.of(Transports.launcher().toString(), "stdio");
        try (Child child = Child.start(command, dir, Map.of("GGML_NO_BACKTRACE", "mine"))) {
            answersBefore(child);
            assertThat(environment(child.process.pid()))
                    .contains("GGML_NO_BACKTRACE=mine")
                    .doesNotContain("GGML_NO_BACKTRACE=1");
            assertThat(child.finish()).isZero();
        }
    }

    @Test
    void javaDashJarEnablesNativeAccessThroughItsManifest(@TempDir Path dir) throws Exception {
        Path jar = Transports.launcher().getParent().getParent().resolve("oam-cli/target/oam.jar");
        List<String> command = List.of(javaBinary(), "-jar", jar.toString(), "stdio");
        try (Child child = Child.start(command, dir, Map.of())) {
            answersBefore(child);
            assertThatDescriptorOneIsStderr(child.process.pid());
            assertThat(child.finish()).isZero();
            assertThat(child.stdoutLines()).hasSize(2).allSatisfy(StdoutGuardIT::isJsonRpc);
            assertThat(child.stderr()).doesNotContain("restricted method");
        }
    }

    @Test
    void stdoutOnAFileKeepsOneOffsetWithWhatTheShellWritesAfterwards(@TempDir Path dir) throws Exception {
        // The protocol must go through the same open file description as fd 1 had, not a reopened one.
        Path out = dir.resolve("out.log");
        String ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        ProcessBuilder builder = new ProcessBuilder("sh", "-c", "printf '%s\\n' \"$PING\" | \"$OAM\" stdio; echo done");
        builder.environment().put("PING", ping);
        builder.environment().put("OAM", Transports.launcher().toString());
        builder.redirectOutput(out.toFile());
        builder.redirectError(dir.resolve("err.log").toFile());
        Process process = builder.start();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue())
                .as(Files.readString(dir.resolve("err.log")))
                .isZero();
        List<String> lines = Files.readAllLines(out);
        assertThat(lines).hasSize(2);
        assertThat(Json.parse(lines.get(0)).path("id").asInt()).isEqualTo(1);
        assertThat(lines.get(1)).isEqualTo("done");
    }

    // ---------------------------------------------------------------- helpers

    /** Requests 1 and 2 answered before anything stray happens. */
    private static void answersBefore(Child child) throws Exception {
        child.send(CREATE);
        assertThat(child.awaitResponse(1).has("result")).as(child.stderr()).isTrue();
        child.send(respond(2, "before"));
        assertThat(child.awaitResponse(2).path("result").path("text").asText())
                .as(child.stderr())
                .isEqualTo("before");
    }

    private static String respond(int id, String prompt) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id
                + ",\"method\":\"session/respond\",\"params\":{\"session\":\"s\",\"prompt\":\"" + prompt + "\"}}";
    }

    private static void isJsonRpc(String line) {
        JsonNode node;
        try {
            node = Json.parse(line);
        } catch (IOException e) {
            throw new AssertionError("not JSON on stdout: " + line, e);
        }
        assertThat(node.isObject()).as(line).isTrue();
        assertThat(node.path("jsonrpc").asText()).as(line).isEqualTo("2.0");
    }

    private static void assertThatDescriptorOneIsStderr(long pid) throws IOException {
        Path fds = Path.of("/proc/" + pid + "/fd");
        assertThat(Files.readSymbolicLink(fds.resolve("1")))
                .as("fd 1 of the child")
                .isEqualTo(Files.readSymbolicLink(fds.resolve("2")));
    }

    private static List<String> environment(long pid) throws IOException {
        return List.of(new String(Files.readAllBytes(Path.of("/proc/" + pid + "/environ")), StandardCharsets.UTF_8)
                .split("\0"));
    }

    private static List<String> commandLine(long pid) throws IOException {
        return List.of(new String(Files.readAllBytes(Path.of("/proc/" + pid + "/cmdline")), StandardCharsets.UTF_8)
                .split("\0"));
    }

    private static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /** A child process with its stdout lines and stderr kept. */
    private static final class Child implements AutoCloseable {
        final Process process;
        private final OutputStream stdin;
        private final LinkedBlockingQueue<JsonNode> responses = new LinkedBlockingQueue<>();
        private final List<String> stdoutLines = new CopyOnWriteArrayList<>();
        private final StreamCapture stderr;
        private final Thread outReader;

        private Child(Process process) {
            this.process = process;
            this.stdin = process.getOutputStream();
            outReader = Thread.ofPlatform().daemon().start(this::readStdout);
            stderr = StreamCapture.start(process.getErrorStream(), "stray-writer-err");
        }

        static List<String> strayWriterCommand(String... extra) {
            List<String> command = new ArrayList<>(List.of(
                    javaBinary(),
                    "--enable-native-access=ALL-UNNAMED",
                    "-XX:-CreateCoredumpOnCrash",
                    "-cp",
                    System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"))));
            List<String> jvmOptions =
                    Stream.of(extra).filter(a -> a.startsWith("-XX:")).toList();
            command.addAll(jvmOptions);
            command.add(StrayWriterMain.class.getName());
            command.addAll(Stream.of(extra).filter(a -> !a.startsWith("-XX:")).toList());
            return command;
        }

        static Child strayWriter(Path dir, String... extra) throws IOException {
            return start(strayWriterCommand(extra), dir, Map.of());
        }

        static Child start(List<String> command, Path dir, Map<String, String> env) throws IOException {
            ProcessBuilder builder = new ProcessBuilder(command);
            builder.directory(Files.createDirectories(dir.resolve("cwd")).toFile());
            builder.environment().remove("GGML_NO_BACKTRACE");
            builder.environment().putAll(env);
            return new Child(builder.start());
        }

        void send(String line) throws IOException {
            stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        }

        JsonNode awaitResponse(int id) throws InterruptedException {
            while (true) {
                JsonNode message = responses.poll(60, TimeUnit.SECONDS);
                assertThat(message).as("response %d; stderr:\n%s", id, stderr()).isNotNull();
                if (message.path("id").asInt(-1) == id && !message.has("method")) {
                    return message;
                }
            }
        }

        /** Ends the input, waits for the exit and for both streams to be read to their end. */
        int finish() throws Exception {
            try {
                stdin.close();
            } catch (IOException e) {
                // it has gone already (the crash)
            }
            assertThat(process.waitFor(60, TimeUnit.SECONDS))
                    .as("exits; stderr:\n%s", stderr())
                    .isTrue();
            outReader.join();
            stderr.join();
            return process.exitValue();
        }

        List<String> stdoutLines() {
            return stdoutLines;
        }

        String stderr() {
            return stderr.text();
        }

        private void readStdout() {
            try (BufferedReader reader =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    stdoutLines.add(line);
                    try {
                        responses.add(Json.parse(line));
                    } catch (IOException e) {
                        // not JSON: kept in stdoutLines for the assertions
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }
}
