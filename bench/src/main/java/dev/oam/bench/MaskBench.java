package dev.oam.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.game.decision.DecisionOption;
import dev.oam.game.decision.Decisions;
import dev.oam.game.npc.NpcOptions;
import dev.oam.game.npc.NpcPrompts;
import dev.oam.game.npc.Persona;
import dev.oam.model.llama.LlamaLanguageModel;
import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.grammar.GbnfCompiler;
import dev.oam.model.llama.grammar.GgufVocabulary;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.TokenConstraint;
import dev.oam.model.llama.grammar.TokenVocabulary;
import dev.oam.model.llama.prompt.ChatMessage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * What the Java grammar constraint ({@link GbnfCompiler}) costs per step on Gemma 3's 262,144-token vocabulary (not a
 * test): for the grammars {@code LlamaLanguageModel} really builds for a tool call, an NPC reply and a decision, it
 * replays random generations (random allowed tokens, longer pieces preferred, strings written mostly without closing
 * early, as a model's would be) and times {@code allows}, {@code fillMask} on a first visit (the grammar's DFA cold, no
 * mask cache), on a repeat visit without the cache (a pure trie walk), from the cache, {@code accept}, and a masked
 * argmax over 262k logits. Run it with {@code bench/run mask}; progress goes to stderr, the table to stdout.
 */
public final class MaskBench {
    private MaskBench() {}

    public static void main(String[] args) throws Exception {
        String model = System.getenv(dev.oam.testing.RealModels.GEMMA_VARIABLE);
        boolean print = false;
        int walks = 4;
        long seed = 1;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--model" -> model = args[++i];
                case "--walks" -> walks = Integer.parseInt(args[++i]);
                case "--seed" -> seed = Long.parseLong(args[++i]);
                case "--print-grammars" -> print = true;
                case "--help" -> {
                    System.out.println(
                            "bench/run mask [--model PATH.gguf (Gemma 3 270M)] [--walks N (4)] [--seed N (1)] [--print-grammars]");
                    return;
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (model == null) {
            throw new IllegalArgumentException("no model: pass --model or set OAM_TEST_GEMMA_MODEL");
        }
        long t0 = System.nanoTime();
        GgufFile gguf = GgufFile.read(Path.of(model));
        TokenVocabulary vocabulary = GgufVocabulary.of(gguf);
        long t1 = System.nanoTime();
        GbnfCompiler warm = GbnfCompiler.create(vocabulary);
        long t2 = System.nanoTime();
        System.err.printf(
                Locale.US,
                "bench: %s: vocabulary read in %.0f ms, trie of %,d nodes built in %.0f ms, longest piece %d bytes%n",
                gguf.name(),
                (t1 - t0) / 1e6,
                warm.trieNodes(),
                (t2 - t1) / 1e6,
                warm.longestPiece());

        Map<String, Grammar> grammars = grammars();
        if (print) {
            grammars.forEach((name, grammar) -> System.err.println("bench: grammar " + name + ":\n" + grammar.gbnf()));
        }
        grammars.forEach((name, grammar) -> System.err.println("bench: grammar " + name + ": "
                + grammar.gbnf().length() + " chars, "
                + grammar.gbnf().lines().count() + " rules; strings: "
                + grammar.gbnf().lines().filter(l -> l.startsWith("string-")).toList()));

        // warm-up: the JIT compiles the walk, allows and accept on a compiler of its own
        for (Grammar text : grammars.values()) {
            for (int w = 0; w < 2; w++) {
                List<Integer> tokens = walk(warm, vocabulary, text, new Random(seed + 1000 + w));
                replay(warm, vocabulary, text, tokens, null, new Random(seed));
            }
        }

        StringBuilder table = new StringBuilder();
        table.append(String.format(
                Locale.US,
                "Java grammar masks on %s (%,d tokens, %,d trie nodes), %d generations per grammar%n",
                gguf.name(),
                vocabulary.size(),
                warm.trieNodes(),
                walks));
        table.append(String.format(
                Locale.US,
                "%-10s %6s  %-29s %10s %10s %10s %10s%n",
                "grammar",
                "steps",
                "operation",
                "mean µs",
                "p50 µs",
                "p90 µs",
                "max µs"));
        for (Map.Entry<String, Grammar> grammar : grammars.entrySet()) {
            GbnfCompiler uncached = GbnfCompiler.create(vocabulary, 0);
            GbnfCompiler cached = GbnfCompiler.create(vocabulary);
            Timings first = new Timings();
            Timings again = new Timings();
            Timings hits = new Timings();
            int steps = 0;
            for (int w = 0; w < walks; w++) {
                List<Integer> tokens = walk(warm, vocabulary, grammar.getValue(), new Random(seed + w));
                steps += tokens.size();
                replay(uncached, vocabulary, grammar.getValue(), tokens, first, new Random(seed + w));
                replay(uncached, vocabulary, grammar.getValue(), tokens, again, new Random(seed + w));
                replay(cached, vocabulary, grammar.getValue(), tokens, null, new Random(seed + w)); // fills the cache
                replay(cached, vocabulary, grammar.getValue(), tokens, hits, new Random(seed + w));
            }
            String name = grammar.getKey();
            row(table, name, steps, "allows (one token)", hits.allows);
            row(table, name, steps, "fillMask, first visit", first.mask);
            row(table, name, steps, "fillMask, uncached (warm DFA)", again.mask);
            row(table, name, steps, "  of which < 1000 allowed", bucket(again, false));
            row(table, name, steps, "  of which >= 1000 allowed", bucket(again, true));
            row(table, name, steps, "fillMask, cached", hits.mask);
            row(table, name, steps, "accept", hits.accept);
            row(table, name, steps, "masked argmax (262k)", hits.argmax);
            row(table, name, steps, "allowed tokens per step", hits.allowed);
            System.err.println("bench: " + name + ": " + cached.cacheStats());
        }
        float[] logits = new float[vocabulary.size()];
        Random random = new Random(seed);
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) random.nextGaussian();
        }
        List<Double> plain = new ArrayList<>();
        int sink = 0;
        for (int i = 0; i < 200; i++) {
            long s = System.nanoTime();
            sink += argmax(logits);
            plain.add((System.nanoTime() - s) / 1e3);
        }
        row(table, "-", 200, "plain argmax (262k)", plain);
        System.out.print(table);
        if (sink == 42) {
            System.err.println();
        }
    }

    /** Per-step samples, in µs (allowed: a count). */
    private static final class Timings {
        final List<Double> allows = new ArrayList<>();
        final List<Double> mask = new ArrayList<>();
        final List<Double> accept = new ArrayList<>();
        final List<Double> argmax = new ArrayList<>();
        final List<Double> allowed = new ArrayList<>();
    }

    /** A generation: random allowed tokens (the longest of a few draws), ending at end of turn when it may. */
    private static List<Integer> walk(
            GbnfCompiler compiler, TokenVocabulary vocabulary, Grammar grammar, Random random) {
        TokenConstraint c = compiler.start(grammar);
        long[] mask = new long[(vocabulary.size() + 63) >>> 6];
        List<Integer> tokens = new ArrayList<>();
        int end = -1;
        for (int t = 0; t < vocabulary.size() && end < 0; t++) {
            if (vocabulary.isEndOfGeneration(t)) {
                end = t;
            }
        }
        for (int step = 0; step < 400; step++) {
            if (c.canEnd() && (c.isComplete() || random.nextInt(4) == 0)) {
                tokens.add(end);
                return tokens;
            }
            c.fillMask(mask);
            List<Integer> allowed = new ArrayList<>();
            for (int i = 0; i < mask.length; i++) {
                for (long w = mask[i]; w != 0; w &= w - 1) {
                    int t = (i << 6) + Long.numberOfTrailingZeros(w);
                    if (!vocabulary.isControl(t)) {
                        allowed.add(t);
                    }
                }
            }
            // like a model writing text: inside a string (a big mask) mostly pieces without a quote, so strings get
            // long; never an empty string; otherwise the longer of a few draws
            boolean inText = allowed.size() > 1000 && random.nextInt(30) != 0;
            int token = -1;
            for (int k = 0; k < 16 && (token < 0 || k < 4); k++) {
                int other = allowed.get(random.nextInt(allowed.size()));
                String piece = new String(vocabulary.piece(other), java.nio.charset.StandardCharsets.UTF_8);
                if ((inText && piece.indexOf('"') >= 0) || piece.contains("\"\"")) {
                    continue;
                }
                if (token < 0 || vocabulary.pieceLength(other) > vocabulary.pieceLength(token)) {
                    token = other;
                }
            }
            if (token < 0) {
                token = allowed.get(random.nextInt(allowed.size()));
            }
            c.accept(token);
            tokens.add(token);
        }
        return tokens;
    }

    /** Replays {@code tokens}, timing each operation into {@code into} (null: untimed). */
    private static void replay(
            GbnfCompiler compiler,
            TokenVocabulary vocabulary,
            Grammar grammar,
            List<Integer> tokens,
            Timings into,
            Random random) {
        TokenConstraint c = compiler.start(grammar);
        long[] mask = new long[(vocabulary.size() + 63) >>> 6];
        float[] logits = new float[vocabulary.size()];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) random.nextGaussian();
        }
        int[] probes = new int[256];
        for (int token : tokens) {
            for (int i = 0; i < probes.length; i++) {
                probes[i] = random.nextInt(vocabulary.size());
            }
            long s0 = System.nanoTime();
            int allowedProbes = 0;
            for (int probe : probes) {
                allowedProbes += c.allows(probe) ? 1 : 0;
            }
            long s1 = System.nanoTime();
            c.fillMask(mask);
            long s2 = System.nanoTime();
            int best = maskedArgmax(logits, mask);
            long s3 = System.nanoTime();
            c.accept(token);
            long s4 = System.nanoTime();
            if (into != null) {
                into.allows.add((s1 - s0) / 1e3 / probes.length);
                into.mask.add((s2 - s1) / 1e3);
                into.argmax.add((s3 - s2) / 1e3);
                into.accept.add((s4 - s3) / 1e3);
                int count = 0;
                for (long w : mask) {
                    count += Long.bitCount(w);
                }
                into.allowed.add((double) count);
            }
            if (best == -2 && allowedProbes < 0) {
                throw new IllegalStateException();
            }
        }
    }

    /** The allowed token with the highest logit: visits only the set bits. */
    static int maskedArgmax(float[] logits, long[] mask) {
        int best = -1;
        float max = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < mask.length; i++) {
            for (long w = mask[i]; w != 0; w &= w - 1) {
                int t = (i << 6) + Long.numberOfTrailingZeros(w);
                if (t < logits.length && logits[t] > max) {
                    max = logits[t];
                    best = t;
                }
            }
        }
        return best;
    }

    private static int argmax(float[] logits) {
        int best = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[best]) {
                best = i;
            }
        }
        return best;
    }

    /** The uncached mask times of the steps with few (structure) or many (string body) allowed tokens. */
    private static List<Double> bucket(Timings timings, boolean many) {
        List<Double> out = new ArrayList<>();
        for (int i = 0; i < timings.mask.size(); i++) {
            if ((timings.allowed.get(i) >= 1000) == many) {
                out.add(timings.mask.get(i));
            }
        }
        return out;
    }

    private static void row(StringBuilder table, String grammar, int steps, String operation, List<Double> samples) {
        steps = operation.startsWith("  ") ? samples.size() : steps;
        double[] v = samples.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        double mean = Arrays.stream(v).average().orElse(0);
        table.append(String.format(
                Locale.US,
                "%-10s %6d  %-29s %10.2f %10.2f %10.2f %10.2f%n",
                grammar,
                steps,
                operation,
                mean,
                at(v, 0.5),
                at(v, 0.9),
                v.length == 0 ? 0 : v[v.length - 1]));
    }

    private static double at(double[] sorted, double q) {
        return sorted.length == 0 ? 0 : sorted[Math.min(sorted.length - 1, (int) (q * sorted.length))];
    }

    /** The grammars {@code LlamaLanguageModel} builds for a tool call, an NPC reply and a decision. */
    static Map<String, Grammar> grammars() throws Exception {
        Map<String, Grammar> out = new LinkedHashMap<>();
        ToolDefinition openGate =
                new ToolDefinition("open_gate", "Opens a named gate.", (ObjectNode) Json.parse("""
                {"type":"object","properties":{"gate":{"type":"string","enum":["north","south","east"]},
                 "reason":{"type":"string"},"force":{"type":"boolean"}},"required":["gate","reason"]}"""), null);
        ToolDefinition give =
                new ToolDefinition("give_item", "Gives the player an item.", (ObjectNode) Json.parse("""
                {"type":"object","properties":{"item":{"type":"string"},"count":{"type":"integer","minimum":1,"maximum":20}},
                 "required":["item","count"]}"""), null);
        out.put("tool call", capture(request(List.of(openGate, give), ToolCallingMode.REQUIRED, null)));
        ObjectNode reply = NpcPrompts.replySchema(Persona.named("Bram"), NpcOptions.defaults(Duration.ofSeconds(5)));
        out.put(
                "NPC reply",
                capture(request(List.of(), ToolCallingMode.DISALLOWED, GenerationSchema.convert(reply, "Reply"))));
        ObjectNode decision = Decisions.schema(
                List.of(DecisionOption.of("fight"), DecisionOption.of("flee"), DecisionOption.of("negotiate")));
        out.put(
                "decision",
                capture(request(
                        List.of(), ToolCallingMode.DISALLOWED, GenerationSchema.convert(decision, "Decision"))));
        return out;
    }

    private static ModelRequest request(List<ToolDefinition> tools, ToolCallingMode mode, GenerationSchema schema) {
        return new ModelRequest(
                "You are Bram, the gate guard.",
                null,
                List.of(TranscriptEntry.Prompt.of("The north gate is jammed. What now?", null)),
                tools,
                mode,
                false,
                schema,
                GenerationOptions.DEFAULT,
                -1);
    }

    static Grammar capture(ModelRequest request) throws AgentException {
        CaptureEngine engine = new CaptureEngine();
        LlamaLanguageModel model =
                new LlamaLanguageModel("capture", 8192, CompletableFuture.completedFuture(engine), null, List.of("en"));
        try {
            model.respond(request, ModelListener.NONE, CancellationToken.create());
        } catch (CaptureEngine.Captured expected) {
            // the request is recorded
        }
        if (engine.grammar == null) {
            throw new IllegalStateException("the adapter built no grammar for " + request.mode());
        }
        return engine.grammar;
    }

    /** Records the grammar of the request the adapter builds and stops there. */
    private static final class CaptureEngine implements Engine {
        static final class Captured extends RuntimeException {
            Captured() {
                super(null, null, false, false);
            }
        }

        Grammar grammar;

        @Override
        public String name() {
            return "capture";
        }

        @Override
        public int contextSize() {
            return 8192;
        }

        @Override
        public int countTokens(String text) {
            return text.length() / 3 + 1;
        }

        @Override
        public String renderChat(List<ChatMessage> messages) {
            StringBuilder out = new StringBuilder();
            messages.forEach(m -> out.append(m).append('\n'));
            return out.toString();
        }

        @Override
        public Set<String> controlTokens() {
            return Set.of();
        }

        @Override
        public EngineResult generate(
                EngineRequest request, Object sessionKey, Consumer<String> onDelta, CancellationToken token) {
            grammar = request.grammar();
            throw new Captured();
        }
    }
}
