package dev.oam.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.model.llama.LlamaEngines;
import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.prompt.ChatMessage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;

/**
 * The FFM engine's sections of {@code bench/run llama} (issue 14), on one model file: (a) 8 concurrent sessions against
 * one at a time, (b) cancel during a 2,000-token prompt, (c) constrained against free-text decoding with the Java
 * grammar and llama.cpp's side by side. Every rate counts the tokens the engine sampled
 * ({@code EngineResult.outputTokens()} on FFM), never re-encoded text. All engines are opened with
 * {@code oam.llama.engine=ffm}; figures are printed, never asserted.
 */
final class EngineSections {
    static final int SESSIONS = 8;
    static final int LANE_CONTEXT = 2304;

    private final Path file;
    private final String label;
    private final int threads;
    private final int threadsBatch;
    private final int rounds;
    private final StringBuilder out = new StringBuilder();
    private final List<String> json = new ArrayList<>();

    EngineSections(Path file, String label, int threads, int threadsBatch, int rounds) {
        this.file = file;
        this.label = label;
        this.threads = threads;
        this.threadsBatch = threadsBatch;
        this.rounds = rounds;
    }

    /** Runs the three sections; returns the report text (JSON lines at the end). */
    String run() throws Exception {
        String loadBefore = Meter.loadAverage();
        EngineSettings lanes = EngineSettings.defaults()
                .withContextSize(LANE_CONTEXT)
                .withSlots(SESSIONS)
                .withThreads(threads)
                .withThreadsBatch(threadsBatch);
        Engine engine = open(lanes, "java");
        Engine nativeGrammar = open(lanes.withSlots(1), "native");
        if (!LlamaEngines.isFfm(engine) || !LlamaEngines.isFfm(nativeGrammar)) {
            throw new BenchException("the FFM engine did not load (JDK 22+ on Linux or macOS needed)");
        }
        out.append(String.format(
                Locale.US,
                "%n== FFM engine, %s (%s): %d lanes of %d tokens, %d/%d threads; load before %s%n",
                label,
                file.getFileName(),
                SESSIONS,
                LANE_CONTEXT,
                threads,
                threadsBatch,
                loadBefore));
        String sections = System.getProperty("oam.bench.ffmSections", "abc"); // a subset on a busy machine
        if (sections.contains("a")) {
            decodeConcurrency(engine, nativeGrammar);
            concurrency(engine);
        }
        if (sections.contains("b")) {
            cancel(engine);
        }
        if (sections.contains("c")) {
            constrained(engine, nativeGrammar);
        }
        out.append("load after ").append(Meter.loadAverage()).append('\n');
        LlamaEngines.close(engine);
        LlamaEngines.close(nativeGrammar);
        StringBuilder all = new StringBuilder(out).append('\n');
        json.forEach(line -> all.append(line).append('\n'));
        return all.toString();
    }

    private Engine open(EngineSettings settings, String grammar) throws Exception {
        String engineBefore = System.getProperty("oam.llama.engine");
        System.setProperty("oam.llama.engine", "ffm");
        System.setProperty("oam.llama.grammar", grammar);
        try {
            // read after the properties are set: the bench's own entry point
            return LlamaEngines.open(
                    GgufFile.read(file),
                    settings,
                    dev.oam.model.llama.LlamaSettings.read(dev.oam.core.Environment.system()));
        } finally {
            System.clearProperty("oam.llama.grammar");
            if (engineBefore == null) {
                System.clearProperty("oam.llama.engine");
            } else {
                System.setProperty("oam.llama.engine", engineBefore);
            }
        }
    }

    private static String npc(Engine engine, int i) {
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
                                .get(i % 8))));
    }

    /** What one request took, measured on the caller's thread. */
    record Run(EngineResult result, long startNanos, long firstNanos, long endNanos) {
        double firstMillis() {
            return firstNanos == 0 ? Double.NaN : (firstNanos - startNanos) / 1e6;
        }

        /** Sampled tokens after the first over the time from the first delta to the end. */
        double decodeRate() {
            int n = result.outputTokens();
            return n < 2 || firstNanos == 0 || endNanos <= firstNanos
                    ? Double.NaN
                    : (n - 1) / ((endNanos - firstNanos) / 1e9);
        }
    }

    /** {@value #SESSIONS} requests started on virtual threads at one moment, and that moment. */
    private record Together(List<CompletableFuture<Run>> runs, long startNanos) {}

    private static Together together(Engine engine, IntFunction<EngineRequest> request, IntFunction<String> session) {
        List<CompletableFuture<Run>> runs = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        for (int i = 0; i < SESSIONS; i++) {
            int index = i;
            runs.add(CompletableFuture.supplyAsync(
                    () -> {
                        try {
                            go.await();
                            return generate(
                                    engine, request.apply(index), session.apply(index), CancellationToken.create());
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    },
                    command -> Thread.ofVirtual().start(command)));
        }
        long start = System.nanoTime();
        go.countDown();
        return new Together(runs, start);
    }

    private static Run generate(Engine engine, EngineRequest request, Object session, CancellationToken token)
            throws AgentException {
        long start = System.nanoTime();
        long[] first = new long[1];
        EngineResult r = engine.generate(
                request,
                session,
                d -> {
                    if (first[0] == 0) {
                        first[0] = System.nanoTime();
                    }
                },
                token);
        return new Run(r, start, first[0], System.nanoTime());
    }

    // ---- (a) concurrency ----------------------------------------------------------------------------------------

    /**
     * Goal 1 as the issue states it: the aggregate decode rate of {@value #SESSIONS} sessions generating together
     * against one session at a time, each session's prompt already in its lane on both sides (read once, untimed), so
     * both sides decode the same tokens and only the batching differs. Also: per-session time to first token together
     * (p95), the slowest session's share (fairness), and how many greedy texts equal the same request run alone.
     */
    private void decodeConcurrency(Engine engine, Engine oneLane) throws Exception {
        int maxTokens = 64;
        List<Double> ratios = new ArrayList<>();
        List<Double> oneLaneRates = new ArrayList<>();
        List<Double> oneLaneRatios = new ArrayList<>();
        List<Double> aloneRates = new ArrayList<>();
        List<Double> togetherRates = new ArrayList<>();
        List<Double> p95s = new ArrayList<>();
        List<Double> slowest = new ArrayList<>();
        int same = 0;
        int compared = 0;
        String[] prompts = new String[SESSIONS];
        for (int i = 0; i < SESSIONS; i++) {
            prompts[i] = "Decode. " + npc(engine, i);
            generate(
                    engine,
                    new EngineRequest(prompts[i], null, 1, 0, 0, 1, 1),
                    "decode-" + i,
                    CancellationToken.create());
        }
        for (int round = 0; round < rounds; round++) {
            progress("(a) decode round " + (round + 1) + "/" + rounds + ": " + SESSIONS
                    + " sessions with cached prompts, one at a" + " time, then together (load " + Meter.loadAverage()
                    + ")");
            long aloneTokens = 0;
            long aloneNanos = 0;
            String[] alone = new String[SESSIONS];
            for (int i = 0; i < SESSIONS; i++) {
                Run r = generate(
                        engine,
                        new EngineRequest(prompts[i], null, maxTokens, 0, 0, 1, 1),
                        "decode-" + i,
                        CancellationToken.create());
                aloneTokens += r.result().outputTokens();
                aloneNanos += r.endNanos() - r.startNanos();
                alone[i] = r.result().text();
            }
            // The same requests on the 1-lane engine, which pads no generation step (the 8-lane engine pads a step of
            // one
            // row, which makes a lone session there slower): its decode phase (after each first token) is the baseline
            // a game with one slot gets.
            long oneLaneTokens = 0;
            long oneLaneNanos = 0;
            for (int i = 0; i < SESSIONS; i++) {
                Run r = generate(
                        oneLane,
                        new EngineRequest(prompts[i], null, maxTokens, 0, 0, 1, 1),
                        "one-lane-" + i,
                        CancellationToken.create());
                if (r.firstNanos() != 0 && r.result().outputTokens() > 1) {
                    oneLaneTokens += r.result().outputTokens() - 1;
                    oneLaneNanos += r.endNanos() - r.firstNanos();
                }
            }
            Together launched = together(
                    engine,
                    index -> new EngineRequest(prompts[index], null, maxTokens, 0, 0, 1, 1),
                    index -> "decode-" + index);
            List<CompletableFuture<Run>> together = launched.runs();
            long start = launched.startNanos();
            long end = 0;
            long tokens = 0;
            double[] ttft = new double[SESSIONS];
            double slowestRate = Double.MAX_VALUE;
            double fastestRate = 0;
            for (int i = 0; i < SESSIONS; i++) {
                Run r = together.get(i).get(600, TimeUnit.SECONDS);
                end = Math.max(end, r.endNanos());
                tokens += r.result().outputTokens();
                ttft[i] = r.firstNanos() == 0 ? Double.NaN : (r.firstNanos() - start) / 1e6;
                double rate = r.result().outputTokens() / ((r.endNanos() - start) / 1e9);
                slowestRate = Math.min(slowestRate, rate);
                fastestRate = Math.max(fastestRate, rate);
                compared++;
                same += r.result().text().equals(alone[i]) ? 1 : 0;
            }
            Arrays.sort(ttft);
            double aloneRate = aloneTokens / (aloneNanos / 1e9);
            double togetherRate = tokens / ((end - start) / 1e9);
            aloneRates.add(aloneRate);
            togetherRates.add(togetherRate);
            ratios.add(togetherRate / aloneRate);
            double oneLaneRate = oneLaneTokens / (oneLaneNanos / 1e9);
            oneLaneRates.add(oneLaneRate);
            oneLaneRatios.add(togetherRate / oneLaneRate);
            p95s.add(ttft[(int) Math.ceil(SESSIONS * 0.95) - 1]);
            slowest.add(slowestRate / fastestRate);
            progress(String.format(
                    Locale.US,
                    "(a) decode round %d: %.1f alone vs %.1f together sampled tokens/s (%.2fx, %d vs %d"
                            + " tokens); 1-lane engine decode %.1f (%.2fx); ttft p95 %.0f ms; slowest/fastest session %.2f; same text %d of"
                            + " %d (load %s)",
                    round + 1,
                    aloneRate,
                    togetherRate,
                    togetherRate / aloneRate,
                    aloneTokens,
                    tokens,
                    oneLaneRate,
                    togetherRate / oneLaneRate,
                    p95s.getLast(),
                    slowest.getLast(),
                    same,
                    compared,
                    Meter.loadAverage()));
        }
        LlamaBench.Stat ratio = LlamaBench.Stat.of(ratios);
        out.append(String.format(
                Locale.US,
                "(a) decode, %d greedy sessions of up to %d sampled tokens, prompts already in their lanes:%n",
                SESSIONS,
                maxTokens));
        out.append(String.format(
                Locale.US,
                "    one at a time %s sampled tokens/s; %d together %s; ratio %s (anchor ≥ 3x: %s)%n",
                LlamaBench.Stat.of(aloneRates).text(1),
                SESSIONS,
                LlamaBench.Stat.of(togetherRates).text(1),
                ratio.text(2),
                ratio.median() >= 3 ? "met" : "NOT met"));
        LlamaBench.Stat oneLaneRatio = LlamaBench.Stat.of(oneLaneRatios);
        out.append(String.format(
                Locale.US,
                "    (a session alone decodes on the %d generation thread(s), %d together on the %d batch threads;"
                        + " the anchor, llama.cpp's batched-bench, ran 1 / 2)%n",
                threads,
                SESSIONS,
                threadsBatch));
        out.append(String.format(
                Locale.US,
                "    the same requests on a 1-lane engine, decode phase %s sampled tokens/s; 8 together"
                        + " on the 8-lane engine ÷ that %s (anchor ≥ 3x: %s)%n",
                LlamaBench.Stat.of(oneLaneRates).text(1),
                oneLaneRatio.text(2),
                oneLaneRatio.median() >= 3 ? "met" : "NOT met"));
        out.append(String.format(
                Locale.US,
                "    together: time to first token p95 %s ms; slowest ÷ fastest session's rate %s;"
                        + " greedy text together = alone: %d of %d%n",
                LlamaBench.Stat.of(p95s).text(0),
                LlamaBench.Stat.of(slowest).text(2),
                same,
                compared));
        json("decode concurrency ratio", ratio);
        json("decode concurrency ratio to a 1-lane engine", oneLaneRatio);
        json("decode concurrency 1-lane engine tokens/s", LlamaBench.Stat.of(oneLaneRates));
        json("decode concurrency alone tokens/s", LlamaBench.Stat.of(aloneRates));
        json("decode concurrency together tokens/s", LlamaBench.Stat.of(togetherRates));
        json("decode concurrency ttft p95 ms", LlamaBench.Stat.of(p95s));
        json("decode concurrency slowest/fastest", LlamaBench.Stat.of(slowest));
    }

    /** The same with fresh prompts on both sides: whole requests, prompt reading included. */
    private void concurrency(Engine engine) throws Exception {
        int maxTokens = 32;
        List<Double> ratios = new ArrayList<>();
        List<Double> decodeRatios = new ArrayList<>();
        List<Double> prefillRatios = new ArrayList<>();
        List<Double> p95s = new ArrayList<>();
        List<Double> aloneRates = new ArrayList<>();
        List<Double> togetherRates = new ArrayList<>();
        List<Double> aloneDecodeRates = new ArrayList<>();
        List<Double> togetherDecodeRates = new ArrayList<>();
        int same = 0;
        int compared = 0;
        for (int round = 0; round < rounds; round++) {
            progress("(a) round " + (round + 1) + "/" + rounds + ": " + SESSIONS
                    + " sessions one at a time, then together" + " (load " + Meter.loadAverage() + ")");
            // Both sides read fresh prompts of the same length ("Round 2r." alone, "Round 2r+1." together: no lane
            // holds more than "Round " of either), so both do the same prompt work.
            long aloneTokens = 0;
            long aloneNanos = 0;
            long aloneDecodeTokens = 0;
            long aloneDecodeNanos = 0;
            long alonePrefillNanos = 0;
            for (int i = 0; i < SESSIONS; i++) {
                EngineRequest request =
                        new EngineRequest("Round " + (2 * round) + ". " + npc(engine, i), null, maxTokens, 0, 0, 1, 1);
                Run r = generate(engine, request, "alone-" + round + "-" + i, CancellationToken.create());
                aloneTokens += r.result().outputTokens();
                aloneNanos += r.endNanos() - r.startNanos();
                if (r.firstNanos() != 0) {
                    aloneDecodeTokens += r.result().outputTokens() - 1;
                    aloneDecodeNanos += r.endNanos() - r.firstNanos();
                    alonePrefillNanos += r.firstNanos() - r.startNanos();
                }
            }
            int r0 = round;
            Together launched = together(
                    engine,
                    index -> new EngineRequest(
                            "Round " + (2 * r0 + 1) + ". " + npc(engine, index), null, maxTokens, 0, 0, 1, 1),
                    index -> "together-" + r0 + "-" + index);
            List<CompletableFuture<Run>> together = launched.runs();
            long start = launched.startNanos();
            long end = 0;
            long lastFirst = 0;
            long firstFirst = Long.MAX_VALUE;
            long tokens = 0;
            long decodeTokens = 0;
            double[] ttft = new double[SESSIONS];
            String[] batched = new String[SESSIONS];
            for (int i = 0; i < SESSIONS; i++) {
                Run r = together.get(i).get(600, TimeUnit.SECONDS);
                end = Math.max(end, r.endNanos());
                tokens += r.result().outputTokens();
                ttft[i] = r.firstNanos() == 0 ? Double.NaN : (r.firstNanos() - start) / 1e6;
                if (r.firstNanos() != 0) {
                    lastFirst = Math.max(lastFirst, r.firstNanos());
                    firstFirst = Math.min(firstFirst, r.firstNanos());
                    decodeTokens += r.result().outputTokens() - 1;
                }
                batched[i] = r.result().text();
            }
            // Greedy identity: the together prompts again, one at a time (cached now; not timed).
            for (int i = 0; i < SESSIONS; i++) {
                EngineRequest request = new EngineRequest(
                        "Round " + (2 * round + 1) + ". " + npc(engine, i), null, maxTokens, 0, 0, 1, 1);
                Run r = generate(engine, request, "again-" + round + "-" + i, CancellationToken.create());
                compared++;
                same += r.result().text().equals(batched[i]) ? 1 : 0;
            }
            Arrays.sort(ttft);
            double aloneRate = aloneTokens / (aloneNanos / 1e9);
            double togetherRate = tokens / ((end - start) / 1e9);
            // Decode phase: sampled tokens after each session's first over the time sessions spent generating
            // (alone: the sum of each one's; together: from the first first token to the last end, prefill of the
            // others interleaved, so a lower bound).
            double aloneDecode = aloneDecodeTokens / (aloneDecodeNanos / 1e9);
            double togetherDecode = decodeTokens / ((end - firstFirst) / 1e9);
            aloneRates.add(aloneRate);
            togetherRates.add(togetherRate);
            aloneDecodeRates.add(aloneDecode);
            togetherDecodeRates.add(togetherDecode);
            ratios.add(togetherRate / aloneRate);
            decodeRatios.add(togetherDecode / aloneDecode);
            // Prefill: the time until every session has its first token, together against the sum alone.
            prefillRatios.add(alonePrefillNanos / (double) (lastFirst - start));
            p95s.add(ttft[(int) Math.ceil(SESSIONS * 0.95) - 1]);
            progress(String.format(
                    Locale.US,
                    "(a) round %d: whole %.1f alone vs %.1f together tokens/s (%.2fx); decode %.1f vs %.1f"
                            + " (%.2fx); prompt phase %.2fx; ttft p95 %.0f ms; same text %d of %d (load %s)",
                    round + 1,
                    aloneRate,
                    togetherRate,
                    togetherRate / aloneRate,
                    aloneDecode,
                    togetherDecode,
                    togetherDecode / aloneDecode,
                    prefillRatios.getLast(),
                    p95s.getLast(),
                    same,
                    compared,
                    Meter.loadAverage()));
        }
        LlamaBench.Stat ratio = LlamaBench.Stat.of(ratios);
        out.append(String.format(
                Locale.US,
                "(a) concurrency, %d greedy sessions of up to 32 sampled tokens, every prompt fresh on both sides:%n",
                SESSIONS));
        out.append(String.format(
                Locale.US,
                "    whole requests: one at a time %s sampled tokens/s; %d together %s; ratio %s (anchor ≥ 3x: %s)%n",
                LlamaBench.Stat.of(aloneRates).text(1),
                SESSIONS,
                LlamaBench.Stat.of(togetherRates).text(1),
                ratio.text(2),
                ratio.median() >= 3 ? "met" : "NOT met"));
        out.append(String.format(
                Locale.US,
                "    decode phase: one at a time %s sampled tokens/s; together %s; ratio %s%n",
                LlamaBench.Stat.of(aloneDecodeRates).text(1),
                LlamaBench.Stat.of(togetherDecodeRates).text(1),
                LlamaBench.Stat.of(decodeRatios).text(2)));
        out.append(String.format(
                Locale.US,
                "    prompt phase: sum of times to first token alone ÷ time until all %d have one together %s%n",
                SESSIONS,
                LlamaBench.Stat.of(prefillRatios).text(2)));
        out.append(String.format(
                Locale.US,
                "    per-session time to first token together, p95 %s ms; greedy text batched = alone: %d of %d%n",
                LlamaBench.Stat.of(p95s).text(0),
                same,
                compared));
        json("concurrency ratio", ratio);
        json("concurrency decode ratio", LlamaBench.Stat.of(decodeRatios));
        json("concurrency prefill ratio", LlamaBench.Stat.of(prefillRatios));
        json("concurrency ttft p95 ms", LlamaBench.Stat.of(p95s));
        json("concurrency alone tokens/s", LlamaBench.Stat.of(aloneRates));
        json("concurrency together tokens/s", LlamaBench.Stat.of(togetherRates));
    }

    // ---- (b) cancel ---------------------------------------------------------------------------------------------

    private void cancel(Engine engine) throws Exception {
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
        // The next request has a prompt of a few hundred tokens, more than an idle lane of (a) holds, so the long
        // prompt
        // takes one of those lanes (a lane is chosen to destroy the fewest cached tokens), not the next request's.
        EngineRequest next = new EngineRequest(
                engine.renderChat(List.of(
                        new ChatMessage("system", "You keep the chronicle. " + lore.substring(0, 1500)),
                        new ChatMessage("user", "Who built the gate?"))),
                null,
                1,
                0,
                0,
                1,
                1);
        EngineRequest bystanderRequest = new EngineRequest(npc(engine, 3), null, 24, 0, 0, 1, 1);
        String bystanderAlone = generate(engine, bystanderRequest, "bystander", CancellationToken.create())
                .result()
                .text();
        // Prefill speed of a long prompt alone (what the per-decode time target costs): time to the first token.
        List<Double> prefill = new ArrayList<>();
        for (int round = 0; round < 2; round++) {
            String alone = engine.renderChat(
                    List.of(new ChatMessage("user", "Alone " + round + ". " + lore + "\nWho built the gate?")));
            Run r = generate(
                    engine,
                    new EngineRequest(alone, null, 1, 0, 0, 1, 1),
                    "prefill-" + System.nanoTime(),
                    CancellationToken.create());
            long first = r.firstNanos() == 0 ? r.endNanos() : r.firstNanos();
            prefill.add(engine.countTokens(alone) / ((first - r.startNanos()) / 1e9));
            progress(String.format(Locale.US, "(b0) prompt alone %.1f tokens/s", prefill.getLast()));
        }
        out.append(String.format(
                Locale.US,
                "(b0) a %d-token prompt alone: %s prompt tokens/s (decode target %s ms)%n",
                engine.countTokens(lore.toString()),
                LlamaBench.Stat.of(prefill).text(1),
                System.getProperty("oam.llama.decodeTargetMs", "default")));
        json("prefill alone tokens/s", LlamaBench.Stat.of(prefill));
        List<Double> answers = new ArrayList<>();
        List<Double> frees = new ArrayList<>();
        int harmed = 0;
        int promptTokens = 0;
        int cancelRounds = Math.max(3, rounds);
        for (int round = 0; round < cancelRounds; round++) {
            progress("(b) cancel round " + (round + 1) + "/" + cancelRounds + " (load " + Meter.loadAverage() + ")");
            generate(
                    engine,
                    next,
                    "next",
                    CancellationToken.create()); // its prompt cached (untimed): the next request measures the lane
            String prompt = engine.renderChat(
                    List.of(new ChatMessage("user", "Round " + round + ". " + lore + "\nWho built the gate?")));
            promptTokens = engine.countTokens(prompt);
            CancellationToken token = CancellationToken.create();
            AtomicLong answered = new AtomicLong();
            CompletableFuture<Run> bystander = CompletableFuture.supplyAsync(() -> {
                try {
                    return generate(engine, bystanderRequest, "bystander", CancellationToken.create());
                } catch (AgentException e) {
                    throw new IllegalStateException(e);
                }
            });
            CompletableFuture<Void> cancelled = CompletableFuture.runAsync(() -> {
                try {
                    engine.generate(
                            new EngineRequest(prompt, null, 16, 0, 0, 1, 1),
                            "long-" + System.nanoTime(),
                            d -> {},
                            token);
                } catch (AgentException e) {
                    answered.set(System.nanoTime());
                }
            });
            Thread.sleep(300 + 150L * round); // into the prompt
            long cancelAt = System.nanoTime();
            token.cancel();
            cancelled.get(120, TimeUnit.SECONDS);
            Run r = generate(engine, next, "next", CancellationToken.create());
            long first = r.firstNanos() == 0 ? r.endNanos() : r.firstNanos();
            if (answered.get() > 0) {
                answers.add((answered.get() - cancelAt) / 1e6);
            }
            frees.add((first - cancelAt) / 1e6);
            progress(String.format(
                    Locale.US,
                    "(b) round %d: answered %.1f ms, next first token %.1f ms (%d of its %d prompt" + " tokens cached)",
                    round + 1,
                    answered.get() > 0 ? (answered.get() - cancelAt) / 1e6 : Double.NaN,
                    frees.getLast(),
                    r.result().cachedInputTokens(),
                    r.result().inputTokens()));
            harmed += bystander.get(600, TimeUnit.SECONDS).result().text().equals(bystanderAlone) ? 0 : 1;
        }
        LlamaBench.Stat answer = LlamaBench.Stat.of(answers);
        LlamaBench.Stat free = LlamaBench.Stat.of(frees);
        double answerMax =
                answers.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
        double freeMax = frees.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
        out.append(String.format(
                Locale.US,
                "(b) cancel during a %d-token prompt, %d rounds (a bystander session generating meanwhile):%n",
                promptTokens,
                cancelRounds));
        out.append(String.format(
                Locale.US,
                "    cancelled response %s ms (anchor ≤ 100: %s); next request's first token (its prompt cached) %s ms"
                        + " after the cancel (anchor ≤ 250: %s); bystander output changed in %d of %d rounds%n",
                answer.text(1),
                answerMax <= 100 ? "met" : "NOT met at max " + Math.round(answerMax),
                free.text(1),
                freeMax <= 250 ? "met" : "NOT met at max " + Math.round(freeMax),
                harmed,
                cancelRounds));
        json("cancel response ms", answer);
        json("cancel next first token ms", free);
    }

    // ---- (c) constrained against free text ----------------------------------------------------------------------

    private void constrained(Engine javaGrammar, Engine nativeGrammar) throws Exception {
        Map<String, Grammar> grammars = new LinkedHashMap<>();
        grammars.put("free text", null);
        grammars.putAll(MaskBench.grammars());
        grammars.put(
                "schema",
                MaskBench.capture(new ModelRequest(
                        "You are Bram, the gate guard.",
                        null,
                        List.of(TranscriptEntry.Prompt.of("The goblin blocks the road. What do you do?", null)),
                        List.of(),
                        ToolCallingMode.DISALLOWED,
                        false,
                        GenerationSchema.convert(Json.parse("""
                        {"type":"object","properties":{
                          "reasoning":{"type":"string","maxLength":80},
                          "plan":{"type":"array","minItems":3,"maxItems":3,
                                  "items":{"type":"string","enum":["attack","flee","beg","trade","hide","talk"]}},
                          "choice":{"type":"string","enum":["attack","flee","beg","trade"]}},
                         "required":["reasoning","plan","choice"],"additionalProperties":false}"""), "Plan"),
                        GenerationOptions.DEFAULT,
                        -1)));
        String prompt = javaGrammar.renderChat(List.of(
                new ChatMessage("system", "You are Bram, the gate guard. Answer in JSON."),
                new ChatMessage("user", "The north gate is jammed and a goblin blocks the road. What now?")));
        Map<String, List<Double>> rates = new LinkedHashMap<>();
        Map<String, List<Integer>> counts = new LinkedHashMap<>();
        Map<String, String> texts = new LinkedHashMap<>();
        for (int round = 0; round < rounds; round++) {
            progress("(c) round " + (round + 1) + "/" + rounds + " (load " + Meter.loadAverage() + ")");
            for (Map.Entry<String, Grammar> g : grammars.entrySet()) {
                List<String> sides = g.getValue() == null
                        ? List.of("java")
                        : round % 2 == 0 ? List.of("java", "native") : List.of("native", "java");
                for (String side : sides) {
                    Engine engine = side.equals("java") ? javaGrammar : nativeGrammar;
                    EngineRequest request = new EngineRequest(prompt, g.getValue(), 64, 0, 0, 1, 1);
                    Run r = generate(engine, request, side + "-" + g.getKey(), CancellationToken.create());
                    String key = g.getKey() + (g.getValue() == null ? "" : ", " + side);
                    rates.computeIfAbsent(key, k -> new ArrayList<>()).add(r.decodeRate());
                    progress(String.format(
                            Locale.US,
                            "(c) %s: %d tokens, %.1f tokens/s",
                            key,
                            r.result().outputTokens(),
                            r.decodeRate()));
                    counts.computeIfAbsent(key, k -> new ArrayList<>())
                            .add(r.result().outputTokens());
                    texts.putIfAbsent(key, r.result().text());
                    if (g.getValue() != null
                            && !r.result().text().isEmpty()
                            && r.result().outputTokens() < 64) {
                        Json.parse(r.result().text()); // every finished constrained output parses
                    }
                }
            }
        }
        double free = LlamaBench.Stat.of(rates.get("free text")).median();
        out.append(String.format(
                Locale.US,
                "(c) decode rate in sampled tokens/s (greedy, up to 64 tokens; after the first token), "
                        + "Java grammar and llama.cpp's side by side:%n"));
        Table table = new Table("grammar", "sampled tokens", "tokens/s", "/ free text");
        for (Map.Entry<String, List<Double>> e : rates.entrySet()) {
            LlamaBench.Stat s = LlamaBench.Stat.of(e.getValue());
            List<Integer> n = counts.get(e.getKey());
            table.row(e.getKey(), n.get(0).toString(), s.text(1), String.format(Locale.US, "%.2f", s.median() / free));
            json("decode tokens/s, " + e.getKey(), s);
        }
        out.append(table.render());
        double worstJava = Double.MAX_VALUE;
        for (Map.Entry<String, List<Double>> e : rates.entrySet()) {
            if (e.getKey().endsWith(", java")) {
                worstJava = Math.min(worstJava, LlamaBench.Stat.of(e.getValue()).median() / free);
            }
        }
        out.append(String.format(
                Locale.US,
                "    worst Java-grammar / free text %.2f (anchor ≥ 0.9: %s)%n",
                worstJava,
                worstJava >= 0.9 ? "met" : "NOT met"));
        for (Map.Entry<String, String> e : texts.entrySet()) {
            String t = e.getValue().replace("\n", "\\n");
            out.append("    ")
                    .append(e.getKey())
                    .append(": ")
                    .append(t.length() > 100 ? t.substring(0, 100) + "…" : t)
                    .append('\n');
        }
    }

    private void json(String measure, LlamaBench.Stat s) {
        ObjectNode line = Json.object();
        line.put("bench", "llama-ffm");
        line.put("model", label);
        line.put("measure", measure);
        line.put("median", Math.round(s.median() * 100) / 100.0);
        line.put("min", Math.round(s.min() * 100) / 100.0);
        line.put("max", Math.round(s.max() * 100) / 100.0);
        line.put("runs", s.count());
        json.add(Json.write(line));
    }

    private static void progress(String message) {
        System.err.println("bench llama: " + message);
    }
}
