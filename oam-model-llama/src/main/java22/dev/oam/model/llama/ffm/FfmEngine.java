package dev.oam.model.llama.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.agent.AgentException;
import dev.oam.core.agent.CancellationToken;
import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.GenerationEvents;
import dev.oam.model.llama.engine.GenerationEvents.Cancelled;
import dev.oam.model.llama.engine.GenerationEvents.Delta;
import dev.oam.model.llama.engine.GenerationEvents.Done;
import dev.oam.model.llama.engine.GenerationEvents.Event;
import dev.oam.model.llama.engine.GenerationEvents.Failed;
import dev.oam.model.llama.engine.ModelFile;
import dev.oam.model.llama.engine.RepetitionGuard;
import dev.oam.model.llama.engine.SlotEngine;
import dev.oam.model.llama.engine.SlotTable;
import dev.oam.model.llama.engine.TokenSampler;
import dev.oam.model.llama.engine.Utf8Pieces;
import dev.oam.model.llama.gguf.GgufException;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.grammar.GbnfCompiler;
import dev.oam.model.llama.grammar.GrammarCompiler;
import dev.oam.model.llama.grammar.TokenConstraint;
import dev.oam.model.llama.jni.JniEngine;
import dev.oam.model.llama.prompt.ChatMessage;
import dev.oam.model.llama.prompt.ChatRenderer;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SegmentAllocator;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * The {@link Engine} on llama.cpp's C API through FFM ({@link LlamaNative}): one model, one context with one KV
 * sequence ("lane") per slot, decoded by the process's {@link DecodeLoop} with continuous batching.
 *
 * <p>Each decode holds one token of every generating request plus prompt chunks ({@value #CHUNK} tokens at most
 * per request, {@value #PREFILL_BUDGET} in all, fewer when the model is slow: what fits in about
 * {@value #DECODE_TARGET_MS} ms at the measured speed, see {@link #prefillBudget}; round-robin) of requests still
 * reading their prompt. Small chunks are what make a cancel during a long prompt answer within one decode, and
 * what keep the next request's wait for the model short. Sampling is in Java
 * ({@link TokenSampler}) on the logits row of each request, so greedy results do not depend on what else was in
 * the batch; grammars are {@link TokenConstraint}s checked per step (the unconstrained winner first, the mask only
 * when it is rejected; an end-of-generation token only where the grammar may end; stop once it is complete), from
 * the Java {@link GbnfCompiler} over {@link #vocabulary()} unless {@value #GRAMMAR_VARIABLE}{@code =native} asks
 * for llama.cpp's sampler ({@link NativeGrammar}). {@code usage.outputTokens} counts the tokens sampled (not the end-of-generation token);
 * {@code cachedInputTokens} the prompt tokens the lane already held.
 *
 * <p>Threads: callers tokenise (thread-safe in llama.cpp), wait fairly for a lane ({@link SlotTable}) and then
 * for events from the decode thread, running {@code onDelta} themselves. Everything with the context runs on the
 * decode thread: fields marked "decode thread" are touched nowhere else.
 */
public final class FfmEngine implements SlotEngine, AutoCloseable {
    static final int CHUNK = 64;
    /**
     * With streams, a lane's prompt chunk stays below the 64 query rows at which llama.cpp's CPU attention takes its
     * tiled path, which sums otherwise than the path of fewer rows: a prompt's cells then hold the same numbers
     * however it was cut.
     */
    static final int STREAM_CHUNK = 63;
    static final int PREFILL_BUDGET = 128;
    /** What one decode should take at most, so a request arriving (or a lane freed by a cancel) waits little. */
    static final double DECODE_TARGET_MS = 100;
    /** The bench's switch to compare against fixed chunks: {@code -Doam.llama.decodeTargetMs=0} turns the target off. */
    private static final double TARGET_MS = Double.parseDouble(System.getProperty("oam.llama.decodeTargetMs",
            String.valueOf(DECODE_TARGET_MS)));
    /** The fewest prompt tokens a decode takes, however slow the model or busy the machine. */
    static final int MIN_PREFILL = 16;
    /**
     * A prompt read alone may take decodes this many times longer than {@link #DECODE_TARGET_MS}: fewer, larger
     * chunks read a long prompt faster, and a request arriving then waits for one of them.
     */
    static final double ALONE_FACTOR = 1.5;
    static final int N_BATCH = 512;
    /**
     * Flash attention, with more than one lane ({@code -Doam.llama.flashAttn=true|false} forces it either way).
     * llama.cpp's CPU kernel skips the cells a row may not see, so a lane attends over its own cells only (without it,
     * over every cell any lane holds: lanes with long prompts slowed every lane about 1.4×), and it adds a lane's cells
     * in their order whatever lies between them, so where a lane's cells sit in the shared cache does not change its
     * numbers. With one lane there is nothing to skip, and on the project-built llama.cpp (0.3.36) the kernel made an
     * NPC turn on SmolLM2-135M 2.5× slower on 2 cores (first words 4.8 s against 1.3 s with a grounding tool,
     * {@code bench/run npc}), so one lane goes without.
     */
    static boolean flashAttention(EngineSettings settings) {
        String forced = System.getProperty("oam.llama.flashAttn"); // read per context, so a test can set it
        return forced != null ? !"false".equals(forced) : settings.slots() > 1;
    }
    /**
     * Whether a decode of one row, or with one output row, may get a padding row ({@code -Doam.llama.pad=false} turns it
     * off, for comparison only); only models with floating-point matrices get it
     * ({@link JniEngine#floatMatrices}). llama.cpp
     * computes a product of one row with other kernels than a product of several (its tinyBLAS path needs two rows or
     * more), which round differently. With lanes, every such decode is padded, so a greedy answer does not depend on
     * whether its lane decoded alone; with one lane only the decode that ends a prompt is (its generation steps are
     * always one row), so the answer does not depend on how the prompt was cut into chunks. The cost: a session alone
     * on an engine with lanes steps slower than on a 1-lane engine, about 2.3x on the bench's F16 model with one
     * generation thread (bench/README.md, "Fifth run"); with one lane, one row once per request.
     */
    static final boolean PAD = !"false".equals(System.getProperty("oam.llama.pad"));
    /**
     * Whether a library with the vendored API ({@link LlamaNative.Api#VENDORED}) gives each lane its own KV stream
     * ({@code -Doam.llama.streams=false} shares one, for comparison only). With streams a lane's cells and the
     * attention over them are its own whatever the other lanes hold, so a greedy answer does not depend on them.
     * llama.cpp then cuts a batch into micro-batches of lanes with consecutive ids and as many rows each: the batch
     * is ordered by lane and a lane between two lanes in the batch gets a gap row (removed after the decode), so
     * the lanes' rows are computed in one product.
     */
    private static final boolean STREAMS = !"false".equals(System.getProperty("oam.llama.streams"));
    /**
     * Whether ggml may keep quantised weights in its repacked layouts ({@code -Doam.llama.repack=true}, for comparison
     * only; on the vendored library with streams they stay off). Their kernels compute groups of four rows otherwise
     * than a row alone, so a lane's numbers would depend on how many lanes decode with it. For the same reason
     * {@link LlamaNative} turns off that library's tiled K-quant product (taken from 8 rows up). Without both, a
     * quantised product of several rows is each row's own dot products: Gemma 3 270M's greedy answers are the same
     * alone and 8 together, and a prompt's first logits the same read whole or cut (FfmGemmaTest).
     */
    private static final boolean REPACK = "true".equals(System.getProperty("oam.llama.repack"));

    /** Streams for this library ({@link #STREAMS} on the vendored API). */
    private static boolean streams(LlamaNative api) {
        return STREAMS && api.api == LlamaNative.Api.VENDORED;
    }

    /** Tests only: receives a copy of every request's first logits row (set by reflection; null otherwise). */
    static volatile @Nullable Consumer<float[]> firstLogitsProbe;

    /**
     * Tests only: called before each decode with the rows it holds for requests (not the padding or gap rows) and the
     * threads llama.cpp will compute it on, as the context reports them.
     */
    static volatile java.util.function.@Nullable BiConsumer<Integer, Integer> decodeThreadsProbe;

    static final long CANCEL_ANSWER_MS = 50;
    private static final int TOKEN_CACHE_ENTRIES = 512;
    private static final int TOKEN_CACHE_MAX_CHARS = 16 * 1024;
    static final String GRAMMAR_VARIABLE = "OAM_LLAMA_GRAMMAR";
    static final String GRAMMAR_PROPERTY = "oam.llama.grammar";

    private final LlamaNative api;
    // decode thread: the cost model of one decode, fixedMillis + rows × millisPerRow, as moving averages. The fixed part
    // (reading the weights once) comes from one- and two-row decodes, the per-row part from decodes of MIN_PREFILL
    // rows or more less the fixed part: dividing a whole decode's time by its rows would count the fixed part in
    // every row and shrink the chunks to the floor on a model whose weights dominate.
    private double fixedMillis = Double.NaN;
    private double millisPerRow = Double.NaN;
    private final ModelFile file;
    private final EngineSettings settings;
    private final MemorySegment model;
    private final MemorySegment vocab;
    private final int nVocab;
    private final BitSet endOfGeneration = new BitSet();
    private final SlotTable slots;
    private final ChatRenderer chat;
    private final GrammarSource grammarSource;
    private final DecodeLoop loop;
    private final long loadMillis;
    private final ConcurrentLinkedQueue<Generation> incoming = new ConcurrentLinkedQueue<>();
    private final Set<Generation> running = ConcurrentHashMap.newKeySet();
    private final Map<String, Integer> tokenCounts = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
            return size() > TOKEN_CACHE_ENTRIES;
        }
    }; // guarded by itself
    private volatile boolean closed;
    /** {@link #PAD} for a model with floating-point weight matrices ({@link ModelFile#floatMatrices}. */
    private final boolean pad;
    /** A KV stream per lane (vendored API, {@link #STREAMS}): padding and gap rows go into the lanes themselves. */
    private final boolean streams;
    private volatile @Nullable GrammarCompiler grammars;

    // decode thread only
    private MemorySegment context = MemorySegment.NULL;
    private final List<Generation> active = new ArrayList<>();
    private int cursor;
    private final float[] logits;
    private final long[] mask;
    private final TokenSampler sampler = new TokenSampler();
    private final Arena arena = Arena.ofShared();
    private final MemorySegment batch;
    private final MemorySegment batchTokens;
    private final MemorySegment batchPositions;
    private final MemorySegment batchSeqCounts;
    private final MemorySegment batchSeqPointers;
    private final MemorySegment batchSeqIds;
    private final MemorySegment batchLogits;
    private final MemorySegment pieceBuffer;
    private final Generation[] rowOwner = new Generation[N_BATCH];
    private final int[] rowFed = new int[N_BATCH];
    // decode thread: the lane and position of each row added only for the decode (padding, gaps), removed after it
    private final int[] extraLane = new int[N_BATCH];
    private final int[] extraPos = new int[N_BATCH];
    private int extras;
    // decode thread: the context's n_threads_batch now; set only on a change, as llama.cpp logs every setting
    private int batchThreads;
    private final List<Chunk> plan = new ArrayList<>();
    private boolean endsPrompt; // whether the batch being built holds a prompt's last token

    /** Makes the grammar compiler of a model, once, from its vocabulary and bindings. */
    @FunctionalInterface
    interface GrammarSource {
        GrammarCompiler create(FfmEngine engine);
    }

    private FfmEngine(LlamaNative api, ModelFile file, EngineSettings settings, MemorySegment model,
            long loadMillis, GrammarSource grammarSource) {
        this.api = api;
        this.file = file;
        this.settings = settings;
        this.model = model;
        this.loadMillis = loadMillis;
        this.grammarSource = grammarSource;
        try {
            this.vocab = (MemorySegment) api.modelGetVocab.invokeExact(model);
        } catch (Throwable e) {
            throw LlamaNative.failed("llama_model_get_vocab", e);
        }
        this.nVocab = api.nTokens(vocab);
        for (int t = 0; t < nVocab; t++) {
            if (api.isEog(vocab, t)) {
                endOfGeneration.set(t);
            }
        }
        this.slots = new SlotTable(settings.slots());
        this.streams = streams(api);
        this.pad = PAD && file.floatMatrices();
        this.logits = new float[nVocab];
        this.mask = new long[(nVocab + 63) >>> 6];
        this.batch = arena.allocate(LlamaNative.BATCH);
        this.batchTokens = arena.allocate(JAVA_INT, N_BATCH);
        this.batchPositions = arena.allocate(JAVA_INT, N_BATCH);
        this.batchSeqCounts = arena.allocate(JAVA_INT, N_BATCH);
        this.batchSeqPointers = arena.allocate(ADDRESS, N_BATCH);
        this.batchSeqIds = arena.allocate(JAVA_INT, N_BATCH);
        this.batchLogits = arena.allocate(JAVA_BYTE, N_BATCH);
        for (int i = 0; i < N_BATCH; i++) {
            batchSeqCounts.setAtIndex(JAVA_INT, i, 1);
            batchSeqPointers.setAtIndex(ADDRESS, i, batchSeqIds.asSlice(i * 4L, 4));
        }
        batch.set(ADDRESS, 8, batchTokens);
        batch.set(ADDRESS, 16, MemorySegment.NULL);
        batch.set(ADDRESS, 24, batchPositions);
        batch.set(ADDRESS, 32, batchSeqCounts);
        batch.set(ADDRESS, 40, batchSeqPointers);
        batch.set(ADDRESS, 48, batchLogits);
        this.pieceBuffer = arena.allocate(256);
        this.chat = ChatRenderer.forFile(file);
        this.loop = DecodeLoop.get();
    }

    /**
     * Loads {@code gguf} through FFM.
     *
     * @throws UnsupportedOperationException FFM cannot run this library (wrong build, missing symbols)
     * @throws IOException the model cannot be loaded
     */
    static FfmEngine open(GgufFile gguf, EngineSettings requested) throws IOException {
        try {
            return open(ModelFile.of(gguf), requested, grammarSource(System::getenv, System::getProperty));
        } catch (GgufException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    /** The Java compiler over the model's vocabulary ({@link #vocabulary()}): the default. */
    static final GrammarSource JAVA_GRAMMAR = engine -> GbnfCompiler.create(engine.vocabulary());

    /** llama.cpp's own grammar sampler ({@link NativeGrammar}): slow on large vocabularies; an explicit fallback. */
    static final GrammarSource NATIVE_GRAMMAR = NativeGrammar::new;

    /**
     * The grammar implementation {@value #GRAMMAR_VARIABLE} (or {@value #GRAMMAR_PROPERTY}) asks for: {@code java}
     * (the default) or {@code native}. Anything else is logged and the default used.
     */
    static GrammarSource grammarSource(UnaryOperator<@Nullable String> environment,
            UnaryOperator<@Nullable String> properties) {
        String value = properties.apply(GRAMMAR_PROPERTY);
        if (value == null || value.isBlank()) {
            value = environment.apply(GRAMMAR_VARIABLE);
        }
        if (value == null || value.isBlank() || value.strip().equalsIgnoreCase("java")) {
            return JAVA_GRAMMAR;
        }
        if (value.strip().equalsIgnoreCase("native")) {
            return NATIVE_GRAMMAR;
        }
        Log.warning(GRAMMAR_VARIABLE + "='" + value + "': use java or native; using java");
        return JAVA_GRAMMAR;
    }

    static FfmEngine open(ModelFile file, EngineSettings requested, GrammarSource grammars) throws IOException {
        if (!Files.isRegularFile(file.path()) || !Files.isReadable(file.path())) {
            throw new IOException("model file " + file.path() + " does not exist or is not readable");
        }
        EngineSettings settings = requested.resolve(file.contextLength(), Runtime.getRuntime().availableProcessors());
        LlamaNative api = LlamaNative.get();
        long start = System.nanoTime();
        MemorySegment model;
        try (Arena local = Arena.ofConfined()) {
            MemorySegment params = api.modelParams(local, settings.gpuLayers(), !streams(api) || REPACK);
            model = (MemorySegment) api.modelLoadFromFile.invokeExact(
                    local.allocateFrom(file.path().toAbsolutePath().toString()), params);
        } catch (Throwable e) {
            throw new IOException("llama.cpp cannot load " + file.path() + ": " + e, e);
        }
        if (model.equals(MemorySegment.NULL)) {
            throw new IOException("llama.cpp cannot load " + file.path() + " (see the log for llama.cpp's reason)");
        }
        FfmEngine engine = new FfmEngine(api, file, settings, model, 0, grammars);
        engine.device = placement(LlamaNative.takePlacement(), settings.gpuLayers(), api);
        if (settings.gpuLayers() != 0 && engine.device.startsWith("CPU")) {
            Log.warning("llama model '" + file.name() + "': gpuLayers " + settings.gpuLayers() + " was asked, but "
                    + api.describe() + " used no GPU (no GPU backend in this build, or no device it can use): it runs on"
                    + " the CPU. bin/build-llama --vulkan (or --cuda, --metal) gives a GPU build; docs/MODELS.md");
        }
        try {
            engine.loop.call(() -> {
                engine.createContext();
                return null;
            });
        } catch (Exception e) {
            throw new IOException("llama.cpp cannot create a context for " + file.path() + ": " + e.getMessage(), e);
        }
        engine.loop.register(engine);
        long millis = (System.nanoTime() - start) / 1_000_000;
        Log.info("llama model '" + file.name() + "' loaded through FFM in " + millis + " ms (" + settings.slots()
                + " lane(s) of " + settings.contextSize() + " tokens, " + settings.threads() + "/" + settings.threadsBatch()
                + " threads; " + (file.chatTemplate() != null ? "the file's own chat template" : file.turnFormat().label()
                        + " turns, the file has no chat template") + "; on " + engine.device + ")");
        return engine;
    }

    /** Where the model runs ({@link Engine#device()}): set once, right after loading. */
    private volatile @Nullable String device;

    @Override
    public @Nullable String device() {
        return device;
    }

    /**
     * The device text from llama.cpp's load lines ("using device Vulkan0 (…) - 7934 MiB free", "offloaded 3/3 layers
     * to GPU"): "Vulkan0 (…), 7934 MiB free, 3/3 layers", or "CPU" when no layer went to a GPU.
     */
    static String placement(List<String> lines, int gpuLayers, LlamaNative api) {
        List<String> devices = new ArrayList<>();
        String layers = null;
        for (String line : lines) {
            int at = line.indexOf("using device ");
            if (at >= 0) {
                devices.add(line.substring(at + "using device ".length()).replace(" - ", ", ").strip());
            }
            java.util.regex.Matcher offloaded = java.util.regex.Pattern.compile("offloaded (\\d+)/(\\d+) layers").matcher(line);
            if (offloaded.find()) {
                layers = offloaded.group(1) + "/" + offloaded.group(2) + " layers";
            }
        }
        String backend = api.build != null ? api.build.backend() + " build" : "b4916";
        if (devices.isEmpty() || layers != null && layers.startsWith("0/")) {
            return "CPU (" + backend + (gpuLayers != 0 ? "; gpuLayers " + gpuLayers + " asked, but no GPU device was used" : "")
                    + ")";
        }
        return String.join("; ", devices) + (layers != null ? ", " + layers : "") + " (" + backend + ")";
    }

    // decode thread
    private void createContext() throws IOException {
        try (Arena local = Arena.ofConfined()) {
            MemorySegment params = streams
                    // a stream per lane, each with a cell more than a lane's context: the padding or gap row
                    ? api.contextParams(local, settings.slots() * (settings.contextSize() + 1), N_BATCH, settings.slots(),
                            settings.threads(), settings.threadsBatch(), flashAttention(settings), true)
                    // one cache: the lanes, a padding sequence (the last id) and its cell
                    : api.contextParams(local, settings.kvCells() + 1, N_BATCH, settings.slots() + 1,
                            settings.threads(), settings.threadsBatch(), flashAttention(settings), false);
            MemorySegment created = (MemorySegment) api.initFromModel.invokeExact(model, params);
            if (created.equals(MemorySegment.NULL)) {
                throw new IOException("llama_init_from_model returned NULL (out of memory?)");
            }
            context = created;
            batchThreads = settings.threadsBatch();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Throwable e) {
            throw LlamaNative.failed("llama_init_from_model", e);
        }
    }

    @Override
    public String name() {
        return file.name();
    }

    @Override
    public int contextSize() {
        return settings.contextSize();
    }

    @Override
    public EngineSettings settings() {
        return settings;
    }

    long loadMillis() {
        return loadMillis;
    }

    int vocabularySize() {
        return nVocab;
    }

    LlamaNative api() {
        return api;
    }

    MemorySegment vocab() {
        return vocab;
    }

    BitSet endOfGeneration() {
        return (BitSet) endOfGeneration.clone();
    }

    /**
     * The vocabulary as a Java grammar sees it: each token's bytes from {@code llama_token_to_piece(special=false)}
     * (SPM's space marker and byte tokens already resolved), control tokens and end-of-generation tokens flagged.
     * Built on each call (a 262k vocabulary takes a moment): the grammar compiler keeps it.
     */
    dev.oam.model.llama.grammar.TokenVocabulary vocabulary() {
        byte[][] pieces = new byte[nVocab][];
        BitSet control = new BitSet(nVocab);
        try (Arena local = Arena.ofConfined()) {
            MemorySegment buffer = local.allocate(256);
            for (int t = 0; t < nVocab; t++) {
                boolean isControl = api.isControl(vocab, t) || endOfGeneration.get(t);
                if (isControl) {
                    control.set(t);
                }
                pieces[t] = isControl ? new byte[0] : api.piece(vocab, t, false, buffer);
            }
        }
        return new dev.oam.model.llama.grammar.TokenVocabulary(pieces, control, endOfGeneration);
    }

    /** With the Java grammar ({@link #closing}); llama.cpp's own sampler cannot be steered so. */
    @Override
    public boolean closesGrammarsAtBudget() {
        return grammarSource == JAVA_GRAMMAR;
    }

    /** The admission queue and lanes (tests watch it). */
    @Override
    public SlotTable slotTable() {
        return slots;
    }

    @Override
    public int countTokens(String text) {
        ensureUsable();
        boolean cacheable = text.length() <= TOKEN_CACHE_MAX_CHARS;
        if (cacheable) {
            synchronized (tokenCounts) {
                Integer known = tokenCounts.get(text);
                if (known != null) {
                    return known;
                }
            }
        }
        int count = text.isEmpty() ? 0 : api.tokenize(vocab, text, false, true).length;
        if (cacheable) {
            synchronized (tokenCounts) {
                tokenCounts.put(text, count);
            }
        }
        return count;
    }

    /** The tokens evaluated for {@code prompt}: BOS when the model adds one, then the prompt's, control tokens parsed. */
    @Override
    public int[] promptTokens(String prompt) {
        return api.tokenize(vocab, prompt, true, true);
    }

    @Override
    public String renderChat(List<ChatMessage> messages) {
        ensureUsable();
        return chat.render(messages);
    }

    @Override
    public Set<String> controlTokens() {
        return file.controlTokens();
    }

    @Override
    public EngineResult generate(EngineRequest request, Object sessionKey, Consumer<String> onDelta, CancellationToken token)
            throws AgentException {
        check(request);
        if (closed) {
            throw SlotTable.closedError();
        }
        token.check();
        int[] prompt = promptTokens(request.prompt());
        int context = settings.contextSize();
        if (prompt.length == 0 || prompt.length + 1 > context) {
            throw new AgentException(ErrorCode.CONTEXT_SIZE_EXCEEDED, String.format(Locale.ROOT,
                    "The prompt has %d tokens; the context holds %d (prompt and at least one generated token).",
                    prompt.length, context));
        }
        for (int t : prompt) {
            if (t < 0 || t >= nVocab) {
                throw new IllegalStateException("the tokenizer returned token " + t + " outside the vocabulary of " + nVocab);
            }
        }
        int maxTokens = Math.max(1, Math.min(request.maxTokens(), context - prompt.length));
        // The grammar is compiled here, on the caller's thread (the first one also builds the model's vocabulary
        // and trie, about a second on 262k tokens), never on the decode thread other sessions wait for.
        TokenConstraint constraint = null;
        if (request.grammar() != null) {
            try {
                constraint = grammars().start(request.grammar());
            } catch (RuntimeException e) {
                throw failure(e);
            }
        }
        SlotTable.Lease lease;
        try {
            lease = slots.acquire(prompt, sessionKey, token);
        } catch (AgentException | RuntimeException e) {
            close(constraint);
            throw e;
        }
        Generation generation = new Generation(request, maxTokens, prompt, lease, constraint);
        running.add(generation);
        incoming.add(generation);
        loop.wake();
        if (closed) {
            generation.cancel();
        }
        return generation.await(onDelta, token);
    }

    private static void check(EngineRequest r) {
        if (r.maxTokens() < 1) {
            throw new IllegalArgumentException("maxTokens must be at least 1, was " + r.maxTokens());
        }
        if (Double.isNaN(r.temperature()) || r.temperature() < 0) {
            throw new IllegalArgumentException("temperature must be ≥ 0, was " + r.temperature());
        }
        if (Double.isNaN(r.topP())) {
            throw new IllegalArgumentException("topP must be a number");
        }
    }

    private void ensureUsable() {
        if (closed) {
            throw new IllegalStateException("the llama engine for '" + file.name() + "' is closed");
        }
    }

    /** Cancels running and queued generations and refuses new ones. The native model stays until the process exits. */
    @Override
    public void close() {
        closed = true;
        slots.close();
        for (Generation g : running) {
            g.cancel();
        }
        loop.wake();
    }

    /** The model's grammar compiler, made on first use (by the first caller with a grammar; others wait). */
    private GrammarCompiler grammars() {
        GrammarCompiler g = grammars;
        if (g == null) {
            synchronized (this) {
                g = grammars;
                if (g == null) {
                    long start = System.nanoTime();
                    g = grammarSource.create(this);
                    grammars = g;
                    Log.info("llama model '" + file.name() + "': grammar compiler " + g.getClass().getSimpleName()
                            + " ready in " + (System.nanoTime() - start) / 1_000_000 + " ms (" + nVocab + " tokens)");
                }
            }
        }
        return g;
    }

    private static void close(@Nullable TokenConstraint constraint) {
        if (constraint instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                Log.warning("closing a grammar: " + e);
            }
        }
    }

    // ---- the decode thread's part ----

    /** One decode for this model, if it has work. Decode thread only. */
    boolean step() {
        Generation arrived;
        while ((arrived = incoming.poll()) != null) {
            start(arrived);
        }
        for (Generation g : List.copyOf(active)) {
            if (g.cancelRequested) {
                finish(g, new Cancelled());
            }
        }
        if (active.isEmpty()) {
            return false;
        }
        int n = 0;
        endsPrompt = false;
        plan.clear();
        // One token for each request that is generating (or at its prompt's last token)...
        for (Generation g : active) {
            if (g.size - g.nPast == 1) {
                plan.add(new Chunk(g, 1));
            }
        }
        // ...then prompt chunks, round-robin from a rotating start so no request waits behind a long prompt. Rows are
        // kept for the padding and, with streams, for a gap row per lane.
        int reserved = 1 + (streams ? settings.slots() - 1 : 0);
        int budget = Math.min(prefillBudget(plan.size(), active.size() > 1), N_BATCH - reserved - plan.size());
        int count = active.size();
        for (int k = 0; k < count && budget > 0; k++) {
            Generation g = active.get((cursor + k) % count);
            int remaining = g.size - g.nPast;
            if (remaining > 1) {
                int take = Math.min(Math.min(remaining, streams ? STREAM_CHUNK : CHUNK), budget);
                plan.add(new Chunk(g, take));
                budget -= take;
            }
        }
        cursor = count == 0 ? 0 : (cursor + 1) % count;
        if (plan.isEmpty()) {
            return false;
        }
        if (streams) {
            plan.sort(BY_LANE); // llama.cpp puts only lanes with consecutive ids into one micro-batch
        }
        extras = 0;
        int previousLane = -1;
        for (Chunk chunk : plan) {
            if (streams && previousLane >= 0) {
                n = fillGap(n, previousLane + 1, chunk.g.lease.id());
            }
            n = add(chunk.g, n, chunk.take);
            previousLane = chunk.g.lease.id();
        }
        if (pad && (n == 1 || outputs(n) == 1) && (settings.slots() > 1 || endsPrompt)) {
            n = pad(n, true);
        } else if (streams && n == 1 && settings.threads() > 1) {
            // llama.cpp's CPU attention splits a lone row's keys between the threads once a stream holds 512 cells, and
            // adds the parts up otherwise than one pass over them: a second row (no output) keeps one pass. On one
            // thread the split is a single part, which adds up as one pass does, so a lone row goes alone.
            n = pad(n, false);
        }
        useThreads(n - extras);
        java.util.function.BiConsumer<Integer, Integer> threadsProbe = decodeThreadsProbe;
        if (threadsProbe != null) { // llama.cpp computes a decode of one row on n_threads, of more on n_threads_batch
            threadsProbe.accept(n - extras, n == 1 ? api.nThreads(context) : api.nThreadsBatch(context));
        }
        long decodeStart = System.nanoTime();
        int rc = decode(n);
        removeExtraRows();
        if (rc == 0) {
            measured(n, (System.nanoTime() - decodeStart) / 1e6);
        }
        if (rc != 0) {
            recover(rc, n);
            return true;
        }
        for (int row = 0; row < n; row++) {
            Generation g = rowOwner[row];
            if (g == null) {
                continue;
            }
            g.nPast += rowFed[row];
            if (g.nPast == g.size && active.contains(g)) {
                sample(g, row);
            }
        }
        Arrays.fill(rowOwner, 0, n, null);
        return true;
    }

    /**
     * The prompt tokens this decode may take besides its {@code generating} one-token rows: as many as fit in
     * {@value #DECODE_TARGET_MS} ms by the measured cost model when other requests share the model
     * ({@value #ALONE_FACTOR} times that for a prompt read alone), at least {@value #MIN_PREFILL} and at most
     * {@value #PREFILL_BUDGET}, so the decode a cancelled or newly arrived request waits for stays short on a slow
     * model; {@value #MIN_PREFILL} until a decode of that many rows was measured. Decode thread only.
     */
    private int prefillBudget(int generating, boolean shared) {
        if (TARGET_MS <= 0) {
            return PREFILL_BUDGET;
        }
        return prefillBudget(fixedMillis, millisPerRow, (shared ? 1 : ALONE_FACTOR) * TARGET_MS, generating);
    }

    /** The arithmetic of {@link #prefillBudget(int, boolean)}: rows that fit in {@code targetMillis}, clamped. */
    static int prefillBudget(double fixedMillis, double millisPerRow, double targetMillis, int generating) {
        if (Double.isNaN(millisPerRow) || millisPerRow <= 0) {
            return MIN_PREFILL;
        }
        double fit = (targetMillis - (Double.isNaN(fixedMillis) ? 0 : fixedMillis)) / millisPerRow - generating;
        return (int) Math.max(MIN_PREFILL, Math.min(PREFILL_BUDGET, fit));
    }

    /** Updates the cost model with a decode of {@code rows} rows that took {@code millis}. Decode thread only. */
    private void measured(int rows, double millis) {
        if (rows <= 2) {
            fixedMillis = Double.isNaN(fixedMillis) ? millis : 0.8 * fixedMillis + 0.2 * millis;
        } else if (rows >= MIN_PREFILL) { // until a small decode measured the fixed part, all of it counts per row
            double perRow = Math.max(0.01, (millis - (Double.isNaN(fixedMillis) ? 0 : fixedMillis)) / rows);
            // Up at once, down slowly: a row gets dearer as the lanes hold more cells (b4916 attends over all of them),
            // and an estimate that lags upwards makes the next decode overshoot the target that a cancel waits for.
            millisPerRow = Double.isNaN(millisPerRow) || perRow > millisPerRow ? perRow : 0.7 * millisPerRow + 0.3 * perRow;
        }
    }

    /** Part of a decode's plan: {@code take} of {@code g}'s pending tokens. */
    private record Chunk(Generation g, int take) {}

    private static final java.util.Comparator<Chunk> BY_LANE = java.util.Comparator.comparingInt(c -> c.g.lease.id());

    /**
     * With streams: a row for each lane in [{@code from}, {@code to}) (lanes not in this decode), at the lane's next
     * position, without logits, so the lanes around it share one micro-batch. A lane whose stream is full gets none
     * (the batch is then cut there). Returns the next free row.
     */
    private int fillGap(int n, int from, int to) {
        for (int lane = from; lane < to; lane++) {
            int pos = api.seqPosMax(context, lane) + 1;
            if (pos > settings.contextSize()) {
                continue;
            }
            n = addExtra(n, lane, pos, false);
        }
        return n;
    }

    /**
     * Puts a row at row {@code n} that only this decode holds (padding, gap): row 0's token at {@code pos} of
     * {@code lane}, with logits when {@code output}, and no owner; {@link #removeExtraRows} frees its cell after the
     * decode. Returns the next free row.
     */
    private int addExtra(int n, int lane, int pos, boolean output) {
        batchTokens.setAtIndex(JAVA_INT, n, batchTokens.getAtIndex(JAVA_INT, 0));
        batchPositions.setAtIndex(JAVA_INT, n, pos);
        batchSeqIds.setAtIndex(JAVA_INT, n, lane);
        batchLogits.set(JAVA_BYTE, n, (byte) (output ? 1 : 0));
        rowOwner[n] = null;
        extraLane[extras] = lane;
        extraPos[extras++] = pos;
        return n + 1;
    }

    /** Puts {@code take} of {@code g}'s pending tokens at row {@code n}; returns the next free row. */
    private int add(Generation g, int n, int take) {
        for (int i = 0; i < take; i++) {
            int row = n + i;
            int pos = g.nPast + i;
            batchTokens.setAtIndex(JAVA_INT, row, g.tokens[pos]);
            batchPositions.setAtIndex(JAVA_INT, row, pos);
            batchSeqIds.setAtIndex(JAVA_INT, row, g.lease.id());
            boolean last = pos == g.size - 1;
            batchLogits.set(JAVA_BYTE, row, (byte) (last ? 1 : 0));
            endsPrompt |= pos == g.promptLength - 1;
            rowOwner[row] = null;
        }
        // The owner is recorded on the chunk's last row, with the count fed: sampling happens there.
        rowOwner[n + take - 1] = g;
        rowFed[n + take - 1] = take;
        return n + take;
    }

    /** How many of the first {@code n} rows ask for logits. */
    private int outputs(int n) {
        int count = 0;
        for (int row = 0; row < n; row++) {
            count += batchLogits.get(JAVA_BYTE, row);
        }
        return count;
    }

    /**
     * Adds the padding row at row {@code n}, with logits, so the batch has two rows and, when any, two outputs. Its
     * logits are never read and its cell is removed after the decode. In one shared cache it is row 0's token at
     * position 0 of the padding sequence (the last id, no lane's). With streams it goes into the lane of the output
     * row (or of the last row), at the position after it, so llama.cpp computes the two in one micro-batch (a row of
     * a sequence of its own could land in a micro-batch of its own); the lane's rows before it do not see it.
     * Returns the new row count.
     */
    private int pad(int n, boolean output) {
        int lane = settings.slots();
        int pos = 0;
        if (streams) {
            int host = n - 1; // the output row's lane (an output ends its lane's rows), else the last row's
            for (int row = 0; row < n; row++) {
                if (batchLogits.get(JAVA_BYTE, row) != 0) {
                    host = row;
                }
            }
            lane = batchSeqIds.getAtIndex(JAVA_INT, host);
            pos = batchPositions.getAtIndex(JAVA_INT, host) + 1;
        }
        return addExtra(n, lane, pos, output);
    }

    /**
     * Gives the decode {@code threads} when it holds one row of a request's, and {@code threadsBatch} otherwise, as
     * llama.cpp itself does for a one-token decode. The rows added for the decode only (padding, gaps) would
     * otherwise make a lone request's token a decode of several rows, which llama.cpp computes on the batch threads:
     * a lone NPC would take every core where the host asked for {@code threads} (cores - 1 by default, a core left for
     * the game). Which threads compute a product does not change its result. Decode thread only.
     */
    private void useThreads(int requestRows) {
        int wanted = requestRows == 1 ? settings.threads() : settings.threadsBatch();
        if (wanted != batchThreads) {
            api.setThreads(context, settings.threads(), wanted);
            batchThreads = wanted;
        }
    }

    /** Frees the cells of the rows added for the decode only: the padding sequence and the gaps hold nothing after. */
    private void removeExtraRows() {
        for (int i = 0; i < extras; i++) {
            if (!api.seqRm(context, extraLane[i], extraPos[i], -1)) {
                throw new IllegalStateException("llama.cpp refused to remove the padding or gap row of sequence "
                        + extraLane[i]);
            }
        }
        extras = 0;
    }

    /** Validates the batch (an invalid token or position aborts the JVM inside llama.cpp) and decodes it. */
    private int decode(int n) {
        if (n < 1 || n > N_BATCH) {
            throw new IllegalStateException("batch of " + n + " tokens");
        }
        int[] next = new int[settings.slots() + (streams ? 0 : 1)]; // the lanes (and the padding sequence)
        int positions = settings.contextSize() + (streams ? 1 : 0); // with streams a lane's padding row may be its last
        Arrays.fill(next, -1);
        for (int row = 0; row < n; row++) {
            int token = batchTokens.getAtIndex(JAVA_INT, row);
            int pos = batchPositions.getAtIndex(JAVA_INT, row);
            int lane = batchSeqIds.getAtIndex(JAVA_INT, row);
            if (token < 0 || token >= nVocab) {
                throw new IllegalStateException("token " + token + " outside the vocabulary of " + nVocab);
            }
            if (lane < 0 || lane >= next.length) {
                throw new IllegalStateException("lane " + lane + " out of range");
            }
            if (next[lane] >= 0 && pos != next[lane] || pos < 0 || pos >= positions) {
                throw new IllegalStateException("position " + pos + " of lane " + lane + " is not contiguous");
            }
            next[lane] = pos + 1;
        }
        batch.set(JAVA_INT, 0, n);
        try {
            return (int) api.decode.invokeExact(context, batch);
        } catch (Throwable e) {
            throw LlamaNative.failed("llama_decode", e);
        }
    }

    /**
     * A failed decode (no room in the KV cache, or an error). On b4916 a failed decode may leave garbage in, or
     * remove cells of, other lanes, so the whole cache is cleared: the requests in the batch fail, the others
     * read their tokens again from the start, and idle lanes forget what they held.
     */
    private void recover(int rc, int n) {
        Log.warning("llama_decode returned " + rc + " for '" + name() + "' (" + n + " tokens); clearing the KV cache");
        Set<Generation> inBatch = new java.util.HashSet<>();
        for (int row = 0; row < n; row++) {
            if (rowOwner[row] != null) {
                inBatch.add(rowOwner[row]);
            }
        }
        Arrays.fill(rowOwner, 0, n, null);
        api.clear(context);
        slots.forgetIdle();
        for (Generation g : List.copyOf(active)) {
            g.nPast = 0;
            g.cachedLost = true;
            if (inBatch.contains(g)) {
                finish(g, new Failed(new IllegalStateException("llama_decode failed (" + rc
                        + (rc == 1 ? ": no room in the KV cache" : "") + ")")));
            }
        }
    }

    private void start(Generation g) {
        active.add(g);
        try {
            if (!api.seqRm(context, g.lease.id(), g.lease.cached(), -1)) {
                throw new IllegalStateException("llama.cpp refused to remove the cells of lane " + g.lease.id());
            }
            g.nPast = g.lease.cached();
        } catch (Throwable e) {
            finish(g, new Failed(e));
        }
    }

    private void sample(Generation g, int row) {
        try {
            MemorySegment row0 = (MemorySegment) api.getLogitsIth.invokeExact(context, row);
            if (row0.equals(MemorySegment.NULL)) {
                throw new IllegalStateException("no logits for row " + row);
            }
            MemorySegment.copy(row0.reinterpret(nVocab * 4L), JAVA_FLOAT, 0, logits, 0, nVocab);
            Consumer<float[]> probe = firstLogitsProbe;
            if (probe != null && g.sampled == 0) {
                probe.accept(logits.clone());
            }
        } catch (Throwable e) {
            finish(g, new Failed(e));
            return;
        }
        EngineRequest r = g.request;
        int token = sampler.sample(logits, nVocab, null, r.temperature(), r.topK(), r.topP(), g.random);
        TokenConstraint constraint = g.constraint;
        if (constraint != null && !constraint.allows(token)) {
            constraint.fillMask(mask);
            token = sampler.sample(logits, nVocab, mask, r.temperature(), r.topK(), r.topP(), g.random);
            if (token < 0) {
                finish(g, new Failed(new IllegalStateException("the grammar allows no token here")));
                return;
            }
        }
        if (constraint != null) {
            token = closing(g, constraint, token);
        }
        if (endOfGeneration.get(token)) {
            finish(g, null);
            return;
        }
        if (constraint != null) {
            constraint.accept(token);
        }
        g.sampled++;
        g.append(token);
        String delta = g.text.add(api.piece(vocab, token, false, pieceBuffer));
        if (!delta.isEmpty()) {
            g.answer.append(delta);
            g.events.add(new Delta(delta));
            if (constraint != null && !g.loopClosed && RepetitionGuard.repeatedUnit(g.answer) > 0) {
                // A loop inside a structure (an NPC's line said over and over): close the structure now, within reach.
                int distance = constraint.stepsToEnd();
                if (distance > 0 && distance != Integer.MAX_VALUE) {
                    g.maxTokens = Math.min(g.maxTokens, g.sampled + distance + 1);
                    g.loopClosed = true;
                }
            }
        }
        if (constraint != null && FORCED && !constraint.isComplete()) {
            fastForward(g, constraint);
        }
        if (constraint != null && constraint.isComplete() || g.sampled >= g.maxTokens || g.size >= settings.contextSize()) {
            finish(g, null);
        }
    }

    /**
     * Whether text the grammar forces (JSON's punctuation and keys between two values: {@code ", "line": "}) is fed
     * to the model in one batch with the next decode instead of sampled a token at a time ({@code
     * -Doam.llama.forced=false} turns it off). A decode of one row costs about as much as one of several on these
     * models, so a tool call, whose text is mostly forced ({@code {"tool_call": {"name": "…", "arguments": {"item": "}),
     * takes a few decodes instead of one per token.
     */
    static volatile boolean FORCED = !"false".equals(System.getProperty("oam.llama.forced"));
    /** The most forced code points fed at once. */
    private static final int FORCED_MAX = 64;
    /** Forced tokens fed so far, for tests. */
    static final java.util.concurrent.atomic.AtomicLong forcedTokens = new java.util.concurrent.atomic.AtomicLong();

    /**
     * Appends the tokens of the text {@code constraint} forces next, less the last token of its tokenization (a token
     * the model chooses may join that text to what follows, as the model's own tokenizer would: fed a lone trailing
     * space, SmolLM2-135M wrote {@code "}}} 1000."} as an argument), when they are allowed one after another and fit
     * the budget. They are decoded with the next step, in one batch, and count as output tokens.
     */
    private void fastForward(Generation g, TokenConstraint constraint) {
        String forced = constraint.forcedText(FORCED_MAX);
        if (forced.codePointCount(0, forced.length()) < 3) {
            return;
        }
        int[] all;
        try {
            all = api.tokenize(vocab, forced, false, false);
        } catch (RuntimeException e) {
            return;
        }
        if (all.length < 3) {
            return;
        }
        int[] tokens = Arrays.copyOf(all, all.length - 1);
        if (g.maxTokens - g.sampled <= tokens.length + 1 || g.size + tokens.length >= settings.contextSize()) {
            return;
        }
        java.io.ByteArrayOutputStream pieces = new java.io.ByteArrayOutputStream();
        for (int token : tokens) {
            if (endOfGeneration.get(token) || api.isControl(vocab, token)) {
                return;
            }
            pieces.writeBytes(api.piece(vocab, token, false, pieceBuffer));
        }
        byte[] fed = pieces.toByteArray();
        byte[] text = forced.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (fed.length >= text.length || !Arrays.equals(fed, 0, fed.length, text, 0, fed.length)) {
            return; // a tokenizer that adds a space or drops one: sample instead
        }
        for (int token : tokens) {
            if (!constraint.allows(token)) {
                return; // the tokens before this one are taken; the model samples from here
            }
            constraint.accept(token);
            g.sampled++;
            g.append(token);
            forcedTokens.incrementAndGet();
            String delta = g.text.add(api.piece(vocab, token, false, pieceBuffer));
            if (!delta.isEmpty()) {
                g.answer.append(delta);
                g.events.add(new Delta(delta));
            }
        }
    }

    /** Tokens past which a closing is never forced: a step's structure closes within this many code points. */
    private static final int CLOSING_WINDOW = 256;
    /** Candidates tried in order of the model's preference before every allowed token is looked at. */
    private static final int CLOSING_CANDIDATES = 64;

    /**
     * {@code token}, or, when the step's token budget runs low, a token that brings the end of the grammar closer:
     * a constrained output (a call, a JSON value) is closed within its budget instead of being cut mid-structure, so
     * strings need no length cap sized in advance for the worst case. The model still chooses: among the allowed
     * tokens that shorten the way to the end, the one it prefers most.
     */
    private int closing(Generation g, TokenConstraint constraint, int token) {
        int left = g.maxTokens - g.sampled; // this token included
        if (left > CLOSING_WINDOW || constraint.stepsToEnd() == Integer.MAX_VALUE) {
            return token;
        }
        int room = left - 1; // tokens after this one: the end must stay within reach of them
        if (constraint.stepsToEndAfter(token) <= room) {
            return token;
        }
        constraint.fillMask(mask);
        long[] candidates = mask.clone();
        for (int tried = 0; tried < CLOSING_CANDIDATES; tried++) {
            int best = -1;
            for (int t = 0; t < nVocab; t++) {
                if ((candidates[t >>> 6] & (1L << t)) != 0 && (best < 0 || logits[t] > logits[best])) {
                    best = t;
                }
            }
            if (best < 0) {
                return token;
            }
            if (constraint.stepsToEndAfter(best) <= room) {
                return best;
            }
            candidates[best >>> 6] &= ~(1L << best);
        }
        int best = -1;
        int nearest = Integer.MAX_VALUE;
        for (int t = 0; t < nVocab; t++) {
            if ((candidates[t >>> 6] & (1L << t)) != 0) {
                int after = constraint.stepsToEndAfter(t);
                if (after < nearest || (after == nearest && logits[t] > logits[best])) {
                    best = t;
                    nearest = after;
                }
            }
        }
        return best < 0 ? token : best; // none within reach: the nearest to the end
    }

    /** Ends {@code g}: frees its lane recording what the KV cache holds, then sends the terminal event. */
    private void finish(Generation g, @Nullable Event terminal) {
        active.remove(g);
        close(g.constraint);
        Event last = terminal;
        if (last == null) {
            String rest = g.text.finish();
            if (!rest.isEmpty()) {
                g.answer.append(rest);
                g.events.add(new Delta(rest));
            }
            last = new Done(new EngineResult(g.answer.toString(), g.promptLength, g.cachedLost ? 0 : g.lease.cached(), g.sampled));
        }
        try {
            slots.release(g.lease, Arrays.copyOf(g.tokens, g.nPast));
        } finally {
            running.remove(g);
            g.finished.countDown();
            g.events.add(last);
        }
    }

    /** After a bug in a step: fails every request of this model and clears its cache. Decode thread only. */
    void failAll(Throwable error) {
        try {
            api.clear(context);
        } catch (RuntimeException e) {
            Log.error("clearing the KV cache", e);
        }
        for (Generation g : List.copyOf(active)) {
            g.nPast = 0;
            finish(g, new Failed(error));
        }
        slots.forgetIdle();
    }

    /** One request: its tokens (prompt, then sampled) and how many of them the lane's cache holds. */
    private final class Generation implements GenerationEvents.Generation {
        final EngineRequest request;
        /** The most tokens to sample; lowered once when the output loops inside a structure (then {@link #loopClosed}). */
        int maxTokens;
        boolean loopClosed;
        final SlotTable.Lease lease;
        final int promptLength;
        final SplittableRandom random;
        final Utf8Pieces text = new Utf8Pieces();
        final StringBuilder answer = new StringBuilder();
        final GenerationEvents events = new GenerationEvents();
        final CountDownLatch finished = new CountDownLatch(1);
        volatile boolean cancelRequested;
        // decode thread only
        int[] tokens;
        int size;
        int nPast;
        int sampled;
        boolean cachedLost;
        @Nullable TokenConstraint constraint;

        Generation(EngineRequest request, int maxTokens, int[] prompt, SlotTable.Lease lease,
                @Nullable TokenConstraint constraint) {
            this.request = request;
            this.constraint = constraint;
            this.maxTokens = maxTokens;
            this.lease = lease;
            this.promptLength = prompt.length;
            this.tokens = Arrays.copyOf(prompt, prompt.length + Math.min(maxTokens, 256));
            this.size = prompt.length;
            this.random = new SplittableRandom(request.seed());
        }

        void append(int token) {
            if (size == tokens.length) {
                tokens = Arrays.copyOf(tokens, size * 2);
            }
            tokens[size++] = token;
        }

        @Override
        public void cancel() {
            cancelRequested = true;
            events.add(new Cancelled());
            loop.wake();
        }

        /** Runs on the caller's thread: forwards deltas until the request ends or the token is cancelled. */
        EngineResult await(Consumer<String> onDelta, CancellationToken token) throws AgentException {
            return events.await(this, onDelta, token);
        }

        @Override
        public boolean cancelRequested() {
            return cancelRequested;
        }

        @Override
        public void waitAfterCancel() {
            waitForLoop();
        }

        @Override
        public boolean engineClosed() {
            return closed;
        }

        @Override
        public AgentException failure(Throwable error) {
            return FfmEngine.failure(error);
        }

        /**
         * Waits briefly for the decode thread to drop the request, which it does at its next step (at most one
         * decode: {@value #CHUNK} prompt tokens of this request): a cancel answers within {@value #CANCEL_ANSWER_MS}
         * ms even on a loaded machine, and the lane is free once the current decode ends.
         */
        private void waitForLoop() {
            try {
                if (!finished.await(CANCEL_ANSWER_MS, TimeUnit.MILLISECONDS)) {
                    Log.debug("llama lane " + lease.id() + " is freed after the current decode");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static AgentException failure(Throwable e) {
        if (e instanceof IllegalArgumentException) {
            return new AgentException(ErrorCode.GENERATION_FAILED, "The local model cannot run this request: " + e.getMessage());
        }
        Log.error("llama generation failed", e);
        return new AgentException(ErrorCode.GENERATION_FAILED, "The local model failed: " + e.getMessage());
    }
}
