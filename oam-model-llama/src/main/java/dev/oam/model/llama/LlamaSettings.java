package dev.oam.model.llama;

import dev.oam.core.Environment;
import dev.oam.core.Log;
import dev.oam.core.model.LanguageModel;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.ffm.FfmTuning;
import org.jspecify.annotations.Nullable;

/**
 * What the host decides for every llama model of a {@link LlamaBackend}, read once from an {@link Environment}
 * ({@link #read}); a client's model value is {@link LlamaModelValue}. The engine, the library and the FFM tuning are
 * process-wide by nature (llama.cpp's library is loaded once per process), so the process's environment is the one that
 * names them.
 *
 * @param slots sessions that generate at once on one model (each gets {@code contextSize} tokens);
 *     {@value #SLOTS_VARIABLE}
 * @param threads generation threads; 0 picks one less than the cores (at least 1); {@value #THREADS_VARIABLE}
 * @param threadsBatch prompt-processing threads; 0 picks the cores; {@value #THREADS_BATCH_VARIABLE}
 * @param contextSize tokens per session when the model value names none; 0 picks
 *     min({@value LanguageModel#DEFAULT_CONTEXT_SIZE}, the file's trained context); {@value #CONTEXT_VARIABLE}
 * @param gpuLayers layers of every model to offload to a GPU unless its value names {@code gpuLayers}; -1 for all;
 *     {@value #GPU_LAYERS_VARIABLE}
 * @param processHost whether models run in a child process unless their value says {@code "host": "in-process"};
 *     {@value #HOST_VARIABLE}{@code =process}
 * @param engine the engine forced ({@value EngineChoice#VARIABLE}, {@value EngineChoice#PROPERTY}), or null to choose
 * @param library the llama.cpp library the FFM engine drives ({@value #LIBRARY_VARIABLE}, {@value #LIBRARY_PROPERTY};
 *     {@code binding} for the binding's own), or null for the project-built one when there is one
 * @param tuning how an FFM engine decodes ({@link FfmTuning#read})
 */
public record LlamaSettings(
        int slots,
        int threads,
        int threadsBatch,
        int contextSize,
        int gpuLayers,
        boolean processHost,
        EngineChoice.@Nullable Kind engine,
        @Nullable String library,
        FfmTuning tuning) {
    public static final String SLOTS_VARIABLE = "OAM_LLAMA_SLOTS";
    public static final String THREADS_VARIABLE = "OAM_LLAMA_THREADS";
    public static final String THREADS_BATCH_VARIABLE = "OAM_LLAMA_THREADS_BATCH";
    public static final String CONTEXT_VARIABLE = "OAM_LLAMA_CONTEXT";
    /** Layers of every model to offload to a GPU unless its value names {@code gpuLayers}; -1 for all. */
    public static final String GPU_LAYERS_VARIABLE = "OAM_LLAMA_GPU_LAYERS";
    /** {@code process} runs every llama model of this process in a child process by default. */
    public static final String HOST_VARIABLE = "OAM_MODEL_HOST";

    public static final String LIBRARY_VARIABLE = "OAM_LLAMA_LIBRARY";
    public static final String LIBRARY_PROPERTY = "oam.llama.library";

    public LlamaSettings {
        if (slots < 1 || slots > 16) {
            throw new IllegalArgumentException("slots must be from 1 to 16");
        }
        if (threads < 0 || threadsBatch < 0 || contextSize < 0) {
            throw new IllegalArgumentException("threads and context size must not be negative");
        }
        if (gpuLayers != EngineSettings.AUTO_LAYERS && (gpuLayers < -1 || gpuLayers > LlamaModelValue.MAX_GPU_LAYERS)) {
            throw new IllegalArgumentException("gpuLayers must be from -1 (all) to " + LlamaModelValue.MAX_GPU_LAYERS);
        }
        library = library == null || library.isBlank() ? null : library.strip();
        java.util.Objects.requireNonNull(tuning, "tuning");
    }

    /** The process's settings ({@link #read} of {@link Environment#system()}). */
    public static LlamaSettings fromSystem() {
        return read(Environment.system());
    }

    /**
     * The settings {@code environment} names. Unset values keep the defaults (one slot, the machine's threads, the
     * model's context, the CPU, in-process, the engine and library chosen automatically); invalid ones are logged and
     * the default used.
     */
    public static LlamaSettings read(Environment environment) {
        return new LlamaSettings(
                integer(environment, SLOTS_VARIABLE, 1, 16, 1),
                integer(environment, THREADS_VARIABLE, 1, 256, 0),
                integer(environment, THREADS_BATCH_VARIABLE, 1, 256, 0),
                integer(environment, CONTEXT_VARIABLE, LlamaModelValue.MIN_CONTEXT, LlamaModelValue.MAX_CONTEXT, 0),
                integer(
                        environment,
                        GPU_LAYERS_VARIABLE,
                        -1,
                        LlamaModelValue.MAX_GPU_LAYERS,
                        EngineSettings.AUTO_LAYERS),
                processHost(environment.variable(HOST_VARIABLE), false),
                engine(environment),
                library(environment),
                tuning(environment));
    }

    private static FfmTuning tuning(Environment environment) {
        try {
            return FfmTuning.read(environment::variable, environment::property);
        } catch (NumberFormatException e) {
            Log.warning("oam.llama.decodeTargetMs is not a number (" + e.getMessage() + "); using the default");
            return FfmTuning.read(
                    environment::variable,
                    name -> name.equals("oam.llama.decodeTargetMs") ? null : environment.property(name));
        }
    }

    /** These sizes, every model on the CPU and in-process; the engine, library and tuning stay. */
    public LlamaSettings sized(int slots, int threads, int threadsBatch, int contextSize) {
        return new LlamaSettings(slots, threads, threadsBatch, contextSize, 0, false, engine, library, tuning);
    }

    public LlamaSettings withGpuLayers(int layers) {
        return new LlamaSettings(
                slots, threads, threadsBatch, contextSize, layers, processHost, engine, library, tuning);
    }

    public LlamaSettings withProcessHost(boolean inChild) {
        return new LlamaSettings(
                slots, threads, threadsBatch, contextSize, gpuLayers, inChild, engine, library, tuning);
    }

    /**
     * Whether {@code value} of {@value #HOST_VARIABLE} asks for a child process: {@code process} yes,
     * {@code in-process} no, unset or blank {@code fallback}; anything else is logged and means in-process.
     */
    static boolean processHost(@Nullable String value, boolean fallback) {
        if (value == null || value.isBlank()) {
            return fallback;
        }
        if (value.strip().equalsIgnoreCase("process")) {
            return true;
        }
        if (!value.strip().equalsIgnoreCase("in-process")) {
            Log.warning(HOST_VARIABLE + "='" + value + "' is neither process nor in-process; models run in-process");
        }
        return false;
    }

    /** The engine {@code environment} forces, or null; a bad value is logged and means "choose". */
    private static EngineChoice.@Nullable Kind engine(Environment environment) {
        try {
            return EngineChoice.forced(environment);
        } catch (IllegalArgumentException e) {
            Log.warning(e.getMessage() + "; choosing automatically");
            return null;
        }
    }

    /** {@value #LIBRARY_PROPERTY}, else {@value #LIBRARY_VARIABLE}; null when neither is set. */
    static @Nullable String library(Environment environment) {
        String named = environment.property(LIBRARY_PROPERTY);
        if (named == null || named.isBlank()) {
            named = environment.variable(LIBRARY_VARIABLE);
        }
        return named == null || named.isBlank() ? null : named.strip();
    }

    private static int integer(Environment environment, String name, int min, int max, int fallback) {
        String text = environment.variable(name);
        if (text == null || text.isBlank()) {
            return fallback;
        }
        try {
            int value = Integer.parseInt(text.strip());
            if (value >= min && value <= max) {
                return value;
            }
        } catch (NumberFormatException e) {
            // logged below
        }
        Log.warning(name + "='" + text + "' is not an integer from " + min + " to " + max + "; using the default");
        return fallback;
    }
}
