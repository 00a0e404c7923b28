package dev.oam.model.llama.engine;

import dev.oam.core.model.ModelSpec;

/**
 * How an engine runs one model. {@code 0} in {@code contextSize}, {@code threads} or {@code threadsBatch} means "the
 * default", resolved against the machine and the file by {@link #resolve(int, int)}.
 *
 * @param contextSize tokens per slot (prompt plus answer of one session); default min(8192, the file's context length)
 * @param slots parallel slots: sessions decoded at once, each with its own prompt cache; default 1
 * @param threads generation threads; default max(1, cores − 1)
 * @param threadsBatch prompt-processing threads; default cores
 * @param gpuLayers layers offloaded to a GPU; 0 runs on the CPU only, -1 offloads every layer, {@link #AUTO_LAYERS}
 *     (what the host's default is when nothing names a count) offloads every layer where the loaded llama.cpp has a GPU
 *     device and none elsewhere
 */
public record EngineSettings(int contextSize, int slots, int threads, int threadsBatch, int gpuLayers) {
    /**
     * What {@code gpuLayers = -1} is passed to llama.cpp as: more layers than any model has, which every build reads as
     * all.
     */
    public static final int ALL_LAYERS = 999;
    /**
     * {@code gpuLayers} when neither the model value nor the host names a count: every layer on the GPU where the
     * llama.cpp that loads the model registered a GPU device (falling back to the CPU when they do not fit), else none.
     * The JNI engine (b4916, no GPU backend in the binding's library) reads it as 0.
     */
    public static final int AUTO_LAYERS = -100;
    /**
     * Larger than any GGUF context length in use; keeps {@code slots × contextSize} far from overflowing. The bounds a
     * model value may name are {@link ModelSpec.Llama}'s, the one place they live.
     */
    static final int MAX_CONTEXT = ModelSpec.Llama.MAX_CONTEXT;

    static final int MAX_SLOTS = 16;
    static final int MAX_THREADS = ModelSpec.Llama.MAX_THREADS;
    /**
     * The engine's floor, below a model value's {@link ModelSpec.Llama#MIN_CONTEXT}: a file trained on fewer tokens
     * than a value's size gets its own length, down to this.
     */
    static final int MIN_CONTEXT = 16;

    static final int DEFAULT_CONTEXT = 8192;

    public EngineSettings {
        if (contextSize != 0 && (contextSize < MIN_CONTEXT || contextSize > MAX_CONTEXT)) {
            throw new IllegalArgumentException("contextSize must be 0 (default) or in [" + MIN_CONTEXT + ", "
                    + MAX_CONTEXT + "], was " + contextSize);
        }
        if (slots < 1 || slots > MAX_SLOTS) {
            throw new IllegalArgumentException("slots must be in [1, " + MAX_SLOTS + "], was " + slots);
        }
        if (threads < 0 || threads > MAX_THREADS) {
            throw new IllegalArgumentException(
                    "threads must be 0 (default) or in [1, " + MAX_THREADS + "], was " + threads);
        }
        if (threadsBatch < 0 || threadsBatch > MAX_THREADS) {
            throw new IllegalArgumentException(
                    "threadsBatch must be 0 (default) or in [1, " + MAX_THREADS + "], was " + threadsBatch);
        }
        if (gpuLayers != AUTO_LAYERS && (gpuLayers < -1 || gpuLayers > ModelSpec.Llama.MAX_GPU_LAYERS)) {
            throw new IllegalArgumentException(
                    "gpuLayers must be -1 (all) or in [0, " + ModelSpec.Llama.MAX_GPU_LAYERS + "], was " + gpuLayers);
        }
        if ((long) Math.max(contextSize, DEFAULT_CONTEXT) * slots > Integer.MAX_VALUE / 2) {
            throw new IllegalArgumentException("slots × contextSize is too large");
        }
    }

    /** Every value at its default. */
    public static EngineSettings defaults() {
        return new EngineSettings(0, 1, 0, 0, 0);
    }

    public EngineSettings withContextSize(int value) {
        return new EngineSettings(value, slots, threads, threadsBatch, gpuLayers);
    }

    public EngineSettings withSlots(int value) {
        return new EngineSettings(contextSize, value, threads, threadsBatch, gpuLayers);
    }

    public EngineSettings withThreads(int value) {
        return new EngineSettings(contextSize, slots, value, threadsBatch, gpuLayers);
    }

    public EngineSettings withThreadsBatch(int value) {
        return new EngineSettings(contextSize, slots, threads, value, gpuLayers);
    }

    public EngineSettings withGpuLayers(int value) {
        return new EngineSettings(contextSize, slots, threads, threadsBatch, value);
    }

    /**
     * The settings with every default filled in, for a file whose context length is {@code fileContextLength}
     * ({@code 0} when unknown) on a machine with {@code cores} processors. The context per slot never exceeds what the
     * model was trained for.
     */
    public EngineSettings resolve(int fileContextLength, int cores) {
        int trained = fileContextLength > 0 ? fileContextLength : DEFAULT_CONTEXT;
        int context = contextSize == 0 ? Math.min(DEFAULT_CONTEXT, trained) : Math.min(contextSize, trained);
        context = Math.max(MIN_CONTEXT, Math.min(context, MAX_CONTEXT));
        int c = Math.max(1, cores);
        return new EngineSettings(
                context,
                slots,
                threads == 0 ? Math.max(1, c - 1) : threads,
                threadsBatch == 0 ? Math.min(c, MAX_THREADS) : threadsBatch,
                gpuLayers);
    }

    /**
     * The KV cache size. llama.cpp places each batch of prompt tokens in contiguous free cells and fails the request
     * (and every other running one) when there is no such run; with several slots, tokens decoded in parallel
     * interleave, so freed cells are scattered (a prompt can fail with most of the cache free). Several slots therefore
     * get one slot's worth of spare cells; the context of a request stays {@code contextSize}, enforced here
     * (llama.cpp's own per-slot limit is then a little larger).
     */
    public int kvCells() {
        return (slots == 1 ? 1 : slots + 1) * contextSize;
    }
}
