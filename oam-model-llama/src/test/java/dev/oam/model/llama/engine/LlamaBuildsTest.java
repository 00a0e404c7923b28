package dev.oam.model.llama.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.core.Environment;
import dev.oam.model.llama.Architectures;
import dev.oam.model.llama.EngineChoice;
import dev.oam.model.llama.LlamaSettings;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Where the FFM engine finds the project-built llama.cpp when nothing names a library, which builds it accepts (a
 * family verified by struct layouts, any backend), and which llama.cpp a model would run on, decided at
 * {@code session/create} without loading anything.
 */
class LlamaBuildsTest {
    private static final String SOURCE = "llama_cpp_python-0.3.36.tar.gz";
    private static final String SHA = LlamaBuilds.VERIFIED.get(SOURCE);

    @TempDir
    Path cache;

    private Path build(String folder, String record) throws IOException {
        Path lib = Files.createDirectories(
                cache.resolve("llama-cpp").resolve(folder).resolve("lib"));
        Files.writeString(lib.resolve("libllama.so"), "not loaded by these tests");
        if (record != null) {
            Files.writeString(lib.resolve(LlamaBuilds.RECORD), record);
        }
        return lib.resolve("libllama.so");
    }

    /** The natives an entry point reads from {@code values}, on a JVM whose home is {@code /home/u}. */
    private static NativeSettings env(Map<String, String> values) {
        return LlamaSettings.read(Environment.of(values, Map.of("user.home", "/home/u")))
                .natives();
    }

    @Test
    void aVerifiedBuildIsFoundCpuFirstUnlessGpuLayersAreAskedThenTheNewestRecipe() throws IOException {
        Path cpu2 = build("0.3.36-r2", "source=" + SOURCE + "\nsha256=" + SHA + "\nrecipe=2\n");
        Path cpu3 = build("0.3.36-r3", "source=" + SOURCE + "\nsha256=" + SHA + "\nrecipe=3\n");
        build("0.3.35-r3", "source=llama_cpp_python-0.3.35.tar.gz\nsha256=00\nrecipe=3\n");
        build("0.3.36-r9", null);
        NativeSettings env = env(Map.of("OAM_CACHE_DIR", cache.toString()));
        assertThat(LlamaBuilds.preferred(env).library()).isEqualTo(cpu3);
        assertThat(LlamaBuilds.found(LlamaBuilds.folder(env), false))
                .extracting(LlamaBuilds.Build::library)
                .containsExactly(cpu3, cpu2);
        Path vulkan =
                build("0.3.36-r4-vulkan", "source=" + SOURCE + "\nsha256=" + SHA + "\nrecipe=4\nbackend=vulkan\n");
        assertThat(LlamaBuilds.preferred(env).library()).isEqualTo(cpu3);
        assertThat(LlamaBuilds.preferred(env(Map.of("OAM_CACHE_DIR", cache.toString(), "OAM_LLAMA_GPU_LAYERS", "0")))
                        .library())
                .isEqualTo(cpu3);
        LlamaBuilds.Build preferred =
                LlamaBuilds.preferred(env(Map.of("OAM_CACHE_DIR", cache.toString(), "OAM_LLAMA_GPU_LAYERS", "-1")));
        assertThat(preferred.library()).isEqualTo(vulkan);
        assertThat(preferred.backend()).isEqualTo("vulkan");
        // a value that is not a layer count is the default (no count named), as on both backends: the CPU build first
        // (before, any value but 0 put the GPU builds first here, while the engines warned and took the default)
        assertThat(LlamaBuilds.preferred(env(Map.of("OAM_CACHE_DIR", cache.toString(), "OAM_LLAMA_GPU_LAYERS", "lots")))
                        .library())
                .isEqualTo(cpu3);
        assertThat(preferred.describe()).contains("llama-cpp-python 0.3.36's llama.cpp, vulkan build");
    }

    @Test
    void nodeLlamaCppsVulkanBuildIsInTheVerifiedFamily() throws IOException {
        Path library = build(
                "node-llama-cpp-3.22.1-vulkan",
                "source=node-llama-cpp-linux-x64-vulkan-3.22.1.tgz\nsha256="
                        + "e10577190fc4bd1649d3b655588e5c7a85fc6b6dbf7136fee596cbe9e25521e7\nrecipe=1\nbackend=vulkan\n");
        LlamaBuilds.Build build = LlamaBuilds.read(library);
        assertThat(build.backend()).isEqualTo("vulkan");
        assertThat(build.describe()).startsWith("node-llama-cpp-linux-x64-vulkan-3.22.1's llama.cpp, vulkan build");
    }

    @Test
    void theCacheFolderFollowsTheScriptsVariables() {
        assertThat(LlamaBuilds.folder(env(Map.of("OAM_CACHE_DIR", "/c")))).isEqualTo(Path.of("/c/llama-cpp"));
        assertThat(LlamaBuilds.folder(env(Map.of("XDG_CACHE_HOME", "/x")))).isEqualTo(Path.of("/x/oam/llama-cpp"));
        assertThat(LlamaBuilds.folder(env(Map.of()))).isEqualTo(Path.of("/home/u/.cache/oam/llama-cpp"));
        assertThat(LlamaBuilds.preferred(
                        env(Map.of("OAM_CACHE_DIR", cache.resolve("empty").toString()))))
                .isNull();
    }

    @Test
    void aRecordNamingAnUnverifiedSourceIsRefusedWithTheReason() throws IOException {
        Path library = build("other", "source=llama_cpp_python-0.3.35.tar.gz\nsha256=00\n");
        assertThatThrownBy(() -> LlamaBuilds.read(library))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(
                        "names llama_cpp_python-0.3.35.tar.gz (00), not one of the sources whose struct layouts"
                                + " are verified (" + SOURCE + ", node-llama-cpp-")
                .hasMessageContaining("node-llama-cpp-win-x64-vulkan-3.21.1.tgz");
    }

    private static final String LINUX_BUNDLE = "source=node-llama-cpp-linux-x64-vulkan-3.22.1.tgz\nsha256="
            + "e10577190fc4bd1649d3b655588e5c7a85fc6b6dbf7136fee596cbe9e25521e7\nrecipe=1\nbackend=vulkan\n";

    /** A release's lib/llama: the libraries and a record naming the one to load. */
    private Path bundle(String record, String library) throws IOException {
        Path folder =
                Files.createDirectories(cache.resolve("release").resolve("lib").resolve("llama"));
        Files.writeString(folder.resolve(library), "not loaded by these tests");
        Files.writeString(folder.resolve(LlamaBuilds.RECORD), record);
        Files.writeString(
                folder.resolve(NativeFiles.FILES),
                NativeFiles.sha256(folder.resolve(library)) + "  " + library + "\n"
                        + NativeFiles.sha256(folder.resolve(LlamaBuilds.RECORD)) + "  " + LlamaBuilds.RECORD + "\n");
        return folder;
    }

    @Test
    void aReleasesLlamaCppWinsOverTheCacheUnlessABackendItLacksIsForcedAndABuildOfItExists() throws IOException {
        Path folder = bundle(LINUX_BUNDLE + "library=libllama.vulkan.v0.5.0.so\n", "libllama.vulkan.v0.5.0.so");
        Path cpu = build("0.3.36-r3", "source=" + SOURCE + "\nsha256=" + SHA + "\nrecipe=3\n");
        Map<String, String> base = Map.of("OAM_CACHE_DIR", cache.toString(), "OAM_LLAMA_BUNDLE", folder.toString());
        LlamaBuilds.Build chosen = LlamaBuilds.preferred(env(base));
        assertThat(chosen.library()).isEqualTo(folder.resolve("libllama.vulkan.v0.5.0.so"));
        assertThat(chosen.backend()).isEqualTo("vulkan");
        assertThat(chosen.describe()).startsWith("node-llama-cpp-linux-x64-vulkan-3.22.1's llama.cpp, vulkan build");
        // a forced backend takes a build of that backend where one exists (the CPU build of the cache) ...
        Map<String, String> cpuForced = new java.util.HashMap<>(base);
        cpuForced.put("OAM_LLAMA_BACKEND", "CPU");
        assertThat(LlamaBuilds.preferred(env(cpuForced)).library()).isEqualTo(cpu);
        // ... else the bundle (whose Vulkan build loads only its CPU module when cpu is forced)
        Map<String, String> cudaForced = new java.util.HashMap<>(base);
        cudaForced.put("OAM_LLAMA_BACKEND", "cuda");
        assertThat(LlamaBuilds.preferred(env(cudaForced)).library())
                .isEqualTo(folder.resolve("libllama.vulkan.v0.5.0.so"));
        assertThat(env(Map.of("OAM_LLAMA_BACKEND", "opencl")).backend()).isEqualTo("auto");
        assertThat(env(Map.of()).backend()).isEqualTo("auto");
        assertThat(env(Map.of("OAM_LLAMA_BACKEND", " Vulkan ")).backend()).isEqualTo("vulkan");
    }

    @Test
    void aBundleIsUsedOnlyWhenItsRecordIsVerifiedAndNamesAFileThatIsThere() throws IOException {
        Path missing = bundle(LINUX_BUNDLE + "library=libllama.other.so\n", "libllama.vulkan.v0.5.0.so");
        assertThatThrownBy(() -> LlamaBuilds.readBundle(missing))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("names libllama.other.so, which is not in");
        assertThat(LlamaBuilds.bundled(env(Map.of("OAM_LLAMA_BUNDLE", missing.toString()))))
                .isNull();
        Path outside = bundle(LINUX_BUNDLE + "library=../libllama.so\n", "libllama.vulkan.v0.5.0.so");
        assertThatThrownBy(() -> LlamaBuilds.readBundle(outside)).hasMessageContaining("names no library file");
        Path unverified = bundle(
                "source=node-llama-cpp-linux-x64-vulkan-3.22.1.tgz\nsha256=00\nlibrary=libllama.vulkan.v0.5.0.so\n",
                "libllama.vulkan.v0.5.0.so");
        assertThatThrownBy(() -> LlamaBuilds.readBundle(unverified))
                .hasMessageContaining("not one of the sources whose struct layouts are verified");
        assertThat(LlamaBuilds.bundled(
                        env(Map.of("OAM_LLAMA_BUNDLE", cache.resolve("nothing").toString()))))
                .isNull();
    }

    @Test
    void aBundleWithATamperedTruncatedOrMissingFileIsNotUsedAndTheFileIsNamed() throws IOException {
        Path folder = bundle(LINUX_BUNDLE + "library=libllama.vulkan.v0.5.0.so\n", "libllama.vulkan.v0.5.0.so");
        Files.writeString(folder.resolve("libggml-vulkan.so"), "the Vulkan module");
        Files.writeString(
                folder.resolve(NativeFiles.FILES),
                NativeFiles.sha256(folder.resolve("libggml-vulkan.so")) + "  libggml-vulkan.so\n",
                java.nio.file.StandardOpenOption.APPEND);
        assertThat(LlamaBuilds.readBundle(folder).backend()).isEqualTo("vulkan");

        Files.writeString(folder.resolve("libggml-vulkan.so"), "the Vulkan module, replaced");
        assertThatThrownBy(() -> LlamaBuilds.readBundle(folder))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("libggml-vulkan.so has SHA-256")
                .hasMessageContaining("damaged or was replaced");
        assertThat(LlamaBuilds.bundled(env(Map.of("OAM_LLAMA_BUNDLE", folder.toString()))))
                .isNull();

        Files.writeString(folder.resolve("libggml-vulkan.so"), "the Vulkan");
        assertThatThrownBy(() -> LlamaBuilds.readBundle(folder)).hasMessageContaining("libggml-vulkan.so has SHA-256");

        Files.delete(folder.resolve("libggml-vulkan.so"));
        assertThatThrownBy(() -> LlamaBuilds.readBundle(folder)).hasMessageContaining("libggml-vulkan.so is missing");

        Files.delete(folder.resolve(NativeFiles.FILES));
        assertThatThrownBy(() -> LlamaBuilds.readBundle(folder)).hasMessageContaining("has no files.sha256");
    }

    @Test
    void aLaterProcessTrustsTheNoteOfACheckedFolderOnlyWhileNoFileChangedSizeOrTime() throws IOException {
        Path folder = bundle(LINUX_BUNDLE + "library=libllama.vulkan.v0.5.0.so\n", "libllama.vulkan.v0.5.0.so");
        Path library = folder.resolve("libllama.vulkan.v0.5.0.so");
        Path notes = folder.resolveSibling("notes");
        NativeFiles.check(folder, notes);
        java.nio.file.attribute.FileTime time = Files.getLastModifiedTime(library);
        // the same size and time: a later process takes the note's word (the documented limit of the note)
        Files.writeString(library, "NOT loaded by these tests");
        Files.setLastModifiedTime(library, time);
        NativeFiles.forgetChecked();
        NativeFiles.check(folder, notes);
        // another size: hashed again, and refused
        Files.writeString(library, "not loaded by these tests, cut");
        NativeFiles.forgetChecked();
        assertThatThrownBy(() -> NativeFiles.check(folder, notes)).hasMessageContaining("has SHA-256");
    }

    @Test
    void windowsRunsTheCurrentLlamaCppWhereAReleaseCarriesItAndJdk21IsToldWhatItLoses() throws IOException {
        Path folder = bundle(
                "source=node-llama-cpp-win-x64-vulkan-3.21.1.tgz\nsha256="
                        + "105e8207d2114f5f248b217fee7f9b702d0e7509cf0d3c7565dfb9e707f9303e\nbackend=vulkan\n"
                        + "library=llama.vulkan.v0.4.0.dll\n",
                "llama.vulkan.v0.4.0.dll");
        Environment withBundle = Environment.of(
                Map.of("OAM_CACHE_DIR", cache.resolve("none").toString(), "OAM_LLAMA_BUNDLE", folder.toString()));
        Environment without =
                Environment.of(Map.of("OAM_CACHE_DIR", cache.resolve("none").toString()));
        assertThat(EngineChoice.planned(withBundle, 25, "Windows 11", "/h").current())
                .isTrue();
        assertThat(EngineChoice.planned(withBundle, 25, "Windows 11", "/h").description())
                .contains("node-llama-cpp-win-x64-vulkan-3.21.1");
        assertThat(EngineChoice.planned(without, 25, "Windows 11", "/h").current())
                .isFalse();
        assertThat(EngineChoice.planned(withBundle, 21, "Windows 11", "/h").current())
                .isFalse();
        assertThat(EngineChoice.oldJdkLoses(21, LlamaBuilds.readBundle(folder)))
                .contains("Java 21", "Java 22 or newer", "b4916", "Qwen3", "vulkan backend", "Java 25");
        assertThat(EngineChoice.oldJdkLoses(25, LlamaBuilds.readBundle(folder))).isNull();
        assertThat(EngineChoice.oldJdkLoses(21, null)).isNull();
    }

    @Tag("real-model")
    @Test
    void theRealProjectBuildIsAcceptedWhereBinTestBuiltIt() throws IOException {
        String built = System.getenv("OAM_TEST_LLAMA_LIBRARY");
        org.junit.jupiter.api.Assumptions.assumeTrue(
                built != null && !built.isBlank(), "bin/test passes the built library");
        Path library = Path.of(built);
        LlamaBuilds.Build build = LlamaBuilds.read(library);
        assertThat(build.source()).isEqualTo(SOURCE);
        // found where the script put it: <cache>/llama-cpp/<version>-r<recipe>/lib/libllama.so
        Path folder = library.toAbsolutePath().getParent().getParent().getParent();
        assertThat(LlamaBuilds.found(folder, false))
                .extracting(LlamaBuilds.Build::library)
                .contains(library.toAbsolutePath());
    }

    @Test
    void theLlamaCppAModelWouldRunOnIsKnownBeforeLoading() throws IOException {
        build("0.3.36-r3", "source=" + SOURCE + "\nsha256=" + SHA + "\nrecipe=3\n");
        Environment withCache = Environment.of(Map.of("OAM_CACHE_DIR", cache.toString()));
        Environment emptyCache =
                Environment.of(Map.of("OAM_CACHE_DIR", cache.resolve("none").toString()));
        // JDK 22+ on Linux with a project build: the current llama.cpp
        assertThat(EngineChoice.planned(withCache, 25, "Linux", "/h").current()).isTrue();
        // none built: the binding's b4916, and so for JDK 21, Windows, a forced JNI engine or OAM_LLAMA_LIBRARY=binding
        assertThat(EngineChoice.planned(emptyCache, 25, "Linux", "/h").current())
                .isFalse();
        assertThat(EngineChoice.planned(withCache, 21, "Linux", "/h").description())
                .contains("b4916", "JNI", "JDK 21");
        assertThat(EngineChoice.planned(withCache, 25, "Windows 11", "/h").current())
                .isFalse();
        assertThat(EngineChoice.planned(
                                Environment.of(Map.of("OAM_CACHE_DIR", cache.toString(), "OAM_LLAMA_ENGINE", "jni")),
                                25,
                                "Linux",
                                "/h")
                        .current())
                .isFalse();
        assertThat(EngineChoice.planned(
                                Environment.of(
                                        Map.of("OAM_CACHE_DIR", cache.toString(), "OAM_LLAMA_LIBRARY", "binding")),
                                25,
                                "Linux",
                                "/h")
                        .current())
                .isFalse();
        assertThat(EngineChoice.planned(
                                Environment.of(
                                        Map.of(
                                                "OAM_CACHE_DIR",
                                                cache.resolve("none").toString()),
                                        Map.of("oam.llama.library", "/x/libllama.so")),
                                25,
                                "Linux",
                                "/h")
                        .current())
                .isTrue();
    }

    @Test
    void architecturesOfBothLlamaCppsAreKnown() {
        assertThat(Architectures.B4916)
                .contains("llama", "qwen2", "gemma3", "phi3", "mpt", "bert", "rwkv7")
                .doesNotContain("qwen3", "gemma3n", "gemma4", "qwen35", "smollm3", "lfm2");
        assertThat(Architectures.VENDORED)
                .hasSize(Architectures.VENDORED_COUNT)
                .containsAll(Architectures.B4916)
                .contains("qwen3", "qwen3moe", "gemma3n", "gemma4", "qwen35", "smollm3", "lfm2");
    }
}
