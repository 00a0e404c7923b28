package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.ModelFile;
import dev.oam.model.llama.engine.SlotEngine;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.grammar.GbnfParser;
import dev.oam.model.llama.grammar.TokenVocabulary;
import dev.oam.model.llama.prompt.ChatMessage;
import dev.oam.testing.RealModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The FFM engine on a real model file, one subclass per model ({@link FfmGemmaTest}: Gemma 3 270M,
 * {@code OAM_TEST_GEMMA_MODEL}; {@link FfmSmolLM2Test}: SmolLM2-135M-Instruct, {@code OAM_TEST_SMOLLM2_MODEL}; skipped
 * without it): the template (llama.cpp's built-in families, or the file's own), greedy identity alone vs 8 batched
 * (asserted), a grammar, random walks of the Java grammar over the vocabulary as the engine decodes it, and a cancel
 * during a 2,000-token prompt. Speed figures are printed (to the test's output file), never asserted: the machine is
 * shared. Like every Ffm*Test, it runs on both libraries (the binding's and the project-built one).
 */
@Tag("real-model")
@Timeout(900)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class FfmRealModelSuite {
    private final RealModel model;
    private SlotEngine engine;

    FfmRealModelSuite(RealModel model) {
        this.model = model;
    }

    /** What a user turn starts with in the prompt the engine renders, and what the prompt ends with. */
    abstract String userTurn();

    abstract String assistantTurn();

    /** The token a turn ends with. */
    abstract String endOfTurn();

    @BeforeAll
    void open() throws Exception {
        Path file = model.pathIfSet();
        assumeTrue(
                TinyEngines.ffmPossible() && file != null && Files.isRegularFile(file),
                "needs " + model.variable() + " and JDK 22+");
        engine = (SlotEngine) EngineChoice.open(
                GgufFile.read(file),
                EngineSettings.defaults()
                        .withContextSize(2304)
                        .withSlots(8)
                        .withThreads(2)
                        .withThreadsBatch(2),
                EngineChoice.Kind.FFM,
                SystemSettings.host());
    }

    @AfterAll
    void close() throws Exception {
        if (engine != null) {
            LlamaEngines.close(engine);
        }
    }

    private String npc(int i) {
        return engine.renderChat(List.of(
                new ChatMessage(
                        "system",
                        "You are Bram, a guard at the north gate of Eldham. "
                                + "Answer in one or two short sentences."),
                new ChatMessage(
                        "user",
                        List.of(
                                        "Who are you?",
                                        "Is the gate open?",
                                        "Have you seen the merchant?",
                                        "Where is the inn?",
                                        "What do you guard?",
                                        "Any news from the castle?",
                                        "Is it safe to travel at night?",
                                        "Who is the captain?")
                                .get(i))));
    }

    private void report(String line) {
        System.out.println("[" + model.id() + "-ffm] " + line);
    }

    @Test
    void theTemplateIsTheModelsOwn() {
        String prompt = npc(0);
        assertThat(prompt).contains(userTurn()).endsWith(assistantTurn());
        assertThat(prompt).contains("You are Bram");
    }

    @Test
    void randomWalksOnTheEnginesVocabularyEndInSentencesTheCheckerAccepts() throws Exception {
        // The vocabulary as the engine hands it to the Java grammar (llama.cpp's pieces): the only source for a
        // byte-level BPE vocabulary such as SmolLM2's, which GgufVocabulary does not read.
        java.lang.reflect.Method vocabulary =
                Class.forName("dev.oam.model.llama.ffm.FfmEngine").getDeclaredMethod("vocabulary");
        vocabulary.setAccessible(true);
        TokenVocabulary pieces = (TokenVocabulary) vocabulary.invoke(engine);
        int end = GgufFile.read(model.pathIfSet()).tokens().indexOf(endOfTurn());
        assertThat(end).as("the id of %s", endOfTurn()).isNotNegative();
        GrammarWalks.walk(pieces, end);
    }

    @Test
    void eightSessionsBatchedGiveWhatEachGivesAloneAndFaster() throws Exception {
        eightTogetherAndAlone(engine, "2/2 threads");
    }

    @Test
    void eightSessionsBatchedGiveWhatEachGivesAloneWithOneGenerationThread() throws Exception {
        // The default split on two cores: a lone session's decodes run on one thread and without the padding row, the
        // batches of several lanes on two. Which threads compute a row must not change it.
        SlotEngine oneTwo = (SlotEngine) EngineChoice.open(
                GgufFile.read(model.pathIfSet()),
                EngineSettings.defaults()
                        .withContextSize(2304)
                        .withSlots(8)
                        .withThreads(1)
                        .withThreadsBatch(2),
                EngineChoice.Kind.FFM,
                SystemSettings.host());
        try {
            eightTogetherAndAlone(oneTwo, "1/2 threads");
        } finally {
            LlamaEngines.close(oneTwo);
        }
    }

    @SuppressWarnings("try") // the decode thread is held only for the scope
    private void eightTogetherAndAlone(SlotEngine engine, String label) throws Exception {
        int n = 8;
        int maxTokens = 48;
        List<String> alone = new ArrayList<>();
        long aloneTokens = 0;
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            EngineResult r = engine.generate(
                    new EngineRequest(npc(i), null, maxTokens, 0, 0, 1, 1),
                    "alone-" + i,
                    d -> {},
                    CancellationToken.create());
            alone.add(r.text());
            aloneTokens += r.outputTokens();
        }
        double aloneSeconds = (System.nanoTime() - start) / 1e9;
        List<CompletableFuture<EngineResult>> together = new ArrayList<>();
        long[] firstToken = new long[n];
        long batchStart;
        try (AutoCloseable hold = FfmEngineTest.holdDecodeThread()) {
            for (int i = 0; i < n; i++) {
                int index = i;
                CompletableFuture<EngineResult> f = new CompletableFuture<>();
                together.add(f);
                Thread.ofVirtual().start(() -> {
                    try {
                        f.complete(engine.generate(
                                new EngineRequest(npc(index), null, maxTokens, 0, 0, 1, 1),
                                "together-" + index,
                                d -> {
                                    if (firstToken[index] == 0) {
                                        firstToken[index] = System.nanoTime();
                                    }
                                },
                                CancellationToken.create()));
                    } catch (Throwable e) {
                        f.completeExceptionally(e);
                    }
                });
            }
            assertThat(engine.slotTable().await(t -> t.busySlots() == n, 60_000))
                    .isTrue();
            batchStart = System.nanoTime();
        }
        long batchTokens = 0;
        int same = 0;
        for (int i = 0; i < n; i++) {
            EngineResult r = together.get(i).get(600, TimeUnit.SECONDS);
            assertThat(r.outputTokens()).isPositive();
            same += r.text().equals(alone.get(i)) ? 1 : 0;
            batchTokens += r.outputTokens();
        }
        // The together sessions read their prompts in other chunks than the alone ones (which reuse the cached system
        // prompt), next to other lanes' rows: without flash attention and the padding row, 3-6 of 8 matched here.
        // Not asserted on the binding's b4916: a lane's new cells can land in another lane's freed cells, before its
        // own
        // older ones, and b4916 adds a lane's cells up in the order they lie in the shared cache, so batched texts can
        // still differ from alone ones where two tokens nearly tie (without flash attention and the padding row 3-6 of
        // 8 matched here, with them 7-8). What is exact there is asserted on the tests' model (FfmBatchingTest).
        report(label + ": " + same + " of " + n + " sessions gave the same text batched as alone");
        if ("vendored".equals(System.getProperty("oam.test.llamaLibrary"))) {
            // A KV stream per lane and kernels that compute every row alike (FfmTuning.streams, repack,
            // Scheduler.STREAM_CHUNK,
            // the padding row of a lone decode, LlamaNative's tiled-product switch): exact, prompts read in other cuts.
            assertThat(same)
                    .as("greedy texts together equal to alone on the project-built llama.cpp")
                    .isEqualTo(n);
        }
        double batchSeconds = (System.nanoTime() - batchStart) / 1e9;
        long[] ttft = new long[n];
        for (int i = 0; i < n; i++) {
            ttft[i] = (firstToken[i] - batchStart) / 1_000_000;
        }
        java.util.Arrays.sort(ttft);
        report(label
                + String.format(
                        Locale.ROOT,
                        ": alone: %d tokens in %.2f s = %.1f tokens/s; 8 batched: %d tokens in %.2f s = %.1f"
                                + " tokens/s; ratio %.2f; time to first token batched p50 %d ms, p95 %d ms (the prompts are read too)",
                        aloneTokens,
                        aloneSeconds,
                        aloneTokens / aloneSeconds,
                        batchTokens,
                        batchSeconds,
                        batchTokens / batchSeconds,
                        (batchTokens / batchSeconds) / (aloneTokens / aloneSeconds),
                        ttft[n / 2],
                        ttft[(int) Math.ceil(n * 0.95) - 1]));
    }

    @Test
    void quantisedWeightsGiveTheSameFirstLogitsHoweverThePromptWasCutWithoutPadding() throws Exception {
        // Both models' matrices are all quantised, so the engine adds no padding row (ModelFile#floatMatrices), on the
        // premise that llama.cpp's quantised products come out the same for one row and for several: a prompt read
        // whole, then its last token decoded alone after the rest came from the cache, must give the same first logits.
        // On a fresh 1-lane engine, so the lane's cells lie in order (placement among other lanes' cells is another
        // matter).
        GgufFile file = GgufFile.read(model.pathIfSet());
        assertThat(ModelFile.of(file).floatMatrices()).isFalse();
        List<float[]> rows = java.util.Collections.synchronizedList(new ArrayList<>());
        ProbeObserver observer = new ProbeObserver();
        observer.firstLogits = rows::add;
        StringBuilder lore = new StringBuilder("Decode. ");
        for (int i = 0; lore.length() < 3000; i++) {
            lore.append(List.of("the", "old", "gate", "of", "Eldham", "was", "built", "by", "dwarves")
                            .get(i % 9))
                    .append(' ');
        }
        assertThat(engine.promptTokens(lore + npc(2)).length)
                .as("the long prompt reaches 512 cells")
                .isBetween(520, 1000);
        // One generation thread: a lone row is decoded without the padding row, and from 512 cells llama.cpp's
        // attention
        // takes its split path for it (one part on one thread); two: with the padding row, so never that path.
        for (int threads : new int[] {1, 2}) {
            // With flash attention, which a 1-lane engine goes without by default (FfmTuning.flashAttention: 2.5x
            // faster on these models): without it llama.cpp's attention for one row and for several round differently.
            SlotEngine fresh = (SlotEngine) EngineChoice.open(
                    file,
                    EngineSettings.defaults()
                            .withContextSize(1024)
                            .withSlots(1)
                            .withThreads(threads)
                            .withThreadsBatch(2),
                    EngineChoice.Kind.FFM,
                    SystemSettings.natives(),
                    SystemSettings.tuning().withFlashAttention(true),
                    observer);
            try {
                // Several prompts: on llama-cpp-python 0.3.36's llama.cpp with ggml's repacked weight layouts, "Decode.
                // "
                // + npc(1) came out different read whole and cut (npc(6) + "Well, " did not), which is why the engine
                // keeps them off there (FfmTuning.repack).
                for (String prompt :
                        List.of(npc(6) + "Well, ", "Decode. " + npc(1), "Decode. " + npc(4), npc(0), lore + npc(2))) {
                    rows.clear();
                    EngineRequest once = new EngineRequest(prompt, null, 1, 0, 0, 1, 1);
                    EngineResult whole = fresh.generate(once, "cut", d -> {}, CancellationToken.create());
                    EngineResult cached = fresh.generate(once, "cut", d -> {}, CancellationToken.create());
                    assertThat(whole.cachedInputTokens())
                            .as("read in rows of several")
                            .isLessThan(whole.inputTokens() - 2);
                    assertThat(cached.cachedInputTokens()).isEqualTo(cached.inputTokens() - 1);
                    assertThat(rows).hasSize(2);
                    assertThat(java.util.Arrays.equals(rows.get(1), rows.get(0)))
                            .as("the same first logits, %d generation thread(s): %s", threads, prompt)
                            .isTrue();
                }
            } finally {
                LlamaEngines.close(fresh);
            }
        }
    }

    @Test
    void aGrammarStepParsesAndCountsSampledTokens() throws Exception {
        String grammar = """
                root ::= "{\\"choice\\": \\"" choice "\\", \\"reason\\": \\"" word (" " word){0,8} "\\"}"
                choice ::= "attack" | "flee" | "talk"
                word ::= [a-z]{1,10}
                """;
        long start = System.nanoTime();
        EngineResult r = engine.generate(
                new EngineRequest(
                        engine.renderChat(List.of(new ChatMessage(
                                "user", "A goblin blocks the road. Decide: attack, flee or talk. Answer in JSON."))),
                        GbnfParser.parse(grammar),
                        96,
                        0,
                        0,
                        1,
                        1),
                "grammar",
                d -> {},
                CancellationToken.create());
        double ms = (System.nanoTime() - start) / 1e6;
        assertThat(Json.parse(r.text()).get("choice").asText()).isIn("attack", "flee", "talk");
        report(String.format(
                Locale.ROOT,
                "grammar step: %d sampled tokens (text re-encodes to %d) in %.0f ms: %s",
                r.outputTokens(),
                engine.countTokens(r.text()),
                ms,
                r.text()));
    }

    @Test
    void cancellingA2000TokenPromptAnswersAndFreesTheModelQuickly() throws Exception {
        StringBuilder lore = new StringBuilder();
        String[] words = {
            "the", "old", "gate", "of", "Eldham", "was", "built", "by", "dwarves", "long", "ago", "and", "guarded"
        };
        int i = 0;
        while (engine.countTokens(lore.toString()) < 2000) {
            for (int k = 0; k < 50; k++) {
                lore.append(words[i++ % words.length]).append(i % 17 == 0 ? ". " : " ");
            }
        }
        String prompt = engine.renderChat(List.of(new ChatMessage("user", lore + "\nWho built the gate?")));
        report("cancel prompt: " + engine.promptTokens(prompt).length + " tokens");
        EngineRequest bystanderRequest = new EngineRequest(npc(3), null, 40, 0, 0, 1, 1);
        String bystanderAlone = engine.generate(bystanderRequest, "bystander", d -> {}, CancellationToken.create())
                .text();
        for (int r = 0; r < 3; r++) {
            int round = r;
            CancellationToken token = CancellationToken.create();
            AtomicLong answered = new AtomicLong();
            CompletableFuture<EngineResult> bystander = CompletableFuture.supplyAsync(() -> {
                try {
                    return engine.generate(bystanderRequest, "bystander", d -> {}, CancellationToken.create());
                } catch (AgentException e) {
                    throw new IllegalStateException(e);
                }
            });
            CountDownLatch started = new CountDownLatch(1);
            CompletableFuture<Void> cancelled = CompletableFuture.runAsync(() -> {
                try {
                    started.countDown();
                    engine.generate(new EngineRequest(prompt, null, 16, 0, 0, 1, 1), "long-" + round, d -> {}, token);
                } catch (AgentException e) {
                    answered.set(System.nanoTime());
                    assertThat(e.code()).isEqualTo(ErrorCode.CANCELLED);
                }
            });
            started.await();
            assertThat(engine.slotTable().await(t -> t.busySlots() >= 1, 60_000))
                    .isTrue();
            Thread.sleep(400 + round * 300L); // into the prompt (measurement only)
            long cancelAt = System.nanoTime();
            token.cancel();
            cancelled.get(60, TimeUnit.SECONDS);
            long nextStart = System.nanoTime();
            long[] first = new long[1];
            engine.generate(
                    new EngineRequest(npc(1), null, 1, 0, 0, 1, 1),
                    "next-" + round,
                    d -> first[0] = System.nanoTime(),
                    CancellationToken.create());
            long next = (first[0] == 0 ? System.nanoTime() : first[0]);
            report(String.format(
                    Locale.ROOT,
                    "cancel round %d: cancelled answer after %.1f ms; next request's first token"
                            + " %.1f ms after the cancel (%.1f ms of it its own prompt)",
                    round,
                    (answered.get() - cancelAt) / 1e6,
                    (next - cancelAt) / 1e6,
                    (next - nextStart) / 1e6));
            assertThat(answered.get()).isPositive();
            String together = bystander.get(600, TimeUnit.SECONDS).text();
            // Exact on the project-built library, and on the binding's for Gemma's Q4_K_M; SmolLM2's Q4_1 rows computed
            // beside another lane can tip a near tie on the binding's b4916 (as in the eight-session test above).
            if ("vendored".equals(System.getProperty("oam.test.llamaLibrary"))
                    || model == dev.oam.testing.RealModel.GEMMA) {
                assertThat(together).isEqualTo(bystanderAlone);
            } else {
                assertThat(together).isNotEmpty();
                report("cancel round " + round + ": bystander "
                        + (together.equals(bystanderAlone) ? "equal to" : "differs from") + " its text alone");
            }
        }
    }
}
