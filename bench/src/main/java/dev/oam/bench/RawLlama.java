package dev.oam.bench;

import de.kherud.llama.InferenceParameters;
import de.kherud.llama.LlamaIterator;
import de.kherud.llama.LlamaModel;
import de.kherud.llama.LlamaOutput;
import de.kherud.llama.ModelParameters;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineSettings;
import java.lang.reflect.Method;
import java.nio.file.Path;

/**
 * The baseline: the binding's own API ({@code LlamaModel.generate}) driven directly, with the model parameters
 * {@code JniEngine} uses and the very request our adapter built, so the difference between the two sides is our layer
 * (prompt rendering, grammar, tokenising, slot table, compute gate, worker hand-off, output parsing).
 */
final class RawLlama {
    /** What one generation took. */
    record Run(long firstNanos, long lastNanos, long totalNanos, int promptTokens, int outputTokens, String text) {}

    private final LlamaModel model;
    private final long loadNanos;

    private RawLlama(LlamaModel model, long loadNanos) {
        this.model = model;
        this.loadNanos = loadNanos;
    }

    /**
     * Loads llama.cpp's library through the engine's {@code NativeLibrary} (a private folder: the binding's own loader
     * would delete {@code /tmp/llama*} and print to stdout). That class is package-private, hence reflection.
     */
    static void loadNativeLibrary() throws Exception {
        Class<?> nativeLibrary = Class.forName("dev.oam.model.llama.engine.NativeLibrary");
        Method load = nativeLibrary.getDeclaredMethod("load", dev.oam.model.llama.engine.NativeSettings.class);
        load.setAccessible(true);
        load.invoke(
                null,
                dev.oam.model.llama.LlamaSettings.read(dev.oam.core.Environment.system())
                        .natives());
    }

    /** {@code settings} must be resolved (no zero defaults). Mirrors {@code JniEngine.open} with one slot. */
    static RawLlama open(Path file, EngineSettings settings) {
        ModelParameters parameters = new ModelParameters()
                .setModel(file.toAbsolutePath().toString())
                .setCtxSize(settings.contextSize())
                .setDefragThold(0.1f)
                .setParallel(1)
                .setThreads(settings.threads())
                .setThreadsBatch(settings.threadsBatch())
                .disableContextShift()
                .enableJinja()
                .disableLog();
        long start = System.nanoTime();
        LlamaModel model = new LlamaModel(parameters);
        return new RawLlama(model, System.nanoTime() - start);
    }

    long loadNanos() {
        return loadNanos;
    }

    /** Runs {@code request} with the prompt cache on or off; times the first and last non-empty text and the end. */
    Run generate(EngineRequest request, boolean cachePrompt) {
        InferenceParameters p = new InferenceParameters(request.prompt())
                .setNPredict(request.maxTokens())
                .setTemperature((float) request.temperature())
                .setTopK(request.topK())
                .setTopP((float) request.topP())
                .setSeed(seed32(request.seed()))
                .setCachePrompt(cachePrompt);
        if (request.grammar() != null) {
            p.setGrammar(request.grammar().gbnf());
        }
        StringBuilder text = new StringBuilder();
        long first = 0;
        long last = 0;
        long start = System.nanoTime();
        LlamaIterator iterator = model.generate(p).iterator();
        try {
            while (iterator.hasNext()) {
                LlamaOutput output = iterator.next();
                if (!output.text.isEmpty()) {
                    last = System.nanoTime();
                    if (first == 0) {
                        first = last;
                    }
                    text.append(output.text);
                }
            }
        } finally {
            iterator.cancel();
        }
        long end = System.nanoTime();
        String answer = text.toString();
        // Counted as JniEngine counts (the binding does not report token ids): BOS + prompt, the answer re-encoded.
        int prompt = model.encode(request.prompt()).length + 1;
        int output = answer.isEmpty() ? 0 : Math.min(model.encode(answer).length, request.maxTokens());
        return new Run(
                first == 0 ? 0 : first - start, last == 0 ? 0 : last - start, end - start, prompt, output, answer);
    }

    /** Tokens of {@code text} (no BOS): the tokenising {@code JniEngine} does on the caller before each request. */
    int encode(String text) {
        return model.encode(text).length;
    }

    /** As {@code JniEngine.seed32}: llama.cpp takes 32 bits, and 0xFFFFFFFF means "random". */
    private static int seed32(long seed) {
        return (int) ((seed ^ (seed >>> 32)) & 0x7FFF_FFFFL);
    }
}
