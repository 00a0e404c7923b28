package dev.oam.model.llama.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.core.model.pull.NpmRuntime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CUDA runtime a pull placed is used only when its record names the pinned package for this platform, of the same
 * node-llama-cpp release as the llama.cpp it joins, and every file matches its SHA-256.
 */
class CudaRuntimeTest {
    private static final NpmRuntime LINUX = NpmRuntime.KNOWN.get(0);
    private static final LlamaBuilds.Build BUNDLE = new LlamaBuilds.Build(
            Path.of("/r/lib/llama/libllama.vulkan.v0.5.0.so"),
            "node-llama-cpp-linux-x64-vulkan-3.22.1.tgz",
            "vulkan",
            1);

    @TempDir
    Path dir;

    private Path runtime(String sha256) throws IOException {
        Path folder = Files.createDirectories(dir.resolve("runtime").resolve(LINUX.folderName()));
        Files.writeString(folder.resolve("libggml-cuda.so"), "the CUDA module");
        Files.writeString(folder.resolve("LICENSE"), "MIT");
        Files.writeString(
                folder.resolve(LlamaBuilds.RECORD),
                "source=" + LINUX.tarballName() + "\nsha256=" + sha256 + "\nbackend=cuda\nlibrary=libggml-cuda.so\n");
        Files.writeString(
                folder.resolve(NativeFiles.FILES),
                NativeFiles.sha256(folder.resolve("libggml-cuda.so")) + "  libggml-cuda.so\n"
                        + NativeFiles.sha256(folder.resolve("LICENSE")) + "  LICENSE\n");
        return folder;
    }

    @Test
    void thePinnedRuntimeOfTheBundlesReleaseIsUsed() throws IOException {
        Path folder = runtime(LINUX.sha256());
        CudaRuntime.Checked checked = CudaRuntime.checkWithFiles(folder, BUNDLE, "linux-x86_64");
        assertThat(checked.module()).isEqualTo(folder.resolve("libggml-cuda.so"));
        assertThat(checked.npmPackage()).isEqualTo("@node-llama-cpp/linux-x64-cuda@3.22.1");
        assertThat(checked.needs()).contains("libcuda.so.1", "libcudart.so.13", "libcublas.so.13");
    }

    @Test
    void anUnpinnedPackageAnotherReleaseOrATamperedModuleIsRefusedWithTheReason() throws IOException {
        Path folder = runtime("00".repeat(32));
        assertThatThrownBy(() -> CudaRuntime.check(folder, BUNDLE, "linux-x86_64"))
                .hasMessageContaining("not the CUDA package this build pins for linux-x86_64");
        Path pinned = runtime(LINUX.sha256());
        assertThatThrownBy(() -> CudaRuntime.check(pinned, BUNDLE, "windows-x86_64"))
                .hasMessageContaining("pins for windows-x86_64");
        LlamaBuilds.Build older =
                new LlamaBuilds.Build(Path.of("/r/libllama.so"), "node-llama-cpp-linux-x64-3.21.1.tgz", "cpu", 1);
        assertThatThrownBy(() -> CudaRuntime.check(pinned, older, "linux-x86_64"))
                .hasMessageContaining("loads only into that release's llama.cpp");
        LlamaBuilds.Build built =
                new LlamaBuilds.Build(Path.of("/c/libllama.so"), "llama_cpp_python-0.3.36.tar.gz", "cpu", 3);
        assertThatThrownBy(() -> CudaRuntime.check(pinned, built, "linux-x86_64"))
                .hasMessageContaining("loads only into that release's llama.cpp");
        Files.writeString(pinned.resolve("libggml-cuda.so"), "the CUDA mod");
        assertThatThrownBy(() -> CudaRuntime.checkWithFiles(pinned, BUNDLE, "linux-x86_64"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("libggml-cuda.so has SHA-256");
    }
}
