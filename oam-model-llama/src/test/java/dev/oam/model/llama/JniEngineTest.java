package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.SlotEngine;
import dev.oam.model.llama.engine.SlotTable;
import dev.oam.model.llama.grammar.GbnfParser;
import dev.oam.model.llama.jni.ComputeGate;
import dev.oam.model.llama.prompt.ChatMessage;
import dev.oam.model.llama.prompt.ChatRenderer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The real engine on the generated tiny model (random weights: properties, never golden texts). */
@Timeout(120)
class JniEngineTest {
    private static final String STORY = "the player should attack the goblin";
    private static SlotEngine engine;

    /** The engine kind under test; {@code FfmEngineTest} runs every test here again on FFM. */
    EngineChoice.Kind kind() {
        return EngineChoice.Kind.JNI;
    }

    @BeforeEach
    void open() {
        engine = TinyEngines.chatMl(kind());
    }

    /** Holds every model's computing until the returned hold is closed (the JNI engine: the process gate). */
    AutoCloseable holdCompute() throws Exception {
        Object blocker = new Object();
        ComputeGate.PROCESS.enter(blocker, CancellationToken.create());
        return () -> ComputeGate.PROCESS.exit(blocker);
    }

    record Run(EngineResult result, List<String> deltas) {
        String text() {
            return result.text();
        }
    }

    private static EngineRequest greedy(String prompt, int maxTokens) {
        return new EngineRequest(prompt, null, maxTokens, 0, 0, 1, 1);
    }

    private static EngineRequest sampled(String prompt, int maxTokens, long seed) {
        return new EngineRequest(prompt, null, maxTokens, 0.9, 0, 1, seed);
    }

    private static EngineRequest forced(String prompt, String grammar, long seed) {
        return new EngineRequest(prompt, GbnfParser.parse(grammar), 64, 1.0, 0, 1, seed);
    }

    private static Run run(EngineRequest request, Object session) throws AgentException {
        List<String> deltas = new ArrayList<>();
        EngineResult result = engine.generate(request, session, deltas::add, CancellationToken.create());
        return new Run(result, deltas);
    }

    private static String chat(String system, String user) {
        return engine.renderChat(List.of(new ChatMessage("system", system), new ChatMessage("user", user)));
    }

    /** A prompt of about {@code words} tokens that no other test uses. */
    private static String longText(String seedWord, int words) {
        List<String> vocabulary = List.of("attack", "flee", "guard", "gold", "door", "castle", "dragon", "merchant");
        StringBuilder out = new StringBuilder(seedWord);
        for (int i = 0; i < words; i++) {
            out.append(' ').append(vocabulary.get((i * 7 + seedWord.length()) % vocabulary.size()));
        }
        return out.toString();
    }

    @Test
    void loadsWithTheFilesNameAndTheConfiguredContext() {
        assertThat(engine.name()).isEqualTo("tiny-random-llama");
        assertThat(engine.contextSize()).isEqualTo(512);
        assertThat(engine.settings().slots()).isEqualTo(2);
        assertThat(engine.controlTokens()).contains("<|im_start|>", "<|im_end|>");
    }

    @Test
    void countTokensIsTheTokenizersCount() {
        assertThat(engine.countTokens(STORY)).isEqualTo(6);
        assertThat(engine.countTokens("{\"name\": \"open_gate\"}")).isEqualTo(5);
        assertThat(engine.countTokens("<|im_start|>")).isEqualTo(1);
        assertThat(engine.countTokens("")).isZero();
        String text = "café 😀 " + STORY;
        assertThat(engine.countTokens(text))
                .isEqualTo(engine.countTokens(text))
                .isEqualTo(engine.promptTokens(text).length - 1);
    }

    @Test
    void greedyDecodingIsRepeatable() throws Exception {
        Run first = run(greedy(STORY, 32), "greedy");
        assertThat(first.text()).isNotEmpty();
        assertThat(run(greedy(STORY, 32), "greedy").text()).isEqualTo(first.text());
        assertThat(run(greedy(STORY, 32), "greedy-other").text()).isEqualTo(first.text());
    }

    @Test
    void aSeedRepeatsAndDifferentSeedsDiffer() throws Exception {
        // Warm the slot first: a prompt evaluated whole or from the cache may differ in the last bits, which can
        // tip a sampled token, so runs are compared in the same cache state.
        run(sampled(STORY, 32, 7), "seed");
        String seven = run(sampled(STORY, 32, 7), "seed").text();
        assertThat(run(sampled(STORY, 32, 7), "seed").text()).isEqualTo(seven);
        Set<String> others = new HashSet<>();
        for (long seed = 8; seed < 12; seed++) {
            others.add(run(sampled(STORY, 32, seed), "seed").text());
        }
        assertThat(others).doesNotContain(seven).hasSizeGreaterThan(1);
    }

    @Test
    void samplingParametersAreHonoured() throws Exception {
        String greedy = run(greedy(STORY, 16), "params").text();
        assertThat(run(new EngineRequest(STORY, null, 16, 1.5, 1, 1, 3), "params")
                        .text())
                .as("top-k 1 is greedy")
                .isEqualTo(greedy);
        assertThat(run(new EngineRequest(STORY, null, 16, 1.5, 0, 1e-6, 3), "params")
                        .text())
                .as("tiny top-p is greedy")
                .isEqualTo(greedy);
        Set<String> hot = new HashSet<>();
        for (long seed = 1; seed <= 4; seed++) {
            hot.add(run(new EngineRequest(STORY, null, 16, 1.5, 0, 1, seed), "params")
                    .text());
        }
        assertThat(hot).as("temperature 1.5 samples").anyMatch(text -> !text.equals(greedy));
        Run five = run(greedy(STORY, 5), "params");
        assertThat(five.result().outputTokens()).isBetween(1, 5);
        assertThat(five.deltas()).hasSizeLessThanOrEqualTo(5);
        assertThat(greedy).startsWith(five.text());
    }

    @Test
    void streamedDeltasConcatenateToTheResultOnTheCallersThread() throws Exception {
        List<String> deltas = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        CompletableFuture<EngineResult> result = new CompletableFuture<>();
        Thread caller = Thread.ofVirtual().start(() -> {
            try {
                result.complete(engine.generate(
                        greedy(STORY, 48),
                        "stream",
                        delta -> {
                            deltas.add(delta);
                            threads.add(Thread.currentThread());
                        },
                        CancellationToken.create()));
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        EngineResult done = result.get(60, TimeUnit.SECONDS);
        assertThat(deltas).isNotEmpty().doesNotContain("");
        assertThat(String.join("", deltas)).isEqualTo(done.text());
        assertThat(threads).containsOnly(caller);
        assertThat(done.inputTokens()).isEqualTo(7);
    }

    @Test
    void aLiteralGrammarForcesTheTextForEverySeed() throws Exception {
        String expected = "{\"name\": \"open_gate\", \"arguments\": {\"gate_id\": \"north\"}}";
        String grammar = "root ::= " + Json.write(Json.mapper().getNodeFactory().textNode(expected));
        for (long seed = 1; seed <= 5; seed++) {
            Run forcedRun = run(forced(chat("You are a guard.", "open the gate"), grammar, seed), "literal");
            assertThat(forcedRun.text()).isEqualTo(expected);
            assertThat(String.join("", forcedRun.deltas())).isEqualTo(expected);
        }
    }

    @Test
    void aJsonGrammarGivesParsableJson() throws Exception {
        String grammar = """
                root ::= "{\\"choice\\": \\"" choice "\\", \\"reasoning\\": \\"" word (" " word){0,5} "\\"}"
                choice ::= "attack" | "flee" | "beg"
                word ::= [a-z]{1,8}
                """;
        for (long seed = 1; seed <= 5; seed++) {
            String text = run(forced(chat("Decide.", "a goblin attacks"), grammar, seed), "json")
                    .text();
            JsonNode node = Json.parse(text);
            assertThat(node.get("choice").asText()).isIn("attack", "flee", "beg");
            assertThat(node.get("reasoning").asText()).matches("[a-z]{1,8}( [a-z]{1,8}){0,5}");
        }
    }

    @Test
    void cancellingMidGenerationReturnsPromptlyAndTheNextRequestIsUnaffected() throws Exception {
        EngineRequest request = greedy(longText("cancel", 40), 400);
        Run reference = run(request, "cancel");
        assertThat(reference.deltas()).as("long enough to cancel midway").hasSizeGreaterThan(20);

        CancellationToken token = CancellationToken.create();
        CountDownLatch threeDeltas = new CountDownLatch(3);
        CountDownLatch cancelled = new CountDownLatch(1);
        Thread canceller = Thread.ofPlatform().start(() -> {
            try {
                threeDeltas.await();
                token.cancel();
                cancelled.countDown();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        List<String> seen = new ArrayList<>();
        assertThatThrownBy(() -> engine.generate(
                        request,
                        "cancel",
                        delta -> {
                            seen.add(delta);
                            threeDeltas.countDown();
                            if (seen.size() == 3) {
                                await(cancelled);
                            }
                        },
                        token))
                .isInstanceOf(AgentException.class)
                .extracting(e -> ((AgentException) e).code())
                .isEqualTo(ErrorCode.CANCELLED);
        canceller.join();
        // No delta after the cancel: decoding stopped at the next token, not at the end of the 400-token budget.
        assertThat(seen).hasSize(3);
        assertThat(engine.slotTable().await(t -> t.busySlots() == 0, 30_000)).isTrue();

        Run after = run(request, "cancel");
        assertThat(after.text()).isEqualTo(reference.text());
    }

    @Test
    void aRequestCancelledWhileQueuedLeavesAtOnceAndNoSlotStaysBusy() throws Exception {
        // Both slots are taken by requests that wait for the computing this test holds.
        AutoCloseable hold = holdCompute();
        CompletableFuture<EngineResult> first;
        CompletableFuture<EngineResult> second;
        try {
            first = generateAsync(greedy(STORY, 8), "queue-1", CancellationToken.create());
            second = generateAsync(greedy("hello guard", 8), "queue-2", CancellationToken.create());
            assertThat(engine.slotTable().await(t -> t.busySlots() == 2, 30_000))
                    .isTrue();
            CancellationToken token = CancellationToken.create();
            CompletableFuture<EngineResult> queued = generateAsync(greedy(STORY, 8), "queue-3", token);
            assertThat(engine.slotTable().await(t -> t.waiting() == 1, 30_000)).isTrue();
            token.cancel();
            assertThatThrownBy(() -> queued.get(10, TimeUnit.SECONDS))
                    .cause()
                    .isInstanceOf(AgentException.class)
                    .extracting(e -> ((AgentException) e).code())
                    .isEqualTo(ErrorCode.CANCELLED);
            assertThat(engine.slotTable().waiting()).isZero();
            assertThat(first).isNotDone();
            assertThat(second).isNotDone();
        } finally {
            hold.close();
        }
        assertThat(first.get(60, TimeUnit.SECONDS).text()).isNotEmpty();
        assertThat(second.get(60, TimeUnit.SECONDS).text()).isNotEmpty();
        assertThat(engine.slotTable().await(t -> t.busySlots() == 0, 30_000)).isTrue();
    }

    @Test
    void twoSessionsGenerateAtOnceAndBothComplete() throws Exception {
        CompletableFuture<EngineResult> a =
                generateAsync(greedy(longText("both", 30), 200), "both-a", CancellationToken.create());
        CompletableFuture<EngineResult> b =
                generateAsync(greedy(longText("twice", 30), 200), "both-b", CancellationToken.create());
        assertThat(a.get(60, TimeUnit.SECONDS).text()).isNotEmpty();
        assertThat(b.get(60, TimeUnit.SECONDS).text()).isNotEmpty();
        assertThat(engine.slotTable().await(t -> t.busySlots() == 0, 30_000)).isTrue();
    }

    @Test
    void theSecondTurnReusesThePromptCacheExactly() throws Exception {
        String system = longText("cache system prompt", 300);
        String answer = "{\"choice\": \"flee\"}";
        String grammar = "root ::= " + Json.write(Json.mapper().getNodeFactory().textNode(answer));
        List<ChatMessage> turn1 = List.of(new ChatMessage("system", system), new ChatMessage("user", "a dragon"));
        String prompt1 = engine.renderChat(turn1);
        EngineResult first = engine.generate(forced(prompt1, grammar, 1), "cache", d -> {}, CancellationToken.create());
        assertThat(first.text()).isEqualTo(answer);

        List<ChatMessage> turn2 = new ArrayList<>(turn1);
        turn2.add(new ChatMessage("assistant", answer));
        turn2.add(new ChatMessage("user", "and now?"));
        String prompt2 = engine.renderChat(turn2);
        assertThat(prompt2).startsWith(prompt1 + answer);
        int[] tokens1 = engine.promptTokens(prompt1);
        int answerTokens = engine.countTokens(answer);
        assertThat(engine.promptTokens(prompt2)).startsWith(engine.promptTokens(prompt1 + answer));
        assertThat(engine.promptTokens(prompt1 + answer)).hasSize(tokens1.length + answerTokens);

        EngineResult second =
                engine.generate(forced(prompt2, grammar, 1), "cache", d -> {}, CancellationToken.create());
        assertThat(second.inputTokens()).isEqualTo(engine.promptTokens(prompt2).length);
        assertCachedAfterAnswer(second, tokens1.length, answerTokens);
        // how much faster that makes the turn is measured by bench/run llama, not asserted here
    }

    /**
     * The JNI engine records the answer as its text re-encoded: BOS and the first prompt, and the answer but its last
     * token (llama.cpp never decodes the final token).
     */
    void assertCachedAfterAnswer(EngineResult second, int firstPromptTokens, int answerTokens) {
        assertThat(second.cachedInputTokens()).isEqualTo(firstPromptTokens + answerTokens - 1);
    }

    @Test
    void anotherSessionDoesNotEvictTheFirstSessionsCache() throws Exception {
        String promptA = chat(longText("session a keeps its cache", 420), "go");
        String promptB = chat(longText("session b elsewhere", 60), "go");
        int tokensA = engine.promptTokens(promptA).length;
        engine.generate(greedy(promptA, 1), "keep-a", d -> {}, CancellationToken.create());
        engine.generate(greedy(promptB, 1), "keep-b", d -> {}, CancellationToken.create());
        EngineResult again =
                engine.generate(greedy(promptA + " more", 1), "keep-a", d -> {}, CancellationToken.create());
        int common = SlotTable.commonPrefix(engine.promptTokens(promptA), engine.promptTokens(promptA + " more"));
        assertThat(common).isGreaterThan(tokensA - 3);
        assertThat(again.cachedInputTokens()).isEqualTo(common);
    }

    @Test
    void aPromptThatDoesNotFitFailsWithContextSizeExceeded() throws Exception {
        StringBuilder text = new StringBuilder("attack");
        while (engine.countTokens(text.toString()) < engine.contextSize() - 2) {
            text.append(" attack");
        }
        assertThat(engine.promptTokens(text.toString())).hasSize(engine.contextSize() - 1);
        EngineResult fits =
                engine.generate(greedy(text.toString(), 100), "overflow", d -> {}, CancellationToken.create());
        assertThat(fits.outputTokens()).isLessThanOrEqualTo(1);
        text.append(" attack");
        assertThatThrownBy(() ->
                        engine.generate(greedy(text.toString(), 1), "overflow", d -> {}, CancellationToken.create()))
                .isInstanceOf(AgentException.class)
                .extracting(e -> ((AgentException) e).code())
                .isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED);
    }

    @Test
    void chatMlTemplateRendersLikeHandWrittenChatMlWithContentsVerbatim() {
        String emoji = "Grüße 😀🐉 𝄞";
        String jinja = "{{ messages[0]['content'] }} {% if true %}x{% endif %} {# c #} <|im_start|>";
        List<ChatMessage> messages = List.of(
                new ChatMessage("system", "You are a guard."),
                new ChatMessage("user", emoji),
                new ChatMessage("assistant", jinja),
                new ChatMessage("tool", "{\"gold\": 3}"),
                new ChatMessage("user", "ok"));
        String expected = "<|im_start|>system\nYou are a guard.<|im_end|>\n<|im_start|>user\n" + emoji + "<|im_end|>\n"
                + "<|im_start|>assistant\n" + jinja + "<|im_end|>\n<|im_start|>tool\n{\"gold\": 3}<|im_end|>\n"
                + "<|im_start|>user\nok<|im_end|>\n<|im_start|>assistant\n";
        assertThat(engine.renderChat(messages)).isEqualTo(expected);
        assertThat(engine.renderChat(List.of(new ChatMessage("user", "hi"))))
                .isEqualTo("<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
    }

    @Test
    void aModelWithoutTemplateRendersChatMlAndSharesTheProcessGate() throws Exception {
        SlotEngine plain = TinyEngines.noTemplate(kind());
        assertThat(plain.name()).isEqualTo("tiny-no-template");
        List<ChatMessage> messages = List.of(
                new ChatMessage("system", "s 😀"), new ChatMessage("user", "{{u}}"), new ChatMessage("tool", "t"));
        assertThat(plain.renderChat(messages)).isEqualTo(ChatRenderer.chatMl(messages));
        // Two engines asked at once: both complete (the gate lets one model compute at a time) with what each
        // gives alone. Each is warmed first, so both runs of an engine find the same prompt cache.
        plain.generate(greedy(STORY, 64), "plain", d -> {}, CancellationToken.create());
        String plainAlone = plain.generate(greedy(STORY, 64), "plain", d -> {}, CancellationToken.create())
                .text();
        run(greedy(STORY, 64), "plain");
        String mineAlone = run(greedy(STORY, 64), "plain").text();
        CompletableFuture<EngineResult> other = CompletableFuture.supplyAsync(() -> {
            try {
                return plain.generate(greedy(STORY, 64), "plain", d -> {}, CancellationToken.create());
            } catch (AgentException e) {
                throw new CompletionException(e);
            }
        });
        EngineResult mine = run(greedy(STORY, 64), "plain").result();
        assertThat(other.get(60, TimeUnit.SECONDS).text()).isEqualTo(plainAlone);
        assertThat(mine.text()).isEqualTo(mineAlone);
    }

    @Test
    void threadsDoNotGrowOverManyGenerations() throws Exception {
        run(greedy(STORY, 4), "threads");
        int before = Thread.getAllStackTraces().size();
        long workersBefore = workers();
        for (int i = 0; i < 200; i++) {
            run(new EngineRequest(STORY, null, 4, i % 2 == 0 ? 0 : 0.8, 0, 1, i), "threads-" + (i % 3));
        }
        int after = Thread.getAllStackTraces().size();
        assertThat(after).isLessThanOrEqualTo(before);
        // other test classes in this JVM may have opened engines of their own: compare, do not count absolutely
        assertThat(workers()).isEqualTo(workersBefore);
    }

    private static long workers() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("oam-llama-"))
                .count();
    }

    private static CompletableFuture<EngineResult> generateAsync(
            EngineRequest request, Object session, CancellationToken token) {
        CompletableFuture<EngineResult> future = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                future.complete(engine.generate(request, session, d -> {}, token));
            } catch (Throwable e) {
                future.completeExceptionally(e);
            }
        });
        return future;
    }

    private static void await(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
