package dev.oam.model.llama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Environment;
import dev.oam.core.Log;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.ModelParameterException;
import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.ModelFile;
import dev.oam.model.llama.engine.NativeSettings;
import dev.oam.model.llama.gguf.GgufException;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.prompt.TurnFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Local GGUF models run in-process by llama.cpp: serves {@code {"type": "llama", "path", …}} and {@code --model
 * PATH.gguf} / {@code OAM_MODEL} system models. Found through
 * {@code META-INF/services/dev.oam.core.model.ModelBackend}.
 *
 * <p>Nothing native happens until a model is created: discovering the backend loads no native code. Each model file is
 * loaded once per process, in the background on a thread {@code oam-llama-load}, and shared by every session naming it;
 * the first use fixes its context size, threads and GPU layers (a later use asking for other values is refused). A file
 * whose load failed stays failed until the process restarts: llama.cpp cannot free a half-loaded model, so loading it
 * again would only leak.
 */
public final class LlamaBackend implements ModelBackend {
    public static final String TYPE = "llama";

    /**
     * One model file: what was read of it, the settings it was loaded with, the engine (loading or loaded) and what
     * sessions on it are warned of (the turn format its prompts are written in when it has no chat template, or why its
     * chat template cannot be used; known once the loading thread has looked).
     */
    private record Loaded(
            GgufFile file,
            EngineSettings settings,
            CompletableFuture<Engine> engine,
            CompletableFuture<List<String>> warnings) {}

    /** Layers of every model to offload to a GPU unless its value names {@code gpuLayers}; -1 for all. */
    public static final String GPU_LAYERS_VARIABLE = LlamaSettings.GPU_LAYERS_VARIABLE;
    /** {@code OAM_MODEL_HOST}: {@code process} runs every llama model of this process in a child process by default. */
    public static final String HOST_VARIABLE = LlamaSettings.HOST_VARIABLE;

    private final LlamaSettings defaults; // the host's, for every model of this backend
    private final List<String> languages;
    private final Object lock = new Object();
    private final Map<Path, Loaded> loaded = new HashMap<>(); // guarded by lock
    private final Map<Path, ModelHost> hosts = new HashMap<>(); // guarded by lock
    private boolean closed; // guarded by lock

    /**
     * The ServiceLoader's entry point: the process's settings ({@link LlamaSettings#read} of
     * {@link Environment#system()}, read here once), languages {@code ["en"]}.
     */
    public LlamaBackend() {
        this(LlamaSettings.read(Environment.system()), List.of("en"));
    }

    /** Models run in a child process ({@link ModelHost}) when {@code settings} say so or their value does. */
    public LlamaBackend(LlamaSettings settings, List<String> languages) {
        this.defaults = settings;
        this.languages = List.copyOf(languages);
    }

    /** Whether this model value runs in a child process: its {@code host} member, else this backend's default. */
    boolean processHost(ObjectNode spec, String path) throws ModelParameterException {
        JsonNode host = spec.get("host");
        if (host == null || host.isNull()) {
            return defaults.processHost();
        }
        if (host.isTextual() && host.textValue().equals("process")) {
            return true;
        }
        if (host.isTextual() && host.textValue().equals("in-process")) {
            return false;
        }
        throw ModelParameterException.invalid(
                path + ".host", "must be \"process\" (a child process runs the model) or" + " \"in-process\".");
    }

    /** The model host of this file, started when first asked for. */
    private ModelHost host(Path key) {
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the llama backend is closed");
            }
            return hosts.computeIfAbsent(key, k -> new ModelHost(k, defaults, languages));
        }
    }

    /** The pid of the child process running this file, or -1 (for tests). */
    public long hostPid(Path file) throws GgufException {
        ModelHost host;
        synchronized (lock) {
            host = hosts.get(canonical(file));
        }
        return host == null ? -1 : host.pid();
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public LanguageModel create(ObjectNode spec, String path) throws ModelParameterException {
        LlamaModelValue settings = LlamaModelValue.parse(spec, path);
        checkBackend(LlamaModelValue.backend(spec, path), defaults.natives().backend(), path);
        if (processHost(spec, path)) {
            ObjectNode inChild = spec.deepCopy();
            inChild.remove("host");
            Path key;
            try {
                key = canonical(settings.path());
                // the Java checks here, so a bad file is -32602 before any process starts
                EngineChoice.checkArchitecture(GgufFile.read(key), EngineChoice.planned(defaults));
            } catch (GgufException e) {
                throw ModelParameterException.invalid(path + ".path", ": " + e.getMessage());
            }
            return host(key).model(inChild, path);
        }
        try {
            return model(settings, null);
        } catch (GgufException e) {
            throw ModelParameterException.invalid(path + ".path", ": " + e.getMessage());
        } catch (SettingsConflict e) {
            throw ModelParameterException.invalid(path + "." + e.member, ": " + e.getMessage());
        }
    }

    /**
     * Refuses a model value's {@code backend} other than {@code auto} and the process's: llama.cpp loads its backends
     * once per process, and one loaded model serves every session naming the file, so a session cannot pick its own.
     */
    static void checkBackend(@Nullable String asked, String process, String path) throws ModelParameterException {
        if (asked == null || asked.equals("auto") || asked.equals(process)) {
            return;
        }
        throw ModelParameterException.invalid(
                path + ".backend",
                ": the llama backend is chosen once per process, not per session (here "
                        + NativeSettings.BACKEND_VARIABLE + "=" + process
                        + (process.equals("auto")
                                ? ": CUDA, then Vulkan, Metal, the CPU, the first that loads and has" + " a device"
                                : "")
                        + "). Start the process with " + NativeSettings.BACKEND_VARIABLE + "=" + asked
                        + " to force " + asked + ", or omit backend"
                        + (asked.equals("cpu") ? " (gpuLayers 0 keeps a model on the CPU)" : "") + ".");
    }

    @Override
    public boolean servesSystemModel(String location) {
        return LlamaModelValue.isGgufLocation(location);
    }

    @Override
    public LanguageModel systemModel(String location, @Nullable String name) throws Exception {
        return systemModel(location, name, defaults.processHost());
    }

    /** The host's {@value #HOST_VARIABLE} (for the C ABI: its settings) decides where the system model runs. */
    @Override
    public LanguageModel systemModel(String location, @Nullable String name, Environment environment) throws Exception {
        return systemModel(
                location, name, LlamaSettings.processHost(environment.variable(HOST_VARIABLE), defaults.processHost()));
    }

    private LanguageModel systemModel(String location, @Nullable String name, boolean inChild) throws Exception {
        Path path = Path.of(location.strip()).toAbsolutePath().normalize();
        if (inChild) {
            Path key = canonical(path);
            GgufFile.read(key);
            return host(key).systemModel(key.toString(), name);
        }
        return model(new LlamaModelValue(path, 0, 0, LlamaModelValue.GPU_UNSET, null), name);
    }

    /** @param name the name to report instead of the file's ({@code --model-name}) */
    private LanguageModel model(LlamaModelValue settings, @Nullable String name)
            throws GgufException, SettingsConflict {
        Path key = canonical(settings.path());
        Loaded entry;
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the llama backend is closed");
            }
            entry = loaded.get(key);
            if (entry == null) {
                GgufFile file = GgufFile.read(key);
                EngineChoice.checkArchitecture(file, EngineChoice.planned(defaults));
                TurnFormat format = file.chatTemplate() == null ? TurnFormat.require(file) : null;
                EngineSettings engineSettings = engineSettings(settings, file);
                CompletableFuture<Engine> engine = new CompletableFuture<>();
                CompletableFuture<List<String>> warnings = new CompletableFuture<>();
                entry = new Loaded(file, engineSettings, engine, warnings);
                loaded.put(key, entry);
                if (format != null) {
                    String warning = format.warning(modelName(file));
                    Log.warning(warning);
                    warnings.complete(List.of(warning));
                }
                // Whether the file's own chat template can render a conversation is asked on the loading thread: it
                // parses the template and reads the vocabulary (most of a second on 2 cores), which the host's start,
                // and with it the first answer of oam stdio, need not wait for. Sessions wait for it in warnings().
                Thread.ofPlatform().daemon().name("oam-llama-load").start(() -> {
                    if (!warnings.isDone()) {
                        warnings.complete(templateWarnings(file));
                    }
                    load(file, engineSettings, defaults, engine);
                });
            } else {
                checkSame(entry, settings);
            }
        }
        return new LlamaLanguageModel(
                name != null ? name : modelName(entry.file()),
                entry.settings().contextSize(),
                entry.engine(),
                settings.seed(),
                languages,
                entry.warnings()::join);
    }

    /**
     * The warning (logged too) for a file whose own chat template cannot render a plain conversation; none when it can,
     * or when the file cannot be read again (loading it then fails with the reason).
     */
    private static List<String> templateWarnings(GgufFile file) {
        try {
            String problem = ModelFile.of(file).chatRenderer().problem();
            if (problem == null) {
                return List.of();
            }
            String warning = "The chat template of '" + modelName(file) + "' cannot be used (" + problem
                    + "); prompts are written in ChatML, which the model may not follow.";
            Log.warning(warning);
            return List.of(warning);
        } catch (Exception e) {
            return List.of();
        }
    }

    private EngineSettings engineSettings(LlamaModelValue settings, GgufFile file) throws SettingsConflict {
        int trained = file.contextLength();
        int context = settings.contextSize() > 0
                ? settings.contextSize()
                : defaults.contextSize() > 0
                        ? Math.min(defaults.contextSize(), trained)
                        : Math.min(LanguageModel.DEFAULT_CONTEXT_SIZE, trained);
        if (context > trained) {
            throw new SettingsConflict(
                    "contextSize", "must not exceed the context the model was trained for (" + trained + " tokens).");
        }
        int cores = Runtime.getRuntime().availableProcessors();
        int threads = settings.threads() > 0
                ? settings.threads()
                : defaults.threads() > 0 ? defaults.threads() : Math.max(1, cores - 1);
        int threadsBatch = defaults.threadsBatch() > 0 ? defaults.threadsBatch() : Math.max(threads, cores);
        int gpuLayers = settings.gpuLayers() != LlamaModelValue.GPU_UNSET ? settings.gpuLayers() : defaults.gpuLayers();
        return new EngineSettings(context, defaults.slots(), threads, threadsBatch, gpuLayers);
    }

    private static void checkSame(Loaded entry, LlamaModelValue settings) throws SettingsConflict {
        EngineSettings have = entry.settings();
        if (settings.contextSize() > 0 && settings.contextSize() != have.contextSize()) {
            throw new SettingsConflict(
                    "contextSize",
                    "this file is already loaded with contextSize " + have.contextSize()
                            + "; one loaded model serves every session naming the file, so omit contextSize or give "
                            + have.contextSize() + ".");
        }
        if (settings.threads() > 0 && settings.threads() != have.threads()) {
            throw new SettingsConflict(
                    "threads",
                    "this file is already loaded with " + have.threads() + " threads; omit threads or give "
                            + have.threads() + ".");
        }
        if (settings.gpuLayers() != LlamaModelValue.GPU_UNSET && settings.gpuLayers() != have.gpuLayers()) {
            throw new SettingsConflict(
                    "gpuLayers",
                    "this file is already loaded with gpuLayers " + have.gpuLayers() + "; omit gpuLayers or give "
                            + have.gpuLayers() + ".");
        }
    }

    private static void load(
            GgufFile file, EngineSettings settings, LlamaSettings host, CompletableFuture<Engine> engine) {
        long start = System.nanoTime();
        try {
            Engine loadedEngine = EngineChoice.open(file, settings, host);
            Log.info("loaded " + file.path() + " in " + (System.nanoTime() - start) / 1_000_000 + " ms");
            engine.complete(loadedEngine);
        } catch (Throwable e) { // an UnsatisfiedLinkError must reach the sessions too
            Log.warning("cannot load " + file.path() + ": " + e.getMessage());
            engine.completeExceptionally(e);
        }
    }

    static String modelName(GgufFile file) {
        String name = file.name();
        if (name != null && !name.isBlank()) {
            return name.strip();
        }
        String fileName = file.path().getFileName().toString();
        return fileName.regionMatches(true, fileName.length() - 5, ".gguf", 0, 5)
                ? fileName.substring(0, fileName.length() - 5)
                : fileName;
    }

    private static Path canonical(Path path) throws GgufException {
        try {
            return path.toRealPath();
        } catch (IOException e) {
            if (!Files.exists(path)) {
                throw new GgufException("the model file " + path + " does not exist.");
            }
            throw new GgufException("cannot open the model file " + path + ": " + e.getMessage());
        }
    }

    /** Cancels running generations and refuses new models; loaded weights stay mapped until the process exits. */
    @Override
    public void close() {
        List<CompletableFuture<Engine>> engines = new ArrayList<>();
        List<ModelHost> children;
        synchronized (lock) {
            closed = true;
            loaded.values().forEach(entry -> engines.add(entry.engine()));
            children = List.copyOf(hosts.values());
        }
        children.forEach(ModelHost::close);
        for (CompletableFuture<Engine> engine : engines) {
            Engine ready = engine.getNow(null);
            if (ready instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    Log.warning("closing a llama engine: " + e);
                }
            }
        }
    }

    /** A model value asks for settings other than those its file was loaded with. */
    private static final class SettingsConflict extends Exception {
        final String member;

        SettingsConflict(String member, String message) {
            super(message);
            this.member = member;
        }
    }
}
