package dev.oam.model.llama.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The platform natives artifact (dev.oam:oam-llama-natives with a classifier per platform): found on the class path,
 * extracted once into the cache with every file checked against its SHA-256, and then a bundle like an archive's.
 */
class ClassPathNativesTest {
    private static final String RECORD = "source=node-llama-cpp-linux-x64-vulkan-3.22.1.tgz\nsha256="
            + "e10577190fc4bd1649d3b655588e5c7a85fc6b6dbf7136fee596cbe9e25521e7\nbackend=vulkan\n"
            + "library=libllama.vulkan.v0.5.0.so\n";

    @TempDir
    Path dir;

    private static String sha256(byte[] bytes) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    }

    /** A class path root holding dev/oam/llama/natives/linux-x86_64/ with two files, one listed with {@code sum}. */
    private ClassLoader natives(String sumOfLibrary) throws Exception {
        Path folder =
                Files.createDirectories(dir.resolve("jar").resolve(ClassPathNatives.resourceFolder("linux-x86_64")));
        byte[] library = "a library".getBytes(StandardCharsets.UTF_8);
        byte[] base = "its ggml".getBytes(StandardCharsets.UTF_8);
        Files.write(folder.resolve("libllama.vulkan.v0.5.0.so"), library);
        Files.write(folder.resolve("libggml-base.so"), base);
        Files.writeString(folder.resolve(LlamaBuilds.RECORD), RECORD);
        Files.writeString(
                folder.resolve(ClassPathNatives.FILES),
                (sumOfLibrary != null ? sumOfLibrary : sha256(library)) + "  libllama.vulkan.v0.5.0.so\n"
                        + sha256(base) + "  libggml-base.so\n"
                        + sha256(RECORD.getBytes(StandardCharsets.UTF_8)) + "  " + LlamaBuilds.RECORD + "\n");
        return new URLClassLoader(new URL[] {dir.resolve("jar").toUri().toURL()}, null);
    }

    @Test
    void theNativesAreExtractedOnceCheckedAndReadAsABundle() throws Exception {
        ClassLoader loader = natives(null);
        Path cache = dir.resolve("cache");
        Path extracted = ClassPathNatives.extract(loader, "linux-x86_64", cache);
        assertThat(extracted.getFileName().toString()).startsWith("llama-linux-x86_64-");
        assertThat(extracted.resolve("libggml-base.so")).hasContent("its ggml");
        LlamaBuilds.Build build = LlamaBuilds.readBundle(extracted);
        assertThat(build.library()).isEqualTo(extracted.resolve("libllama.vulkan.v0.5.0.so"));
        assertThat(build.backend()).isEqualTo("vulkan");
        // the second time: the folder that is there, nothing written again
        Files.writeString(extracted.resolve("marker"), "kept");
        assertThat(ClassPathNatives.extract(loader, "linux-x86_64", cache)).isEqualTo(extracted);
        assertThat(extracted.resolve("marker")).exists();
        try (var left = Files.list(cache)) {
            assertThat(left).containsExactly(extracted);
        }
        assertThat(ClassPathNatives.extract(loader, "windows-x86_64", cache)).isNull();
        // a file damaged after the extraction is found at the next load, not handed to the dynamic loader
        Files.writeString(extracted.resolve("libggml-base.so"), "its ggml, cut");
        assertThatThrownBy(() -> LlamaBuilds.readBundle(extracted))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("libggml-base.so has SHA-256");
    }

    @Test
    void aFileThatDoesNotMatchItsSha256IsRefusedAndNothingIsLeftBehind() throws Exception {
        ClassLoader loader = natives("00".repeat(32));
        Path cache = dir.resolve("cache");
        assertThatThrownBy(() -> ClassPathNatives.extract(loader, "linux-x86_64", cache))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("libllama.vulkan.v0.5.0.so has SHA-256")
                .hasMessageContaining("corrupt");
        try (var left = Files.list(cache)) {
            assertThat(left).isEmpty();
        }
    }

    @Test
    void platformsAreNamedAsTheClassifiers() {
        assertThat(ClassPathNatives.platform("Linux", "amd64")).isEqualTo("linux-x86_64");
        assertThat(ClassPathNatives.platform("Windows 11", "amd64")).isEqualTo("windows-x86_64");
        assertThat(ClassPathNatives.platform("Mac OS X", "aarch64")).isEqualTo("macos-arm64");
        assertThat(ClassPathNatives.platform("Mac OS X", "x86_64")).isEqualTo("macos-x86_64");
        assertThat(ClassPathNatives.platform("Linux", "aarch64")).isEqualTo("linux-aarch64");
        assertThat(ClassPathNatives.platform("FreeBSD", "amd64")).isNull();
        assertThat(ClassPathNatives.platform("Linux", "riscv64")).isNull();
    }
}
