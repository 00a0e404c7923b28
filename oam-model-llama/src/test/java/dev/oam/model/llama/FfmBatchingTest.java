package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.SlotEngine;
import dev.oam.model.llama.gguf.GgufFile;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What continuous batching in the FFM engine promises: a request's greedy result does not depend on what else was
 * decoded with it, no request waits for another's whole prompt, and cancels (during a prompt, racing the last token)
 * leave every other lane's cache and output unharmed. Waits on events, never on wall-clock times.
 */
@SuppressWarnings("try") // each test holds the decode thread for a scope it never names
@Timeout(300)
class FfmBatchingTest {
    private static final String[] SUBJECTS = {"goblin", "dragon", "merchant", "castle"};
    private SlotEngine engine;

    @BeforeEach
    void open() {
        assumeTrue(TinyEngines.ffmPossible(), "FFM needs JDK 22+ on Linux or macOS");
        engine = TinyEngines.lanes(EngineChoice.Kind.FFM);
    }

    private static EngineRequest greedy(String prompt, int maxTokens) {
        return new EngineRequest(prompt, null, maxTokens, 0, 0, 1, 1);
    }

    private static String text(String subject, int words) {
        List<String> vocabulary = List.of("attack", "flee", "guard", "gold", "door", "castle", "dragon", "merchant");
        StringBuilder out = new StringBuilder("the ").append(subject);
        for (int i = 0; i < words; i++) {
            out.append(' ').append(vocabulary.get((i * 5 + subject.length()) % vocabulary.size()));
        }
        return out.toString();
    }

    private CompletableFuture<EngineResult> async(
            SlotEngine on, EngineRequest request, Object session, CancellationToken token, List<String> deltas) {
        CompletableFuture<EngineResult> result = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                result.complete(on.generate(request, session, deltas::add, token));
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    @Test
    void greedyResultsAreTheSameAloneAndBatched() throws Exception {
        List<EngineRequest> requests = new ArrayList<>();
        for (String subject : SUBJECTS) {
            requests.add(greedy(text(subject, 40 + subject.length() * 9), 48));
        }
        List<String> alone = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
            alone.add(engine.generate(requests.get(i), "alone-" + i, d -> {}, CancellationToken.create())
                    .text());
        }
        List<CompletableFuture<EngineResult>> together = new ArrayList<>();
        try (AutoCloseable hold = FfmEngineTest.holdDecodeThread()) {
            for (int i = 0; i < requests.size(); i++) {
                together.add(
                        async(engine, requests.get(i), "together-" + i, CancellationToken.create(), new ArrayList<>()));
            }
            assertThat(engine.slotTable().await(t -> t.busySlots() == 4, 30_000))
                    .isTrue();
        }
        for (int i = 0; i < requests.size(); i++) {
            EngineResult result = together.get(i).get(120, TimeUnit.SECONDS);
            assertThat(result.text()).as("request %d", i).isEqualTo(alone.get(i));
            assertThat(result.outputTokens()).isBetween(1, 48);
        }
    }

    @Test
    void sessionsOnLanesWithIdleLanesBetweenThemGiveWhatEachGivesAloneAndTheIdleLanesKeepTheirCaches()
            throws Exception {
        // With a KV stream per lane (the project-built llama.cpp) the engine fills the lanes between two busy ones with
        // a row each that it removes after the decode; on b4916 nothing is added. Either way: alone results, and the
        // idle lanes' sessions still find their whole prompts cached. A fresh engine, so each session gets a lane.
        SlotEngine fresh = (SlotEngine) EngineChoice.open(
                GgufFile.read(TinyEngines.MODELS.resolve("tiny-lanes.gguf")),
                EngineSettings.defaults()
                        .withContextSize(1024)
                        .withSlots(4)
                        .withThreads(1)
                        .withThreadsBatch(1),
                EngineChoice.Kind.FFM,
                SystemSettings.host());
        try {
            List<EngineRequest> requests = new ArrayList<>();
            List<String> alone = new ArrayList<>();
            for (int i = 0; i < SUBJECTS.length; i++) {
                requests.add(greedy(text(SUBJECTS[i], 30 + i * 7), 24));
                alone.add(fresh.generate(requests.get(i), "gap-" + i, d -> {}, CancellationToken.create())
                        .text());
            }
            List<CompletableFuture<EngineResult>> together = new ArrayList<>();
            try (AutoCloseable hold = FfmEngineTest.holdDecodeThread()) {
                for (int i : new int[] {0, SUBJECTS.length - 1}) {
                    together.add(
                            async(fresh, requests.get(i), "gap-" + i, CancellationToken.create(), new ArrayList<>()));
                }
                assertThat(fresh.slotTable().await(t -> t.busySlots() == 2, 30_000))
                        .isTrue();
            }
            for (int k = 0; k < 2; k++) {
                EngineResult r = together.get(k).get(120, TimeUnit.SECONDS);
                int i = k == 0 ? 0 : SUBJECTS.length - 1;
                assertThat(r.text()).as("session %d", i).isEqualTo(alone.get(i));
                assertThat(r.cachedInputTokens()).as("session %d's own lane", i).isEqualTo(r.inputTokens() - 1);
            }
            for (int i = 1; i < SUBJECTS.length - 1; i++) {
                EngineResult again = fresh.generate(requests.get(i), "gap-" + i, d -> {}, CancellationToken.create());
                assertThat(again.text()).as("idle lane %d", i).isEqualTo(alone.get(i));
                assertThat(again.cachedInputTokens())
                        .as("idle lane %d's cache", i)
                        .isEqualTo(again.inputTokens() - 1);
            }
        } finally {
            LlamaEngines.close(fresh);
        }
    }

    @Test
    void aLoneRequestsTokenIsDecodedOnTheGenerationThreadsEvenWithAnAddedRow() throws Exception {
        // The engine adds a row to a lone request's decode (padding, with lanes); llama.cpp would compute that on the
        // batch threads. OAM_LLAMA_THREADS (cores - 1 by default) must still be what one NPC's generation takes, and
        // the batch threads what a prompt chunk or several lanes take.
        List<int[]> decodes = Collections.synchronizedList(new ArrayList<>());
        ProbeObserver observer = new ProbeObserver();
        observer.decoding = (rows, threads) -> decodes.add(new int[] {rows, threads});
        SlotEngine fresh = (SlotEngine) EngineChoice.open(
                GgufFile.read(TinyEngines.MODELS.resolve("tiny-lanes.gguf")),
                EngineSettings.defaults()
                        .withContextSize(1024)
                        .withSlots(4)
                        .withThreads(1)
                        .withThreadsBatch(2),
                EngineChoice.Kind.FFM,
                SystemSettings.natives(),
                SystemSettings.tuning(),
                observer);
        try {
            fresh.generate(greedy(text("dragon", 40), 12), "lone", d -> {}, CancellationToken.create());
            List<CompletableFuture<EngineResult>> together = new ArrayList<>();
            try (AutoCloseable hold = FfmEngineTest.holdDecodeThread()) {
                for (int i = 0; i < 2; i++) {
                    together.add(async(
                            fresh,
                            greedy("the " + SUBJECTS[i], 12),
                            "pair-" + i,
                            CancellationToken.create(),
                            new ArrayList<>()));
                }
                assertThat(fresh.slotTable().await(t -> t.busySlots() == 2, 30_000))
                        .isTrue();
            }
            for (CompletableFuture<EngineResult> f : together) {
                f.get(120, TimeUnit.SECONDS);
            }
        } finally {
            LlamaEngines.close(fresh);
        }
        List<int[]> seen = List.copyOf(decodes);
        assertThat(seen).as("decodes of one request row").anyMatch(d -> d[0] == 1);
        assertThat(seen).as("decodes of several request rows").anyMatch(d -> d[0] > 1);
        for (int[] d : seen) {
            assertThat(d[1])
                    .as("threads of a decode of %d request row(s)", d[0])
                    .isEqualTo(d[0] == 1 ? 1 : 2);
        }
    }

    @Test
    void theFirstLogitsDoNotDependOnHowThePromptWasCut() throws Exception {
        // A prompt read whole (chunks of many rows), then again from the lane's cache, where only its last token is
        // decoded: llama.cpp computes a product of one row with other kernels than a product of several, so without the
        // padding row the second read's logits differ in their last bits (and a greedy answer can change).
        List<float[]> rows = Collections.synchronizedList(new ArrayList<>());
        TinyEngines.PROBES.firstLogits = rows::add;
        try {
            EngineRequest once = greedy(text("castle", 60), 1);
            engine.generate(once, "cut", d -> {}, CancellationToken.create());
            EngineResult cached = engine.generate(once, "cut", d -> {}, CancellationToken.create());
            assertThat(cached.cachedInputTokens())
                    .as("all but the last token from the cache")
                    .isEqualTo(cached.inputTokens() - 1);
            assertThat(rows).hasSize(2);
            assertThat(java.util.Arrays.equals(rows.get(1), rows.get(0)))
                    .as("the first logits, the last token decoded alone")
                    .isTrue();
        } finally {
            TinyEngines.PROBES.firstLogits = null;
        }
    }

    @Test
    void aShortPromptIsNotHeldBehindALongOne() throws Exception {
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        CompletableFuture<EngineResult> longOne;
        CompletableFuture<EngineResult> shortOne;
        try (AutoCloseable hold = FfmEngineTest.holdDecodeThread()) {
            longOne = async(
                    engine,
                    greedy(text("long prompt", 1500), 4),
                    "fair-long",
                    CancellationToken.create(),
                    new FirstDelta(order, "long"));
            assertThat(engine.slotTable().await(t -> t.busySlots() == 1, 30_000))
                    .isTrue();
            shortOne = async(
                    engine,
                    greedy("the goblin", 4),
                    "fair-short",
                    CancellationToken.create(),
                    new FirstDelta(order, "short"));
            assertThat(engine.slotTable().await(t -> t.busySlots() == 2, 30_000))
                    .isTrue();
        }
        longOne.get(120, TimeUnit.SECONDS);
        shortOne.get(120, TimeUnit.SECONDS);
        assertThat(order).as("first deltas in order").startsWith("short");
    }

    @Test
    void cancellingDuringALongPromptFreesTheLaneAndHarmsNoOtherLane() throws Exception {
        EngineRequest other = greedy(text("bystander", 60), 120);
        String reference = engine.generate(other, "bystander", d -> {}, CancellationToken.create())
                .text();
        CancellationToken cancel = CancellationToken.create();
        CompletableFuture<EngineResult> running;
        CompletableFuture<EngineResult> longOne;
        try (AutoCloseable hold = FfmEngineTest.holdDecodeThread()) {
            running = async(engine, other, "bystander", CancellationToken.create(), new ArrayList<>());
            longOne = async(engine, greedy(text("very long prompt", 1800), 8), "cancelled", cancel, new ArrayList<>());
            assertThat(engine.slotTable().await(t -> t.busySlots() == 2, 30_000))
                    .isTrue();
        }
        cancel.cancel();
        assertThatThrownBy(() -> longOne.get(60, TimeUnit.SECONDS))
                .cause()
                .isInstanceOf(AgentException.class)
                .extracting(e -> ((AgentException) e).code())
                .isEqualTo(ErrorCode.CANCELLED);
        assertThat(running.get(120, TimeUnit.SECONDS).text()).isEqualTo(reference);
        assertThat(engine.slotTable().await(t -> t.busySlots() == 0, 30_000)).isTrue();
        // the bystander's cache is intact: its next turn reuses it and decodes the same
        EngineResult again = engine.generate(other, "bystander", d -> {}, CancellationToken.create());
        assertThat(again.text()).isEqualTo(reference);
        assertThat(again.cachedInputTokens()).isEqualTo(again.inputTokens() - 1);
    }

    @Test
    void aCancelRacingTheLastTokenEndsOneWayOrTheOtherAndFreesTheLane() throws Exception {
        EngineRequest request = greedy(text("race", 20), 1);
        String reference = engine.generate(request, "race", d -> {}, CancellationToken.create())
                .text();
        for (int i = 0; i < 30; i++) {
            CancellationToken token = CancellationToken.create();
            CompletableFuture<EngineResult> result = async(engine, request, "race", token, new ArrayList<>());
            token.cancel();
            try {
                assertThat(result.get(60, TimeUnit.SECONDS).text()).isEqualTo(reference);
            } catch (java.util.concurrent.ExecutionException e) {
                assertThat(e.getCause()).isInstanceOf(AgentException.class);
                assertThat(((AgentException) e.getCause()).code()).isEqualTo(ErrorCode.CANCELLED);
            }
        }
        assertThat(engine.slotTable().await(t -> t.busySlots() == 0, 30_000)).isTrue();
        assertThat(engine.generate(request, "race", d -> {}, CancellationToken.create())
                        .text())
                .isEqualTo(reference);
    }

    @Test
    void twoModelsDecodingTogetherGiveWhatEachGivesAlone() throws Exception {
        SlotEngine other = TinyEngines.noTemplate(EngineChoice.Kind.FFM);
        EngineRequest mine = greedy(text("first model", 200), 64);
        EngineRequest theirs = greedy(text("second", 30), 64);
        String mineAlone = engine.generate(mine, "two-a-alone", d -> {}, CancellationToken.create())
                .text();
        String theirsAlone = other.generate(theirs, "two-b-alone", d -> {}, CancellationToken.create())
                .text();
        for (int round = 0; round < 3; round++) {
            CompletableFuture<EngineResult> a;
            CompletableFuture<EngineResult> b;
            try (AutoCloseable hold = FfmEngineTest.holdDecodeThread()) {
                a = async(engine, mine, "two-a-" + round, CancellationToken.create(), new ArrayList<>());
                b = async(other, theirs, "two-b-" + round, CancellationToken.create(), new ArrayList<>());
                assertThat(engine.slotTable().await(t -> t.busySlots() >= 1, 30_000))
                        .isTrue();
                assertThat(other.slotTable().await(t -> t.busySlots() == 1, 30_000))
                        .isTrue();
            }
            assertThat(a.get(120, TimeUnit.SECONDS).text()).isEqualTo(mineAlone);
            assertThat(b.get(120, TimeUnit.SECONDS).text()).isEqualTo(theirsAlone);
        }
    }

    @Test
    void outputTokensCountTheSampledTokens() throws Exception {
        List<String> deltas = new ArrayList<>();
        EngineResult result =
                engine.generate(greedy(text("count", 10), 7), "count", deltas::add, CancellationToken.create());
        // a random model rarely samples end-of-generation: 7 tokens sampled, each a delta unless it split a character
        assertThat(result.outputTokens()).isBetween(1, 7);
        assertThat(deltas.size()).isLessThanOrEqualTo(result.outputTokens());
        assertThat(String.join("", deltas)).isEqualTo(result.text());
    }

    @Test
    void aSessionAbandonedMidBatchDoesNotDisturbTheOthers() throws Exception {
        EngineRequest request = greedy(text("steady", 30), 100);
        String reference = engine.generate(request, "steady", d -> {}, CancellationToken.create())
                .text();
        CancellationToken gone = CancellationToken.create();
        CountDownLatch firstDelta = new CountDownLatch(1);
        CompletableFuture<EngineResult> steady;
        CompletableFuture<EngineResult> abandoned;
        try (AutoCloseable hold = FfmEngineTest.holdDecodeThread()) {
            steady = async(engine, request, "steady", CancellationToken.create(), new ArrayList<>());
            abandoned = async(engine, greedy(text("abandoned", 30), 200), "abandoned", gone, new ArrayList<>() {
                @Override
                public boolean add(String s) {
                    firstDelta.countDown();
                    return super.add(s);
                }
            });
            assertThat(engine.slotTable().await(t -> t.busySlots() == 2, 30_000))
                    .isTrue();
        }
        firstDelta.await();
        gone.cancel();
        assertThatThrownBy(() -> abandoned.get(60, TimeUnit.SECONDS)).isNotNull();
        assertThat(steady.get(120, TimeUnit.SECONDS).text()).isEqualTo(reference);
    }

    /** Records the label once, at the first delta. */
    private static final class FirstDelta extends ArrayList<String> {
        private final List<String> order;
        private final String label;

        FirstDelta(List<String> order, String label) {
            this.order = order;
            this.label = label;
        }

        @Override
        public boolean add(String delta) {
            if (isEmpty()) {
                order.add(label);
            }
            return super.add(delta);
        }
    }

    static CompletionException unchecked(Exception e) {
        return new CompletionException(e);
    }
}
