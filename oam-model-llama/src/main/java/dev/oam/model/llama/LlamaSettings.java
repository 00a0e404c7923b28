package dev.oam.model.llama;

import dev.oam.core.Environment;
import dev.oam.core.Log;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelSpec;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.NativeSettings;
import dev.oam.model.llama.ffm.FfmTuning;
import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What the host decides for every llama model of a {@link LlamaBackend}, read once from an {@link Environment}
 * ({@link #read}) at an entry point (the backend's ServiceLoader constructor, the CLI, the server, the C library's
 * bridge, the model host's child); everything below takes this record and reads no environment. A client's model value
 * is {@link LlamaModelValue}. The engine, the library and the FFM tuning are process-wide by nature (llama.cpp's
 * library is loaded once per process), so the first model's settings name them.
 *
 * @param slots sessions that generate at once on one model (each gets {@code contextSize} tokens);
 *     {@value #SLOTS_VARIABLE}
 * @param threads generation threads; 0 picks one less than the cores (at least 1); {@value #THREADS_VARIABLE}
 * @param threadsBatch prompt-processing threads; 0 picks the cores; {@value #THREADS_BATCH_VARIABLE}
 * @param contextSize tokens per session when the model value names none; 0 picks
 *     min({@value LanguageModel#DEFAULT_CONTEXT_SIZE}, the file's trained context); {@value #CONTEXT_VARIABLE}
 * @param gpuLayers layers of every model to offload to a GPU unless its value names {@code gpuLayers}; -1 for all;
 *     {@value #GPU_LAYERS_VARIABLE}, parsed by {@link ModelSpec.Llama#hostGpuLayers} as the llama-server backend parses
 *     it
 * @param processHost whether models run in a child process unless their value says {@code "host": "in-process"};
 *     {@value #HOST_VARIABLE}{@code =process}
 * @param engine the engine forced ({@value EngineChoice#VARIABLE}, {@value EngineChoice#PROPERTY}), or null to choose
 * @param natives which llama.cpp libraries may be loaded and where they are ({@link NativeSettings#read}: the library
 *     the FFM engine drives, the backend, the bundle, the cache folders)
 * @param tuning how an FFM engine decodes ({@link FfmTuning#read})
 * @param child how a model host's child JVM is started ({@link ChildJvm#read})
 */
public record LlamaSettings(
        int slots,
        int threads,
        int threadsBatch,
        int contextSize,
        int gpuLayers,
        boolean processHost,
        EngineChoice.@Nullable Kind engine,
        NativeSettings natives,
        FfmTuning tuning,
        ChildJvm child) {
    public static final String SLOTS_VARIABLE = "OAM_LLAMA_SLOTS";
    public static final String THREADS_VARIABLE = "OAM_LLAMA_THREADS";
    public static final String THREADS_BATCH_VARIABLE = "OAM_LLAMA_THREADS_BATCH";
    public static final String CONTEXT_VARIABLE = "OAM_LLAMA_CONTEXT";
    /** Layers of every model to offload to a GPU unless its value names {@code gpuLayers}; -1 for all. */
    public static final String GPU_LAYERS_VARIABLE = ModelSpec.Llama.GPU_LAYERS_VARIABLE;
    /** {@code process} runs every llama model of this process in a child process by default. */
    public static final String HOST_VARIABLE = "OAM_MODEL_HOST";

    public static final String LIBRARY_VARIABLE = NativeSettings.LIBRARY_VARIABLE;
    public static final String LIBRARY_PROPERTY = NativeSettings.LIBRARY_PROPERTY;

    public LlamaSettings {
        if (slots < 1 || slots > 16) {
            throw new IllegalArgumentException("slots must be from 1 to 16");
        }
        if (threads < 0 || threadsBatch < 0 || contextSize < 0) {
            throw new IllegalArgumentException("threads and context size must not be negative");
        }
        if (gpuLayers != EngineSettings.AUTO_LAYERS && (gpuLayers < -1 || gpuLayers > ModelSpec.Llama.MAX_GPU_LAYERS)) {
            throw new IllegalArgumentException("gpuLayers must be from -1 (all) to " + ModelSpec.Llama.MAX_GPU_LAYERS);
        }
        Objects.requireNonNull(natives, "natives");
        Objects.requireNonNull(tuning, "tuning");
        Objects.requireNonNull(child, "child");
    }

    /**
     * The settings {@code environment} names. Unset values keep the defaults (one slot, the machine's threads, the
     * model's context, the CPU, in-process, the engine and library chosen automatically); invalid ones are logged and
     * the default used.
     */
    public static LlamaSettings read(Environment environment) {
        Integer layers = ModelSpec.Llama.hostGpuLayers(environment);
        int gpuLayers = layers != null ? layers : EngineSettings.AUTO_LAYERS;
        return new LlamaSettings(
                integer(environment, SLOTS_VARIABLE, 1, 16, 1),
                integer(environment, THREADS_VARIABLE, 1, ModelSpec.Llama.MAX_THREADS, 0),
                integer(environment, THREADS_BATCH_VARIABLE, 1, ModelSpec.Llama.MAX_THREADS, 0),
                integer(environment, CONTEXT_VARIABLE, ModelSpec.Llama.MIN_CONTEXT, ModelSpec.Llama.MAX_CONTEXT, 0),
                gpuLayers,
                processHost(environment.variable(HOST_VARIABLE), false),
                engine(environment),
                NativeSettings.read(environment, gpuFirst(gpuLayers)),
                FfmTuning.read(environment),
                ChildJvm.read(environment));
    }

    /** Whether {@code gpuLayers} of the host asks for GPU layers, so a GPU build of llama.cpp is preferred. */
    private static boolean gpuFirst(int gpuLayers) {
        return gpuLayers != 0 && gpuLayers != EngineSettings.AUTO_LAYERS;
    }

    /** The llama.cpp library named ({@link NativeSettings#library}), or null. */
    public @Nullable String library() {
        return natives.library();
    }

    /**
     * These sizes, every model on the CPU and in-process; the engine, natives (which build is preferred among them) and
     * tuning stay.
     */
    public LlamaSettings sized(int slots, int threads, int threadsBatch, int contextSize) {
        return new LlamaSettings(slots, threads, threadsBatch, contextSize, 0, false, engine, natives, tuning, child);
    }

    public LlamaSettings withGpuLayers(int layers) {
        return new LlamaSettings(
                slots,
                threads,
                threadsBatch,
                contextSize,
                layers,
                processHost,
                engine,
                natives.withGpuFirst(gpuFirst(layers)),
                tuning,
                child);
    }

    public LlamaSettings withProcessHost(boolean inChild) {
        return new LlamaSettings(
                slots, threads, threadsBatch, contextSize, gpuLayers, inChild, engine, natives, tuning, child);
    }

    public LlamaSettings withNatives(NativeSettings value) {
        return new LlamaSettings(
                slots, threads, threadsBatch, contextSize, gpuLayers, processHost, engine, value, tuning, child);
    }

    /**
     * How a model host starts its child JVM: facts of this JVM and where a crash report goes.
     *
     * @param javaHome the JVM's {@code java.home}, whose {@code bin/java} runs the child
     * @param windows whether this is Windows ({@code java.exe})
     * @param classPath this JVM's class path and module path, the child's class path
     * @param crashDir where the child's crash report goes ({@value #CRASH_DIR_PROPERTY}), or null for the user's cache
     *     folder
     * @param cacheHome {@code ${XDG_CACHE_HOME:-~/.cache}/oam}, where a crash report goes by default
     * @param tmpDir the JVM's {@code java.io.tmpdir}, where a crash report goes when no other folder can be made
     */
    public record ChildJvm(
            String javaHome,
            boolean windows,
            String classPath,
            @Nullable String crashDir,
            Path cacheHome,
            Path tmpDir) {
        /** The folder for the child's crash reports; the builds' tests point it into {@code target/}. */
        public static final String CRASH_DIR_PROPERTY = "oam.crashDir";

        public ChildJvm {
            Objects.requireNonNull(javaHome, "javaHome");
            Objects.requireNonNull(classPath, "classPath");
            crashDir = crashDir == null || crashDir.isBlank() ? null : crashDir;
            Objects.requireNonNull(cacheHome, "cacheHome");
            Objects.requireNonNull(tmpDir, "tmpDir");
        }

        /** What {@code environment}'s properties say of this JVM. */
        public static ChildJvm read(Environment environment) {
            List<String> parts = new ArrayList<>();
            for (String property : List.of("java.class.path", "jdk.module.path")) {
                String value = environment.nonBlankProperty(property);
                if (value != null) {
                    parts.add(value);
                }
            }
            return new ChildJvm(
                    Objects.requireNonNullElse(environment.property("java.home"), ""),
                    Objects.requireNonNullElse(environment.property("os.name"), "")
                            .toLowerCase(java.util.Locale.ROOT)
                            .startsWith("windows"),
                    String.join(File.pathSeparator, parts),
                    environment.property(CRASH_DIR_PROPERTY),
                    environment.userCacheFolder().resolve("oam"),
                    Path.of(Objects.requireNonNullElse(environment.property("java.io.tmpdir"), ".")));
        }
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

    private static int integer(Environment environment, String name, int min, int max, int fallback) {
        Integer value = environment.integer(name, min, max);
        return value != null ? value : fallback;
    }
}
