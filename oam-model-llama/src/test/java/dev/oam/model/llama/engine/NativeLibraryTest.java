package dev.oam.model.llama.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NativeLibraryTest {
    @Test
    void mapsJavaPlatformNamesToTheBindingsFolders() throws IOException {
        assertThat(NativeLibrary.platform("Linux", "amd64").resource())
                .isEqualTo("de/kherud/llama/Linux/x86_64/libjllama.so");
        assertThat(NativeLibrary.platform("Linux", "aarch64").resource())
                .isEqualTo("de/kherud/llama/Linux/aarch64/libjllama.so");
        assertThat(NativeLibrary.platform("Mac OS X", "aarch64").resource())
                .isEqualTo("de/kherud/llama/Mac/aarch64/libjllama.dylib");
        assertThat(NativeLibrary.platform("Windows 11", "amd64").resource())
                .isEqualTo("de/kherud/llama/Windows/x86_64/jllama.dll");
    }

    @Test
    void unsupportedPlatformsFailWithAMessage() {
        assertThatThrownBy(() -> NativeLibrary.platform("SunOS", "sparcv9"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("not supported on SunOS sparcv9");
        assertThatThrownBy(() -> NativeLibrary.platform("Linux", "riscv64"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("riscv64");
    }

    @Test
    void cacheFolderIsTheEnvironmentsOrUnderTheHomeCache() throws IOException {
        NativeLibrary.Platform linux = NativeLibrary.platform("Linux", "amd64");
        assertThat(NativeLibrary.cacheFolder(null, "/home/u", linux))
                .isEqualTo(Path.of("/home/u/.cache/oam/native/llama-4.2.0-linux-x86_64"));
        assertThat(NativeLibrary.cacheFolder("/opt/oam", "/home/u", linux)).isEqualTo(Path.of("/opt/oam"));
    }

    @Test
    void extractionReusesAnIdenticalCopyReplacesADifferentOneAndLeavesOtherFilesAlone(@TempDir Path folder)
            throws IOException {
        NativeLibrary.Platform platform = NativeLibrary.platform("Linux", "amd64");
        Path neighbour = Files.writeString(folder.resolve("llama-notes.txt"), "keep me");
        Path library = NativeLibrary.extract(platform, folder);
        assertThat(library).isEqualTo(folder.resolve("libjllama.so"));
        long size = Files.size(library);
        assertThat(size).isGreaterThan(1_000_000);

        FileTime old = FileTime.fromMillis(1_000_000);
        Files.setLastModifiedTime(library, old);
        NativeLibrary.extract(platform, folder);
        assertThat(Files.getLastModifiedTime(library))
                .as("an identical copy is reused")
                .isEqualTo(old);

        Files.write(library, new byte[(int) size]); // same size, different bytes
        NativeLibrary.extract(platform, folder);
        assertThat(Files.readAllBytes(library)).isNotEqualTo(new byte[(int) size]);
        assertThat(Files.size(library)).isEqualTo(size);

        assertThat(Files.readString(neighbour)).isEqualTo("keep me");
        try (var files = Files.list(folder)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .containsExactlyInAnyOrder("libjllama.so", "llama-notes.txt");
        }
    }

    @Test
    void aUsersOwnJllamaIsUsedWhereItIsAndNeverOverwritten(@TempDir Path folder) throws IOException {
        NativeLibrary.Platform platform = NativeLibrary.platform("Linux", "amd64");
        Path own = Files.writeString(folder.resolve("libjllama.so"), "a CUDA build of java-llama.cpp 4.2.0, say");
        assertThat(NativeLibrary.suppliedLibrary(own.toString(), platform)).isEqualTo(own);
        assertThat(Files.readString(own)).isEqualTo("a CUDA build of java-llama.cpp 4.2.0, say");
        assertThat(NativeLibrary.suppliedLibrary(null, platform)).isNull();
        Path renamed = Files.writeString(folder.resolve("jllama-cuda.so"), "x");
        org.assertj.core.api.Assertions.assertThatThrownBy(
                        () -> NativeLibrary.suppliedLibrary(renamed.toString(), platform))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("must be called libjllama.so");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> NativeLibrary.suppliedLibrary(
                        folder.resolve("none/libjllama.so").toString(), platform))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("is not a file");
    }

    @Test
    void aMissingLibgompIsNamedInTheMessage() {
        assertThat(NativeLibrary.linkMessage(new UnsatisfiedLinkError("libgomp.so.1: cannot open shared object file")))
                .contains("libgomp1");
    }

    @Test
    void whileTheLibraryLoadsOnlyTheLoadingThreadsPrintsGoToStderr() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream originalErr = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            PrintStream split = NativeLibrary.loaderToStderr(
                    Thread.currentThread(), new PrintStream(out, true, StandardCharsets.UTF_8));
            split.println("from the loader");
            Thread other =
                    Thread.ofPlatform().start(() -> split.println("oam serve: listening on http://127.0.0.1:1976/v1"));
            other.join();
        } finally {
            System.setErr(originalErr);
        }
        assertThat(out.toString(StandardCharsets.UTF_8))
                .isEqualTo("oam serve: listening on http://127.0.0.1:1976/v1\n");
        assertThat(err.toString(StandardCharsets.UTF_8)).isEqualTo("from the loader\n");
    }
}
