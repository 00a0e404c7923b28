package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The launcher finds a JDK ≥ 21 itself and says clearly when there is none, never on stdout. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LauncherIT {
    record Run(int exit, String out, String err) {}

    private static Run run(Map<String, String> env, String... args) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder();
        builder.command(new java.util.ArrayList<>(List.of(Transports.launcher().toString())));
        builder.command().addAll(List.of(args));
        builder.environment().putAll(env);
        builder.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        Process process = builder.start();
        byte[] out = process.getInputStream().readAllBytes();
        byte[] err = process.getErrorStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Run(
                process.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }

    @Test
    void aJavaHomeOlderThan21IsSkippedForANewerJdk(@TempDir Path fake) throws Exception {
        Path oldJdk = fake.resolve("old-jdk");
        Files.createDirectories(oldJdk.resolve("bin"));
        Files.writeString(oldJdk.resolve("release"), "JAVA_VERSION=\"17.0.2\"\n");
        Path java = oldJdk.resolve("bin/java");
        Files.writeString(java, "#!/bin/sh\necho 'this JDK must not be used' >&2\nexit 3\n");
        java.toFile().setExecutable(true);
        Run run = run(Map.of("JAVA_HOME", oldJdk.toString()), "--version");
        assertThat(run.exit()).as(run.err()).isEqualTo(0);
        assertThat(run.err()).contains("oam 0.1.0");
        assertThat(run.out()).isEmpty();
    }

    @Test
    void noJdkAtAllIsExplainedOnStderr(@TempDir Path empty) throws Exception {
        Run run = run(Map.of("JAVA_HOME", "", "OAM_JVM_DIRS", empty.toString()), "stdio");
        assertThat(run.exit()).isEqualTo(1);
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).contains("no JDK 21 or newer was found").contains("JAVA_HOME");
    }

    /**
     * A release-like tree (bin/oam beside lib/oam.jar) whose AOT cache is newer than the jar but unusable: bin/oam
     * passes it (on JDK 25+), the JVM cannot map it and starts without it, and says so neither on stdout, which stays
     * the protocol's, nor on stderr.
     */
    @Test
    void anAotCacheTheJvmCannotUseIsSkippedWithoutAWord(@TempDir Path tree) throws Exception {
        Path root = Transports.launcher().getParent().getParent();
        Files.createDirectories(tree.resolve("bin/lib"));
        Files.createDirectories(tree.resolve("lib"));
        Files.copy(root.resolve("bin/oam"), tree.resolve("bin/oam"));
        Files.copy(root.resolve("bin/lib/jdk.sh"), tree.resolve("bin/lib/jdk.sh"));
        Files.copy(root.resolve("oam-cli/target/oam.jar"), tree.resolve("lib/oam.jar"));
        Path cache = Files.writeString(tree.resolve("lib/oam.aot"), "not an AOT cache");
        Files.setLastModifiedTime(
                cache,
                java.nio.file.attribute.FileTime.fromMillis(
                        Files.getLastModifiedTime(tree.resolve("lib/oam.jar")).toMillis() + 60_000));
        Path input = Files.writeString(
                tree.resolve("input.jsonl"),
                "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
                        + "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"shutdown\"}\n");
        ProcessBuilder builder = new ProcessBuilder(tree.resolve("bin/oam").toString(), "stdio", "--model", "none");
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.redirectInput(input.toFile());
        Process process = builder.start();
        byte[] out = process.getInputStream().readAllBytes();
        byte[] err = process.getErrorStream().readAllBytes();
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();

        String stderr = new String(err, StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as(stderr).isZero();
        assertThat(new String(out, StandardCharsets.UTF_8))
                .isEqualTo(
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n");
        assertThat(stderr).doesNotContain("[aot]").doesNotContain("[cds]").doesNotContain("AOT");
    }

    @Test
    void aSystemModelWithoutABackendIsRefusedClearly() throws Exception {
        Run run = run(Map.of(), "stdio", "--model", "/models/none.gguf");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.out()).isEmpty();
        assertThat(run.err()).contains("/models/none.gguf");
    }
}
