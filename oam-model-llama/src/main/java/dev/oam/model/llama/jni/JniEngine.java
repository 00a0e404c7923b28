package dev.oam.model.llama.jni;

import de.kherud.llama.InferenceParameters;
import de.kherud.llama.LlamaIterator;
import de.kherud.llama.LlamaModel;
import de.kherud.llama.LlamaOutput;
import de.kherud.llama.ModelParameters;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.Generation;
import dev.oam.model.llama.engine.GenerationEvents.Cancelled;
import dev.oam.model.llama.engine.GenerationEvents.Delta;
import dev.oam.model.llama.engine.GenerationEvents.Done;
import dev.oam.model.llama.engine.GenerationEvents.Event;
import dev.oam.model.llama.engine.GenerationEvents.Failed;
import dev.oam.model.llama.engine.ModelFile;
import dev.oam.model.llama.engine.NativeLibrary;
import dev.oam.model.llama.engine.NativeSettings;
import dev.oam.model.llama.engine.SamplerExtras;
import dev.oam.model.llama.engine.SlotEngine;
import dev.oam.model.llama.engine.SlotTable;
import dev.oam.model.llama.engine.TokenCounts;
import dev.oam.model.llama.gguf.GgufException;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.prompt.ChatMessage;
import dev.oam.model.llama.prompt.ChatRenderer;
import dev.oam.model.llama.prompt.TurnFormat;
import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The real {@link Engine}: one GGUF model loaded in-process by llama.cpp through {@code de.kherud:llama}.
 *
 * <p>Lifetime: create one engine per model file per process and keep it. The binding cannot free a model
 * ({@code LlamaModel.close()} leaks the context and a thread), so {@link #close()} only cancels running work, refuses
 * new work and stops the engine's threads; the native memory stays until the process exits.
 *
 * <p>Threads. No call that waits in native code runs on the caller's thread (the bridge calls from virtual threads, and
 * a virtual thread blocked in JNI pins its carrier on a 2-core machine): each generation runs on one of the engine's
 * platform worker threads ({@code oam-llama-<n>}, daemon, one per slot), which owns the binding's iterator; the caller
 * waits on a queue of deltas and runs {@code onDelta} itself. Tokenising ({@code encode}) and template probing are
 * short native calls that never wait, and run on the caller.
 *
 * <p>Cancelling is cooperative, because the binding's {@code cancel()} from another thread strands the consumer for
 * ever: the token's listener sets a flag and wakes the caller, which returns {@code cancelled}; the worker sees the
 * flag after its current token and calls {@code cancel()} itself (always, in {@code finally}). The caller waits for
 * that up to {@link #CANCEL_WAIT_MS} so the slot is normally free again when it returns; a worker still processing a
 * long prompt frees the slot when its first token arrives.
 *
 * <p>Requests queue fairly for the slots ({@link SlotTable}), then for the process-wide {@link ComputeGate} (one model
 * computes at a time), and each is pinned to its slot with llama.cpp's {@code id_slot}.
 */
public final class JniEngine implements SlotEngine, AutoCloseable {
    static final long CANCEL_WAIT_MS = 2_000;
    private static final AtomicInteger THREAD_NUMBERS = new AtomicInteger();
    /** Stands for the BOS token at the start of a prompt; equal in every prompt, so prefixes compare right. */
    private static final int BOS = -1;

    private final ModelFile file;
    private final EngineSettings settings;
    private final LlamaModel model;
    private final SlotTable slots;
    private final ExecutorService workers;
    private final ChatRenderer chat;
    private final ComputeGate gate;
    private final Set<Job> running = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private final TokenCounts tokenCounts = new TokenCounts();
    private volatile boolean closed;
    private final long loadMillis;

    private JniEngine(ModelFile file, EngineSettings settings, LlamaModel model, long loadMillis, ComputeGate gate) {
        this.file = file;
        this.settings = settings;
        this.model = model;
        this.loadMillis = loadMillis;
        this.gate = gate;
        this.slots = new SlotTable(settings.slots());
        this.workers = Executors.newFixedThreadPool(settings.slots(), r -> {
            Thread t = new Thread(r, "oam-llama-" + THREAD_NUMBERS.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.chat = file.chatRenderer();
    }

    /**
     * Loads {@code file} (and, the first time in this JVM, llama.cpp's native library). Keep the engine for the life of
     * the process: see {@link #close()}.
     *
     * @throws IOException the native library or the model cannot be loaded, or the file has no chat template and no
     *     turn format the bridge knows ({@link TurnFormat#require}; the message says why)
     */
    public static JniEngine open(GgufFile file, EngineSettings settings, NativeSettings natives) throws IOException {
        try {
            return open(ModelFile.of(file), settings, natives);
        } catch (GgufException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    static JniEngine open(ModelFile file, EngineSettings requested, NativeSettings natives) throws IOException {
        if (!Files.isRegularFile(file.path()) || !Files.isReadable(file.path())) {
            throw new IOException("model file " + file.path() + " does not exist or is not readable");
        }
        EngineSettings resolved =
                requested.resolve(file.contextLength(), Runtime.getRuntime().availableProcessors());
        // the JNI engine keeps its default of old: the CPU unless a count is named
        EngineSettings settings =
                resolved.gpuLayers() == EngineSettings.AUTO_LAYERS ? resolved.withGpuLayers(0) : resolved;
        NativeLibrary.load(natives);
        ModelParameters parameters = new ModelParameters()
                .setModel(file.path().toAbsolutePath().toString())
                .setCtxSize(settings.kvCells())
                .setDefragThold(0.1f)
                .setParallel(settings.slots())
                .setThreads(settings.threads())
                .setThreadsBatch(settings.threadsBatch())
                .disableContextShift()
                .enableJinja();
        if (settings.gpuLayers() != 0) {
            // Only when asked: without a GPU build the option prints a warning to stdout (fd 1). -1: every layer.
            parameters.setGpuLayers(settings.gpuLayers() < 0 ? EngineSettings.ALL_LAYERS : settings.gpuLayers());
        }
        if (!Log.enabled(Log.Level.DEBUG)) {
            parameters.disableLog();
        }
        long start = System.nanoTime();
        LlamaModel model;
        try {
            model = new LlamaModel(parameters);
        } catch (RuntimeException e) {
            throw new IOException("llama.cpp cannot load " + file.path() + ": " + e.getMessage(), e);
        }
        if (nativeHandle(model) == 0) {
            // A rejected option makes the constructor return with no context; any call would then crash the JVM.
            throw new IOException(
                    "llama.cpp did not load " + file.path() + " (rejected parameters " + parameters + ")");
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        Log.info("llama model '" + file.name() + "' loaded in " + millis + " ms (" + settings.slots() + " slot(s) of "
                + settings.contextSize() + " tokens, " + settings.threads() + "/" + settings.threadsBatch()
                + " threads; "
                + (file.chatTemplate() != null
                        ? "the file's own chat template"
                        : file.turnFormat().label() + " turns, the file has no chat template")
                + ")");
        return new JniEngine(file, settings, model, millis, ComputeGate.PROCESS);
    }

    private static long nativeHandle(LlamaModel model) {
        try {
            Field ctx = LlamaModel.class.getDeclaredField("ctx");
            ctx.setAccessible(true);
            return ctx.getLong(model);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return -1; // unknown: assume loaded
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

    /** How long loading the model took (without the native library). */
    public long loadMillis() {
        return loadMillis;
    }

    @Override
    public int countTokens(String text) {
        ensureUsable();
        return tokenCounts.count(text, t -> model.encode(t).length);
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

    /** The tokens llama.cpp evaluates for {@code prompt}: BOS (when the model adds one) and the prompt's tokens. */
    @Override
    public int[] promptTokens(String prompt) {
        int[] tokens = model.encode(prompt);
        if (!file.addBos()) {
            return tokens;
        }
        int[] withBos = new int[tokens.length + 1];
        withBos[0] = BOS;
        System.arraycopy(tokens, 0, withBos, 1, tokens.length);
        return withBos;
    }

    @Override
    public EngineResult generate(
            EngineRequest request, Object sessionKey, Consumer<String> onDelta, CancellationToken token)
            throws AgentException {
        request.checkRunnable();
        if (closed) {
            throw SlotTable.closedError();
        }
        token.check();
        int[] prompt = promptTokens(request.prompt());
        int context = settings.contextSize();
        if (prompt.length + 1 > context) {
            throw new AgentException(
                    ErrorCode.CONTEXT_SIZE_EXCEEDED,
                    String.format(
                            Locale.ROOT,
                            "The prompt has %d tokens; the context holds %d (prompt and at least one generated token).",
                            prompt.length,
                            context));
        }
        // llama.cpp stops (context shift is off) once prompt + generated reach the context: ask for no more.
        int maxTokens = Math.max(1, Math.min(request.maxTokens(), context - prompt.length - 1));
        SlotTable.Lease lease = slots.acquire(prompt, sessionKey, token);
        Job generation = null;
        boolean enteredGate = false;
        try {
            gate.enter(this, token);
            enteredGate = true;
            generation = new Job(request, maxTokens, prompt, lease);
            running.add(generation);
            workers.execute(generation);
        } catch (AgentException | RuntimeException | Error e) {
            if (generation != null) {
                running.remove(generation);
            }
            if (enteredGate) {
                gate.exit(this);
            }
            slots.release(lease, Arrays.copyOf(prompt, lease.cached()));
            if (e instanceof RejectedExecutionException) {
                throw SlotTable.closedError();
            }
            throw e;
        }
        return generation.await(onDelta, token);
    }

    /** top-p as llama.cpp takes it: at most 1, and above 0 (a threshold of 0 keeps only the likeliest token). */
    static float topP(double topP) {
        return (float) Math.min(1.0, Math.max(1e-6, topP));
    }

    /** The admission queue and slots (tests watch it). */
    @Override
    public SlotTable slotTable() {
        return slots;
    }

    private void ensureUsable() {
        if (closed) {
            throw new IllegalStateException("the llama engine for '" + file.name() + "' is closed");
        }
    }

    /**
     * Cancels running and queued generations, refuses new ones ({@code model_unavailable}) and stops the worker threads
     * once they are done. The native model is not freed (the binding cannot); drop the engine and let the process exit
     * reclaim it. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        slots.close();
        for (Job g : running) {
            g.cancel();
        }
        workers.shutdown();
    }

    /** One generation: run by a worker thread, awaited by the caller. */
    private final class Job extends Generation implements Runnable {
        private final EngineRequest request;
        private final int maxTokens;
        private final int[] prompt;
        private final SlotTable.Lease lease;

        Job(EngineRequest request, int maxTokens, int[] prompt, SlotTable.Lease lease) {
            super(CANCEL_WAIT_MS);
            this.request = request;
            this.maxTokens = maxTokens;
            this.prompt = prompt;
            this.lease = lease;
        }

        /** Runs on the worker thread. The terminal event is sent last, once the slot and the gate are free. */
        @Override
        public void run() {
            int[] held = Arrays.copyOf(prompt, lease.cached());
            Event terminal = new Cancelled();
            try {
                StringBuilder text = new StringBuilder();
                int steps = 0;
                if (!cancelRequested()) {
                    LlamaIterator iterator = model.generate(parameters()).iterator();
                    try {
                        while (iterator.hasNext() && !cancelRequested()) {
                            LlamaOutput output = iterator.next();
                            steps++;
                            // The binding decodes bytes it cannot finish as U+FFFD; a game's text never shows it.
                            String piece = output.text.replace("\uFFFD", "");
                            if (!piece.isEmpty()) {
                                text.append(piece);
                                post(new Delta(piece));
                            }
                        }
                    } finally {
                        iterator.cancel(); // on this thread only: from another thread it strands next()
                    }
                }
                if (!cancelRequested()) {
                    String answer = text.toString();
                    // The binding does not report the sampled token ids: count the answer's own tokens, at most
                    // what was asked (a model may sample a longer split of the same text than the tokenizer).
                    int[] generated = answer.isEmpty() ? new int[0] : model.encode(answer);
                    int count = Math.min(generated.length, maxTokens);
                    held = concat(prompt, generated, Math.max(0, count - 1));
                    terminal = new Done(new EngineResult(answer, prompt.length, lease.cached(), count));
                    Log.debug("llama slot " + lease.id() + ": " + prompt.length + " prompt tokens (" + lease.cached()
                            + " cached), " + count + " generated in " + steps + " steps");
                }
            } catch (Throwable e) {
                terminal = new Failed(e);
            } finally {
                try {
                    gate.exit(JniEngine.this);
                    slots.release(lease, held);
                } finally {
                    running.remove(this);
                    complete(terminal);
                }
            }
        }

        private InferenceParameters parameters() {
            InferenceParameters p = new InferenceParameters(request.prompt())
                    .setNPredict(maxTokens)
                    .setTemperature((float) Math.min(request.temperature(), 100.0))
                    .setTopK(Math.max(0, request.topK()))
                    .setTopP(topP(request.topP()))
                    .setSeed(seed32(request.seed()))
                    .setCachePrompt(true);
            if (request.grammar() != null) {
                p.setGrammar(request.grammar().gbnf());
            }
            extras(p, request.extras());
            // Only ids in [0, slots) are ever sent: llama.cpp waits for ever on a slot that does not exist.
            if (lease.id() >= settings.slots()) {
                throw new IllegalStateException("slot " + lease.id() + " out of range");
            }
            RawParameters.putInt(p, "id_slot", lease.id());
            return p;
        }

        @Override
        protected void stillBusy() {
            Log.info("llama slot " + lease.id() + " is still busy after a cancel (a long prompt is being processed)");
        }

        @Override
        protected boolean engineClosed() {
            return closed;
        }

        @Override
        protected AgentException failure(Throwable error) {
            return JniEngine.failure(error);
        }
    }

    private static AgentException failure(Throwable e) {
        Log.error("llama generation failed", e);
        return new AgentException(ErrorCode.GENERATION_FAILED, "The local model failed: " + e.getMessage());
    }

    /**
     * The sampler settings beyond temperature, top-k and top-p, by the names of llama.cpp's server (b4916 reads all).
     */
    static void extras(InferenceParameters p, SamplerExtras x) {
        if (x == SamplerExtras.NONE) {
            return;
        }
        RawParameters.putNumber(p, "min_p", x.minP());
        RawParameters.putNumber(p, "typical_p", x.typicalP());
        RawParameters.putNumber(p, "repeat_penalty", x.repeatPenalty());
        RawParameters.putNumber(p, "repeat_last_n", x.repeatLastN());
        RawParameters.putNumber(p, "presence_penalty", x.presencePenalty());
        RawParameters.putNumber(p, "frequency_penalty", x.frequencyPenalty());
        RawParameters.putNumber(p, "dry_multiplier", x.dryMultiplier());
        RawParameters.putNumber(p, "dry_base", x.dryBase());
        RawParameters.putNumber(p, "dry_allowed_length", x.dryAllowedLength());
        RawParameters.putNumber(p, "dry_penalty_last_n", x.dryPenaltyLastN());
        RawParameters.putStrings(p, "dry_sequence_breakers", x.dryBreakers());
        RawParameters.putNumber(p, "xtc_probability", x.xtcProbability());
        RawParameters.putNumber(p, "xtc_threshold", x.xtcThreshold());
    }

    /** llama.cpp takes a 32-bit seed, and 0xFFFFFFFF means "random": fold the long into 31 bits. */
    public static int seed32(long seed) {
        return (int) ((seed ^ (seed >>> 32)) & 0x7FFF_FFFFL);
    }

    private static int[] concat(int[] a, int[] b, int bLength) {
        int[] out = Arrays.copyOf(a, a.length + bLength);
        System.arraycopy(b, 0, out, a.length, bLength);
        return out;
    }
}
