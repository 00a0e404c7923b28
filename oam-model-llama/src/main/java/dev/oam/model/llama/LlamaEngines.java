package dev.oam.model.llama;

import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.gguf.GgufFile;
import java.io.IOException;

/**
 * Opens a model on the engine {@link EngineChoice} picks (FFM or JNI; {@code OAM_LLAMA_ENGINE} /
 * {@code oam.llama.engine} force one, {@code OAM_LLAMA_GRAMMAR} / {@code oam.llama.grammar} pick FFM's grammar
 * implementation), as the backend does. For the benchmarks: the package is exported to them only.
 */
public final class LlamaEngines {
    private LlamaEngines() {}

    /**
     * A model loaded on the engine {@code host} chooses, with its natives and tuning; it is never shared with the
     * backend's own models.
     */
    public static Engine open(GgufFile file, EngineSettings settings, LlamaSettings host) throws IOException {
        return EngineChoice.open(file, settings, host);
    }

    /** Whether {@code engine} is the FFM engine. */
    public static boolean isFfm(Engine engine) {
        return engine.getClass().getName().equals(EngineChoice.FFM_CLASS);
    }

    /** Refuses new requests and cancels running ones ({@code close()} of either engine). */
    public static void close(Engine engine) throws Exception {
        if (engine instanceof AutoCloseable closeable) {
            closeable.close();
        }
    }
}
