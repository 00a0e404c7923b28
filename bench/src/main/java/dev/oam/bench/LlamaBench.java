package dev.oam.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.Sampling;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.model.llama.LlamaLanguageModel;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.gguf.GgufException;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.jni.JniEngine;
import dev.oam.testing.gguf.TinyGguf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;

/**
 * The llama benchmark (not a test): prompt and generation speed of the embedded llama.cpp backend on a generated f16
 * model of about 480 MB, next to the binding's raw API with the same model parameters and threads. Run it with
 * {@code bench/run llama}; progress goes to stderr, the tables and JSON lines to stdout.
 *
 * <p>"Ours" is measured at the {@link LanguageModel} level ({@code LlamaLanguageModel.respond} over a
 * {@link JniEngine}): prompt rendering, grammar building, tokenising, the slot table and compute gate, the worker
 * hand-off and output parsing included. "Raw" runs the request our adapter built (captured just before the engine call:
 * same prompt text, grammar and sampling) with {@code LlamaModel.generate}. Both models live in this process (their
 * weights are one shared mmap of the file) and are driven from one thread, strictly one after the other and in
 * alternating order, so load from other programs hits both alike and they never compute at the same time.
 */
public final class LlamaBench {
    /** The settings of one run; see {@link #usage()}. */
    record Config(
            int threads,
            int threadsBatch,
            int warmup,
            int runs,
            int promptTokens,
            int generateTokens,
            int historyTokens,
            int contextSize,
            Path modelDir) {
        static Config defaults(Path root) {
            return new Config(1, 2, 1, 5, 500, 128, 800, 2048, root.resolve("bench/target/models"));
        }
    }

    /** One measured figure of one side; {@code tokens} is the count it was taken over (median of the runs). */
    private record Key(String measure, String side) {}

    private static final String RAW = "raw";
    private static final String OURS = "ours";
    private static final String MODEL_NAME = "big-random-llama";
    private static final String SYSTEM =
            "You are the guard of the castle gate. Talk to the player and help them " + "in the world of the game.";

    private final Config config;
    private final Random random = new Random(7);
    private final Map<Key, List<Double>> values = new LinkedHashMap<>();
    private final Map<Key, List<Integer>> tokens = new LinkedHashMap<>();
    private final List<String> notes = new ArrayList<>();
    private int nonce;
    private TimedEngine timed;
    private LanguageModel model;
    private RawLlama raw;
    private String longPrompt;
    private List<TranscriptEntry> history;
    private GenerationSchema decision;
    private List<ToolDefinition> tools;

    private static Path gemma = System.getenv(dev.oam.testing.RealModels.GEMMA_VARIABLE) == null
            ? null
            : Path.of(System.getenv(dev.oam.testing.RealModels.GEMMA_VARIABLE));
    private static boolean withFfm = true;

    private LlamaBench(Config config) {
        this.config = config;
    }

    public static void main(String[] args) {
        Path root = Path.of(System.getProperty("oam.bench.root", "."));
        Config config;
        List<String> rest = new ArrayList<>(List.of(args));
        boolean ffmOnly = rest.remove("--ffm-only");
        boolean noFfm = rest.remove("--no-ffm");
        int at = rest.indexOf("--gemma");
        if (at >= 0 && at + 1 < rest.size()) {
            gemma = Path.of(rest.remove(at + 1));
            rest.remove(at);
        }
        args = rest.toArray(String[]::new);
        withFfm = !noFfm;
        try {
            config = parse(args, Config.defaults(root));
        } catch (IllegalArgumentException e) {
            System.err.println("bench llama: " + e.getMessage());
            System.err.println(usage(Config.defaults(root)));
            System.exit(2);
            return;
        }
        if (config == null) {
            System.out.println(usage(Config.defaults(root)));
            return;
        }
        int code = 1;
        try {
            if (ffmOnly) {
                new LlamaBench(config).runFfm();
            } else {
                new LlamaBench(config).run();
            }
            code = 0;
        } catch (Exception e) {
            System.err.println("bench llama: " + e);
            e.printStackTrace(System.err);
        }
        // The binding's native server thread is never detached, so the JVM does not exit by itself.
        System.exit(code);
    }

    static String usage(Config d) {
        return String.join(
                "\n",
                "usage: bench/run llama [--threads N] [--threads-batch N] [--warmup N] [--runs N] [--prompt-tokens N]",
                "                       [--generate-tokens N] [--history-tokens N] [--context N] [--model-dir DIR]",
                "  --threads N          generation threads, both sides (" + d.threads() + ")",
                "  --threads-batch N    prompt-processing threads, both sides (" + d.threadsBatch() + ")",
                "  --warmup N           unmeasured rounds first (" + d.warmup() + ")",
                "  --runs N             measured rounds; tables show median [min-max] (" + d.runs() + ")",
                "  --prompt-tokens N    size of the prompt-processing prompt (" + d.promptTokens() + ")",
                "  --generate-tokens N  tokens of the unconstrained generation (" + d.generateTokens() + ")",
                "  --history-tokens N   size of the conversation before the second turn (" + d.historyTokens() + ")",
                "  --context N          context size of the one slot (" + d.contextSize() + ")",
                "  --model-dir DIR      where the generated model is kept and reused (" + d.modelDir() + ")",
                "  --ffm-only           only the FFM engine's sections: 8 sessions vs 1, cancel during a 2,000-token prompt,",
                "                       constrained vs free-text decoding (Java grammar and llama.cpp's), in sampled tokens",
                "  --no-ffm             skip those sections",
                "  --gemma PATH         Gemma 3 270M for the FFM sections too (default $OAM_TEST_GEMMA_MODEL)");
    }

    static Config parse(String[] args, Config d) {
        int[] v = {
            d.threads(),
            d.threadsBatch(),
            d.warmup(),
            d.runs(),
            d.promptTokens(),
            d.generateTokens(),
            d.historyTokens(),
            d.contextSize()
        };
        List<String> names = List.of(
                "--threads",
                "--threads-batch",
                "--warmup",
                "--runs",
                "--prompt-tokens",
                "--generate-tokens",
                "--history-tokens",
                "--context");
        Path dir = d.modelDir();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("-h") || arg.equals("--help")) {
                return null;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(arg
                        + (names.contains(arg) || arg.equals("--model-dir") ? " needs a value" : ": unknown option"));
            }
            if (arg.equals("--model-dir")) {
                dir = Path.of(args[++i]);
                continue;
            }
            int index = names.indexOf(arg);
            if (index < 0) {
                throw new IllegalArgumentException("unknown option " + arg);
            }
            try {
                v[index] = Integer.parseInt(args[++i]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(arg + " takes a number, not " + args[i]);
            }
            if (v[index] < (arg.equals("--warmup") ? 0 : 1)) {
                throw new IllegalArgumentException(arg + " must be at least " + (arg.equals("--warmup") ? 0 : 1));
            }
        }
        if (v[3] < 3) {
            throw new IllegalArgumentException("--runs must be at least 3 (median of ≥ 3 runs)");
        }
        return new Config(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], dir);
    }

    private void run() throws Exception {
        String loadBefore = Meter.loadAverage();
        Path file = ensureModel();
        progress("loading llama.cpp's native library (private folder, via NativeLibrary)");
        long start = System.nanoTime();
        RawLlama.loadNativeLibrary();
        long libraryNanos = System.nanoTime() - start;
        Rss base = Rss.read();

        EngineSettings settings = EngineSettings.defaults()
                .withContextSize(config.contextSize())
                .withThreads(config.threads())
                .withThreadsBatch(config.threadsBatch());
        progress("loading the model with the raw binding");
        GgufFile gguf = GgufFile.read(file);
        EngineSettings resolved =
                settings.resolve(gguf.contextLength(), Runtime.getRuntime().availableProcessors());
        raw = RawLlama.open(file, resolved);
        Rss afterRaw = Rss.read();
        progress("loading the model with JniEngine");
        start = System.nanoTime();
        JniEngine engine = JniEngine.open(
                GgufFile.read(file),
                settings,
                dev.oam.model.llama.LlamaSettings.read(dev.oam.core.Environment.system())
                        .natives());
        long engineNanos = System.nanoTime() - start;
        Rss afterEngine = Rss.read();
        timed = new TimedEngine(engine);
        model = new LlamaLanguageModel(
                engine.name(), engine.contextSize(), CompletableFuture.completedFuture(timed), null, List.of("en"));
        prepareInputs();

        int rounds = config.warmup() + config.runs();
        for (int round = 0; round < rounds; round++) {
            boolean measured = round >= config.warmup();
            progress((measured
                            ? "round " + (round - config.warmup() + 1) + "/" + config.runs()
                            : "warm-up round " + (round + 1) + "/" + config.warmup())
                    + " (load " + Meter.loadAverage() + ")");
            // Alternate which side goes first, so slow phases of the machine hit both alike.
            List<String> order = round % 2 == 0 ? List.of(RAW, OURS) : List.of(OURS, RAW);
            for (String side : order) {
                promptProcessing(side, measured);
            }
            for (String side : order) {
                generation(side, measured);
            }
            for (String side : order) {
                decisionJson(side, measured);
            }
            for (String side : order) {
                toolCall(side, measured);
            }
            for (String side : order) {
                secondTurn(side, measured);
            }
        }
        String loadAfter = Meter.loadAverage();
        report(
                file,
                resolved,
                libraryNanos,
                raw.loadNanos(),
                engineNanos,
                engine.loadMillis(),
                base,
                afterRaw,
                afterEngine,
                loadBefore,
                loadAfter);
        engine.close();
        if (withFfm) {
            ffmSections(file);
        }
    }

    /** Only the FFM engine's sections (issue 14): concurrency, cancel, constrained decoding; big model and Gemma. */
    private void runFfm() throws Exception {
        Path file = ensureModel();
        RawLlama.loadNativeLibrary();
        ffmSections(file);
    }

    private void ffmSections(Path big) throws Exception {
        // OAM_BENCH_JAVA_OPTS='-Doam.bench.ffmRounds=1 -Doam.bench.ffmModels=gemma -Doam.bench.ffmSections=ab' for a
        // short run on a busy machine.
        int rounds = Integer.getInteger("oam.bench.ffmRounds", 3);
        String models = System.getProperty("oam.bench.ffmModels", "big,gemma");
        String library = System.getenv(dev.oam.model.llama.LlamaSettings.LIBRARY_VARIABLE);
        System.out.println("\nFFM engine's library: "
                + (library == null || library.isBlank()
                        ? "OAM_LLAMA_LIBRARY unset: the project build bin/build-llama left in the cache, else the binding's"
                                + " llama.cpp b4916 (the engine's 'llama.cpp through FFM' log line names it)"
                        : library.strip().equalsIgnoreCase("binding")
                                ? "the binding's (llama.cpp b4916, de.kherud:llama 4.2.0)"
                                : library + " (a build of bin/build-llama; OAM_LLAMA_LIBRARY)"));
        if (models.contains("big")) {
            progress("FFM sections on " + big.getFileName());
            System.out.print(
                    new EngineSections(big, "big generated", config.threads(), config.threadsBatch(), rounds).run());
            System.out.flush();
        }
        if (!models.contains("gemma")) {
            return;
        }
        if (gemma == null || !Files.isRegularFile(gemma)) {
            System.out.println(
                    "\n(no Gemma file: set OAM_TEST_GEMMA_MODEL or --gemma PATH for the 262k-vocabulary sections)");
            return;
        }
        progress("FFM sections on " + gemma.getFileName());
        System.out.print(
                new EngineSections(gemma, "Gemma 3 270M", config.threads(), config.threadsBatch(), rounds).run());
        System.out.flush();
    }

    /** Generates the big model once into the model folder; reuses a complete earlier one. */
    private Path ensureModel() throws IOException {
        Path file = config.modelDir().resolve(MODEL_NAME + ".gguf");
        if (Files.isRegularFile(file)) {
            String problem = completeModel(file);
            if (problem == null) {
                progress("reusing " + file + " (" + Files.size(file) / 1_000_000 + " MB)");
                return file;
            }
            progress("regenerating " + file + ": " + problem);
        }
        progress("generating " + file + " (TinyGguf.big(), about 480 MB, once)");
        long start = System.nanoTime();
        TinyGguf.big().write(file);
        progress("generated in " + (System.nanoTime() - start) / 1_000_000 + " ms");
        String problem = completeModel(file);
        if (problem != null) {
            throw new IOException("the generated model is not usable: " + problem);
        }
        return file;
    }

    /** {@code null} when {@code file} is the big model, whole; else what is wrong. */
    private static String completeModel(Path file) {
        try {
            GgufFile gguf = GgufFile.read(file);
            if (!MODEL_NAME.equals(gguf.name())) {
                return "its name is " + gguf.name() + ", not " + MODEL_NAME;
            }
            long end = gguf.dataOffset();
            for (GgufFile.Tensor t : gguf.tensors()) {
                end = Math.max(end, gguf.dataOffset() + t.offset() + t.size());
            }
            if (gguf.fileSize() < end || gguf.fileSize() - end >= 32 || gguf.fileSize() < 400_000_000L) {
                return "its size " + gguf.fileSize() + " does not match its tensors (" + end + ")";
            }
            return null;
        } catch (GgufException | RuntimeException e) {
            return e.getMessage();
        }
    }

    // ---- inputs -------------------------------------------------------------------------------------------------

    private void prepareInputs() throws Exception {
        longPrompt = words(config.promptTokens());
        history = new ArrayList<>();
        int total = 0;
        while (total < config.historyTokens()) {
            String user = words(60);
            String answer = words(60);
            history.add(TranscriptEntry.Prompt.of(user, null));
            history.add(TranscriptEntry.Response.text(answer));
            total += timed.countTokens(user) + timed.countTokens(answer) + 10;
        }
        decision = GenerationSchema.convert(Json.parse("""
                {"type":"object","properties":{
                  "reasoning":{"type":"string","maxLength":80},
                  "plan":{"type":"array","minItems":10,"maxItems":10,
                          "items":{"type":"string","enum":["attack","flee","beg","trade","hide","talk"]}},
                  "choice":{"type":"string","enum":["attack","flee","beg","trade"]}},
                 "required":["reasoning","plan","choice"],"additionalProperties":false}"""), "decision");
        tools = List.of(
                new ToolDefinition("open_gate", "Opens a gate of the castle.", (ObjectNode) Json.parse("""
                        {"type":"object","properties":{"gate_id":{"type":"string","maxLength":8}},
                         "required":["gate_id"],"additionalProperties":false}"""), null),
                new ToolDefinition(
                        "check_inventory", "Lists what the player carries.", (ObjectNode) Json.parse("""
                        {"type":"object","properties":{},"additionalProperties":false}"""), null));
    }

    /** Game words until the text has about {@code target} tokens (each word is about one token). */
    private String words(int target) {
        List<String> all = TinyGguf.words().stream()
                .filter(w -> w.chars().allMatch(Character::isLetter))
                .toList();
        StringBuilder text = new StringBuilder();
        while (true) {
            for (int i = 0; i < 25; i++) {
                text.append(i == 0 && text.isEmpty() ? "" : " ").append(all.get(random.nextInt(all.size())));
            }
            text.append('.');
            if (timed.countTokens(text.toString()) >= target) {
                return text.toString();
            }
        }
    }

    /** A system message no earlier request started with, so nothing but BOS is in the prompt cache. */
    private String freshSystem() {
        return "Session " + (++nonce) + ". " + SYSTEM;
    }

    private static ModelRequest request(
            String system,
            List<TranscriptEntry> entries,
            List<ToolDefinition> tools,
            ToolCallingMode mode,
            GenerationSchema schema,
            int maxTokens) {
        return new ModelRequest(
                system,
                null,
                entries,
                tools,
                mode,
                false,
                schema,
                new GenerationOptions(null, maxTokens, new Sampling.Greedy()));
    }

    // ---- the measurements ---------------------------------------------------------------------------------------

    /** What one side's request took. */
    private record Outcome(
            long firstNanos,
            long lastNanos,
            long totalNanos,
            int promptTokens,
            int cachedTokens,
            int outputTokens,
            String text) {
        /** Tokens after the first over the time from the first to the last delta: the decoding rate as delivered. */
        double tokensPerSecond() {
            return outputTokens < 2 || lastNanos <= firstNanos
                    ? Double.NaN
                    : (outputTokens - 1) / ((lastNanos - firstNanos) / 1e9);
        }

        /** From the last delta to the call's return: stopping, counting, parsing. */
        double tailMillis() {
            return lastNanos <= 0 ? Double.NaN : (totalNanos - lastNanos) / 1e6;
        }
    }

    private Outcome measure(String side, ModelRequest request) throws Exception {
        if (side.equals(RAW)) {
            EngineRequest built =
                    timed.capture(() -> model.respond(request, ModelListener.NONE, CancellationToken.create()));
            RawLlama.Run run = raw.generate(built, true);
            return new Outcome(
                    run.firstNanos(),
                    run.lastNanos(),
                    run.totalNanos(),
                    run.promptTokens(),
                    -1,
                    run.outputTokens(),
                    run.text());
        }
        timed.reset();
        long start = System.nanoTime();
        String failure = null;
        try {
            model.respond(request, ModelListener.NONE, CancellationToken.create());
        } catch (AgentException e) {
            failure = e.getMessage(); // e.g. an answer the random model left unparseable: the generation itself ran
        }
        long end = System.nanoTime();
        EngineResult result = timed.lastResult();
        if (result == null) {
            throw new BenchException("our model produced no generation: " + failure);
        }
        if (failure != null) {
            note("ours: the adapter rejected an output (" + failure + "); its timing is kept");
        }
        long first = timed.firstDeltaNanos();
        long last = timed.lastDeltaNanos();
        return new Outcome(
                first == 0 ? 0 : first - start,
                last == 0 ? 0 : last - start,
                end - start,
                result.inputTokens(),
                result.cachedInputTokens(),
                result.outputTokens(),
                result.text());
    }

    private void promptProcessing(String side, boolean measured) throws Exception {
        ModelRequest request = request(
                freshSystem(),
                List.of(TranscriptEntry.Prompt.of(longPrompt, null)),
                List.of(),
                ToolCallingMode.DISALLOWED,
                null,
                1);
        Outcome o = measure(side, request);
        if (measured) {
            record("prompt tokens/s", side, o.promptTokens() / (o.totalNanos() / 1e9), o.promptTokens());
        }
    }

    private final Map<String, String> generated = new LinkedHashMap<>();

    private void generation(String side, boolean measured) throws Exception {
        ModelRequest request = request(
                SYSTEM,
                List.of(TranscriptEntry.Prompt.of(
                        "Tell the player a long story about " + "the dragon, the king and the goblin of the forest.",
                        null)),
                List.of(),
                ToolCallingMode.DISALLOWED,
                null,
                config.generateTokens());
        Outcome o = measure(side, request);
        checkSame("generation", side, o.text());
        if (measured) {
            record("generation tokens/s, free text", side, o.tokensPerSecond(), o.outputTokens());
            record("after the last token ms, free text", side, o.tailMillis(), o.outputTokens());
        }
    }

    private void decisionJson(String side, boolean measured) throws Exception {
        ModelRequest request = request(
                SYSTEM,
                List.of(TranscriptEntry.Prompt.of("The goblin blocks the road. What do " + "you do?", decision.json())),
                List.of(),
                ToolCallingMode.DISALLOWED,
                decision,
                config.generateTokens());
        Outcome o = measure(side, request);
        checkSame("decision JSON", side, o.text());
        if (measured) {
            record("generation tokens/s, JSON grammar", side, o.tokensPerSecond(), o.outputTokens());
            record("after the last token ms, JSON grammar", side, o.tailMillis(), o.outputTokens());
            adapterTime("JSON grammar", side, request, o.outputTokens());
        }
    }

    private void toolCall(String side, boolean measured) throws Exception {
        ModelRequest request = request(
                SYSTEM,
                List.of(TranscriptEntry.Prompt.of("Please open the north gate for me.", null)),
                tools,
                ToolCallingMode.REQUIRED,
                null,
                config.generateTokens());
        Outcome o = measure(side, request);
        checkSame("tool call", side, o.text());
        if (measured) {
            record("generation tokens/s, tool-call grammar", side, o.tokensPerSecond(), o.outputTokens());
            record("after the last token ms, tool-call grammar", side, o.tailMillis(), o.outputTokens());
            adapterTime("tool-call grammar", side, request, o.outputTokens());
        }
    }

    /** Turn 1 on a fresh conversation, turn 2 on the same slot (cached), turn 2 again under a new prefix (uncached). */
    private void secondTurn(String side, boolean measured) throws Exception {
        String system = freshSystem();
        List<TranscriptEntry> entries = new ArrayList<>(copy(history));
        entries.add(TranscriptEntry.Prompt.of("The dragon is at the gate. What now?", null));
        Outcome first = measure(side, request(system, entries, List.of(), ToolCallingMode.DISALLOWED, null, 8));
        entries.add(TranscriptEntry.Response.text(first.text()));
        entries.add(TranscriptEntry.Prompt.of("Run to the castle!", null));
        Outcome cached = measure(side, request(system, entries, List.of(), ToolCallingMode.DISALLOWED, null, 8));
        Outcome uncached =
                measure(side, request(freshSystem(), entries, List.of(), ToolCallingMode.DISALLOWED, null, 8));
        if (measured) {
            record("first token, turn 1 (cold)", side, millis(first.firstNanos()), first.promptTokens());
            record("first token, turn 2, cached", side, millis(cached.firstNanos()), cached.promptTokens());
            record("first token, turn 2, uncached", side, millis(uncached.firstNanos()), uncached.promptTokens());
            if (side.equals(OURS)) {
                record("turn 2 prompt tokens reused", side, cached.cachedTokens(), cached.promptTokens());
                // Where our layer's time before the first token goes, outside the timed requests: the adapter up to
                // the engine call (messages, escaping, rendering), then tokenising the whole prompt once.
                ModelRequest again = request(system, entries, List.of(), ToolCallingMode.DISALLOWED, null, 8);
                long start = System.nanoTime();
                EngineRequest built =
                        timed.capture(() -> model.respond(again, ModelListener.NONE, CancellationToken.create()));
                long rendered = System.nanoTime();
                raw.encode(built.prompt());
                long encoded = System.nanoTime();
                record("turn 2: adapter before the engine ms", side, (rendered - start) / 1e6, cached.promptTokens());
                record("turn 2: tokenising the prompt ms", side, (encoded - rendered) / 1e6, cached.promptTokens());
            }
        }
    }

    /**
     * Our adapter's own time before the engine call for a grammar step (messages, rendering, and sizing the grammar to
     * the budget), measured apart from the timed request.
     */
    private void adapterTime(String what, String side, ModelRequest request, int outputTokens) throws AgentException {
        if (!side.equals(OURS)) {
            return;
        }
        long start = System.nanoTime();
        timed.capture(() -> model.respond(request, ModelListener.NONE, CancellationToken.create()));
        record(what + ": adapter before the engine ms", side, (System.nanoTime() - start) / 1e6, outputTokens);
    }

    /** The same history with new entry ids, so every conversation is a new session to the adapter. */
    private static List<TranscriptEntry> copy(List<TranscriptEntry> entries) {
        List<TranscriptEntry> out = new ArrayList<>();
        for (TranscriptEntry e : entries) {
            out.add(
                    switch (e) {
                        case TranscriptEntry.Prompt p -> TranscriptEntry.Prompt.of(p.text(), null);
                        case TranscriptEntry.Response r -> TranscriptEntry.Response.text(r.text());
                        default -> e;
                    });
        }
        return out;
    }

    private static double millis(long nanos) {
        return nanos <= 0 ? Double.NaN : nanos / 1e6;
    }

    /** Greedy decoding of the same prompt must give the same text on both sides (and in every round). */
    private void checkSame(String what, String side, String text) {
        String earlier = generated.putIfAbsent(what, text);
        if (earlier == null) {
            progress(what + " output: " + abbreviate(text));
        }
        if (earlier != null && !earlier.equals(text)) {
            note(what + ": " + side + " generated a different text than the first run (" + abbreviate(text) + " vs "
                    + abbreviate(earlier) + ")");
        }
    }

    private static String abbreviate(String text) {
        return abbreviate(text, 60);
    }

    private static String abbreviate(String text, int length) {
        String flat = text.replace("\n", "\\n");
        return flat.length() <= length ? "\"" + flat + "\"" : "\"" + flat.substring(0, length) + "…\"";
    }

    private void note(String message) {
        if (!notes.contains(message)) {
            notes.add(message);
            progress("note: " + message);
        }
    }

    private void record(String measure, String side, double value, int count) {
        Key key = new Key(measure, side);
        values.computeIfAbsent(key, k -> new ArrayList<>()).add(value);
        tokens.computeIfAbsent(key, k -> new ArrayList<>()).add(count);
    }

    // ---- the report ---------------------------------------------------------------------------------------------

    /** Median, min and max of the runs (NaN-free values only). */
    record Stat(int count, double median, double min, double max) {
        static Stat of(List<Double> values) {
            double[] v = values.stream()
                    .mapToDouble(Double::doubleValue)
                    .filter(d -> !Double.isNaN(d))
                    .sorted()
                    .toArray();
            if (v.length == 0) {
                return new Stat(0, Double.NaN, Double.NaN, Double.NaN);
            }
            int n = v.length;
            double median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
            return new Stat(n, median, v[0], v[n - 1]);
        }

        String text(int decimals) {
            if (count == 0) {
                return "n/a";
            }
            String f = "%,." + decimals + "f";
            return String.format(Locale.US, f + " [" + f + "-" + f + "]", median, min, max);
        }
    }

    /** Resident set from {@code /proc/self/status}, in kB (-1 when unknown). */
    record Rss(long total, long anon, long file) {
        static Rss read() {
            long total = -1;
            long anon = -1;
            long file = -1;
            try {
                for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                    if (line.startsWith("VmRSS:")) {
                        total = kb(line);
                    } else if (line.startsWith("RssAnon:")) {
                        anon = kb(line);
                    } else if (line.startsWith("RssFile:")) {
                        file = kb(line);
                    }
                }
            } catch (IOException | RuntimeException e) {
                // not Linux: unknown
            }
            return new Rss(total, anon, file);
        }

        private static long kb(String line) {
            return Long.parseLong(line.replaceAll("[^0-9]", ""));
        }

        String text() {
            return total < 0
                    ? "n/a"
                    : String.format(Locale.US, "%,d MB (anon %,d, file %,d)", total / 1024, anon / 1024, file / 1024);
        }
    }

    private void report(
            Path file,
            EngineSettings settings,
            long libraryNanos,
            long rawLoadNanos,
            long engineNanos,
            long engineLoadMillis,
            Rss base,
            Rss afterRaw,
            Rss afterEngine,
            String loadBefore,
            String loadAfter)
            throws IOException {
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.US,
                "oam llama bench: %s (%,d MB, f16), %d/%d threads (generation/batch), "
                        + "context %d, %d measured runs after %d warm-up; %d CPUs; JDK %s%n",
                file.getFileName(),
                Files.size(file) / 1_000_000,
                settings.threads(),
                settings.threadsBatch(),
                settings.contextSize(),
                config.runs(),
                config.warmup(),
                Runtime.getRuntime().availableProcessors(),
                Runtime.version()));
        out.append("load average before ")
                .append(loadBefore)
                .append(", after ")
                .append(loadAfter)
                .append("\n\n");

        Table load = new Table("load", "time ms", "process RSS after");
        load.row("native library (NativeLibrary)", String.format(Locale.US, "%,.0f", libraryNanos / 1e6), base.text());
        load.row("raw: new LlamaModel", String.format(Locale.US, "%,.0f", rawLoadNanos / 1e6), afterRaw.text());
        load.row(
                "ours: JniEngine.open (in llama.cpp: " + engineLoadMillis + " ms)",
                String.format(Locale.US, "%,.0f", engineNanos / 1e6),
                afterEngine.text());
        out.append(load.render()).append('\n');

        Table table = new Table(
                "measure (median [min-max])", "tokens", "raw binding", "ours (LanguageModel)", "ours/raw [min-max]");
        List<String> measures = new ArrayList<>();
        for (Key key : values.keySet()) {
            if (!measures.contains(key.measure())) {
                measures.add(key.measure());
            }
        }
        StringBuilder json = new StringBuilder();
        for (String measure : measures) {
            Stat r = Stat.of(values.getOrDefault(new Key(measure, RAW), List.of()));
            Stat o = Stat.of(values.getOrDefault(new Key(measure, OURS), List.of()));
            int decimals = measure.contains(" ms") || measure.startsWith("first token") ? 1 : 0;
            String ratio = pairedRatio(measure);
            table.row(measure, tokenText(measure), r.count() == 0 ? "-" : r.text(decimals), o.text(decimals), ratio);
            for (String side : List.of(RAW, OURS)) {
                Key key = new Key(measure, side);
                if (!values.containsKey(key)) {
                    continue;
                }
                Stat s = Stat.of(values.get(key));
                ObjectNode line = Json.object();
                line.put("bench", "llama");
                line.put("measure", measure);
                line.put("side", side);
                line.put(
                        "unit",
                        measure.startsWith("first token") || measure.contains(" ms")
                                ? "ms"
                                : measure.contains("tokens/s") ? "tokens/s" : "tokens");
                line.put("median", round(s.median()));
                line.put("min", round(s.min()));
                line.put("max", round(s.max()));
                line.put("runs", s.count());
                line.put("tokens", medianTokens(key));
                line.put("threads", settings.threads());
                line.put("threadsBatch", settings.threadsBatch());
                json.append(Json.write(line)).append('\n');
            }
        }
        out.append(table.render()).append('\n');
        for (String side : List.of(RAW, OURS)) {
            Stat free = Stat.of(values.getOrDefault(new Key("generation tokens/s, free text", side), List.of()));
            Stat gbnf = Stat.of(values.getOrDefault(new Key("generation tokens/s, JSON grammar", side), List.of()));
            Stat call =
                    Stat.of(values.getOrDefault(new Key("generation tokens/s, tool-call grammar", side), List.of()));
            out.append(String.format(
                    Locale.US,
                    "%s: JSON grammar / free text %.2f, tool-call grammar / free text %.2f%n",
                    side,
                    gbnf.median() / free.median(),
                    call.median() / free.median()));
        }
        ObjectNode load1 = Json.object();
        load1.put("bench", "llama");
        load1.put("measure", "load");
        load1.put("nativeLibraryMs", round(libraryNanos / 1e6));
        load1.put("rawLoadMs", round(rawLoadNanos / 1e6));
        load1.put("engineOpenMs", round(engineNanos / 1e6));
        load1.put("rssBaseKb", base.total());
        load1.put("rssAfterRawKb", afterRaw.total());
        load1.put("rssAfterEngineKb", afterEngine.total());
        load1.put("loadAverageBefore", loadBefore);
        load1.put("loadAverageAfter", loadAfter);
        json.append(Json.write(load1)).append('\n');
        out.append("\noutputs (greedy; the same on both sides unless a note says otherwise):\n");
        for (Map.Entry<String, String> e : generated.entrySet()) {
            out.append("  ")
                    .append(e.getKey())
                    .append(": ")
                    .append(abbreviate(e.getValue(), 100))
                    .append('\n');
        }
        if (!notes.isEmpty()) {
            out.append("\nnotes:\n");
            for (String n : notes) {
                out.append("  ").append(n).append('\n');
            }
        }
        out.append('\n').append(json);
        System.out.print(out);
        System.out.flush();
    }

    /**
     * The median [min-max] of the per-round ratios ours/raw: both sides of a round ran back to back, so a slow phase of
     * the machine cancels out of a round's ratio better than out of the two medians.
     */
    private String pairedRatio(String measure) {
        List<Double> r = values.getOrDefault(new Key(measure, RAW), List.of());
        List<Double> o = values.getOrDefault(new Key(measure, OURS), List.of());
        if (r.isEmpty() || r.size() != o.size()) {
            return "";
        }
        List<Double> ratios = new ArrayList<>();
        for (int i = 0; i < r.size(); i++) {
            ratios.add(o.get(i) / r.get(i));
        }
        return Stat.of(ratios).text(2);
    }

    /** The token counts the figures were taken over: "500" or "46-52" when they varied. */
    private String tokenText(String measure) {
        List<Integer> all = new ArrayList<>();
        all.addAll(tokens.getOrDefault(new Key(measure, RAW), List.of()));
        all.addAll(tokens.getOrDefault(new Key(measure, OURS), List.of()));
        if (all.isEmpty()) {
            return "";
        }
        int min = all.stream().mapToInt(Integer::intValue).min().orElse(0);
        int max = all.stream().mapToInt(Integer::intValue).max().orElse(0);
        return min == max ? Integer.toString(min) : min + "-" + max;
    }

    private int medianTokens(Key key) {
        int[] t = tokens.getOrDefault(key, List.of()).stream()
                .mapToInt(Integer::intValue)
                .sorted()
                .toArray();
        return t.length == 0 ? 0 : t[t.length / 2];
    }

    private static double round(double v) {
        return Double.isNaN(v) ? -1 : Math.round(v * 100) / 100.0;
    }

    private static void progress(String message) {
        System.err.println("bench llama: " + message);
    }
}
