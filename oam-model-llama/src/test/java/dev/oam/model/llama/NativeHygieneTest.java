package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.testing.gguf.TinyGguf;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Loading llama.cpp in a fresh JVM (a child process, so nothing else loaded it first): the library goes to the private
 * folder, nothing named {@code llama*} in {@code java.io.tmpdir} is created or deleted, and nothing at all reaches
 * standard output.
 */
@Timeout(120)
class NativeHygieneTest {
    @Test
    void loadingLeavesTheTemporaryFolderAndStandardOutputAlone() throws Exception {
        assertThat(probe("host-value")).contains("GGML_NO_BACKTRACE before: host-value, after: host-value");
    }

    /** A host other than oam stdio and the C library (a game's own JVM): the backend sets it before ggml is loaded. */
    @Test
    void loadingSetsGgmlNoBacktraceWhenTheHostDidNot() throws Exception {
        assertThat(probe(null)).contains("GGML_NO_BACKTRACE before: <unset>, after: 1");
    }

    /** Runs the probe with this GGML_NO_BACKTRACE (null: unset) and checks the hygiene; returns its stderr. */
    private static String probe(String ggmlNoBacktrace) throws Exception {
        Path work = Files.createDirectories(TinyEngines.MODELS.resolve("hygiene-" + UUID.randomUUID()));
        Path model = TinyEngines.MODELS.resolve("tiny-hygiene.gguf");
        TinyGguf.tiny().write(model);
        Path tmp = Files.createDirectories(work.resolve("tmpdir"));
        Path canary = Files.writeString(tmp.resolve("llama-precious-" + UUID.randomUUID() + ".txt"), "precious");
        Files.writeString(tmp.resolve("jllama-notes.txt"), "notes");
        Files.createDirectories(tmp.resolve("llamadir"));
        List<String> before = list(tmp);
        Path nativeDir = work.resolve("native");

        ProcessBuilder builder = new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-Djava.io.tmpdir=" + tmp,
                "-cp",
                System.getProperty("java.class.path"),
                NativeHygieneProbe.class.getName(),
                model.toString());
        builder.environment().put("OAM_NATIVE_DIR", nativeDir.toString());
        if (ggmlNoBacktrace == null) {
            builder.environment().remove("GGML_NO_BACKTRACE");
        } else {
            builder.environment().put("GGML_NO_BACKTRACE", ggmlNoBacktrace);
        }
        builder.redirectOutput(work.resolve("stdout").toFile())
                .redirectError(work.resolve("stderr").toFile());
        Process child = builder.start();
        assertThat(child.waitFor(90, TimeUnit.SECONDS)).isTrue();
        String stderr = Files.readString(work.resolve("stderr"), StandardCharsets.UTF_8);
        assertThat(child.exitValue()).as(stderr).isZero();
        assertThat(stderr).contains("generated").contains(nativeDir.toString());

        assertThat(Files.readString(work.resolve("stdout")))
                .as("standard output")
                .isEmpty();
        assertThat(list(tmp)).isEqualTo(before);
        assertThat(Files.readString(canary)).isEqualTo("precious");
        assertThat(list(nativeDir)).containsExactly("libjllama.so", "tmp");
        assertThat(list(nativeDir.resolve("tmp"))).isEmpty();
        return stderr;
    }

    private static List<String> list(Path folder) throws IOException {
        try (Stream<Path> files = Files.list(folder)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList();
        }
    }
}
