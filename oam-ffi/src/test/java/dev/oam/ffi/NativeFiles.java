package dev.oam.ffi;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Where the build put the native library, its jar and the C test programs; running them. */
final class NativeFiles {
    private NativeFiles() {}

    /** {@code oam-ffi/target/native}: libOpenAppleModelsFFI, oam.jar, oam-ffi-host, oam-ffi-tests, example. */
    static Path dir() {
        Path dir = Path.of(System.getProperty("oam.native.dir", "target/native"))
                .toAbsolutePath()
                .normalize();
        if (!Files.isRegularFile(dir.resolve("oam.jar")) || !Files.isRegularFile(dir.resolve(library()))) {
            throw new IllegalStateException("the native build is missing under " + dir + " (run mvn verify)");
        }
        return dir;
    }

    static Path repositoryRoot() {
        return Path.of(System.getProperty("oam.root", "..")).toAbsolutePath().normalize();
    }

    static String library() {
        String os = System.getProperty("os.name").toLowerCase(java.util.Locale.ROOT);
        return os.contains("mac")
                ? "libOpenAppleModelsFFI.dylib"
                : os.contains("win") ? "OpenAppleModelsFFI.dll" : "libOpenAppleModelsFFI.so";
    }

    /** The JDK running the tests (21 or newer, like every JDK that builds this project). */
    static String javaHome() {
        return System.getProperty("java.home");
    }

    record Run(int exit, String out, String err) {
        String describe() {
            return "exit " + exit + "\n--- stdout:\n" + out + "\n--- stderr:\n" + err;
        }
    }

    /**
     * Runs a program to its end (at most {@code timeoutSeconds}) with these environment changes ({@code null} values
     * remove a variable), capturing both streams.
     */
    static Run run(List<String> command, Map<String, String> env, long timeoutSeconds) {
        ProcessBuilder builder = new ProcessBuilder(command);
        env.forEach((name, value) -> {
            if (value == null) {
                builder.environment().remove(name);
            } else {
                builder.environment().put(name, value);
            }
        });
        builder.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        try {
            Process process = builder.start();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            Thread outReader = Thread.ofPlatform().start(() -> copy(process.getInputStream(), out));
            Thread errReader = Thread.ofPlatform().start(() -> copy(process.getErrorStream(), err));
            if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor();
            }
            outReader.join();
            errReader.join();
            return new Run(
                    process.exitValue(), out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try {
            in.transferTo(out);
        } catch (IOException e) {
            // the process ended
        }
    }
}
