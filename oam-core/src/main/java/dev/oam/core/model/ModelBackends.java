package dev.oam.core.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Environment;
import dev.oam.core.model.pull.ModelCache;
import dev.oam.core.model.pull.ModelName;
import dev.oam.core.model.pull.PullException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The model backends of this process and the one way every host turns its configuration into a system model: {@code oam
 * stdio} (flags and environment), the C ABI (its settings) and in-process Java
 * ({@code BridgeConfiguration.Builder.systemModel(ModelSpec)}) all end in {@link #systemModel}.
 */
public final class ModelBackends {
    private static final Object LOCK = new Object();
    private static @Nullable List<ModelBackend> discovered; // guarded by LOCK

    private ModelBackends() {}

    /**
     * The backends on the class path ({@link ModelBackend#discover()}), found once and shared by every engine of this
     * process that does not bring its own: one loaded GGUF file serves every bridge naming it. Discovery creates the
     * backends only; nothing native is loaded until a model is created. They are never closed (a loaded llama.cpp model
     * cannot be freed anyway); hosts that need to close them pass their own to
     * {@code BridgeConfiguration.Builder.backends}.
     */
    public static List<ModelBackend> discovered() {
        synchronized (LOCK) {
            if (discovered == null) {
                discovered = List.copyOf(ModelBackend.discover());
            }
            return discovered;
        }
    }

    /**
     * The model {@code spec} describes, made by the backend that serves it. A model name ({@code hf:…},
     * {@code OWNER/REPO:QUANT}, {@code pypi:…}) in a location or a llama path is read from the model cache its
     * environment names ({@link ModelCache#fromEnvironment}: a {@link ModelSpec.Location}'s own lookup, else
     * {@code host}, the environment the host's entry point read).
     *
     * @throws ModelSetupException with a message for the person who configured the host, naming the cause
     */
    public static LanguageModel systemModel(List<ModelBackend> backends, ModelSpec spec, Environment host) {
        Environment environment = spec instanceof ModelSpec.Location location ? location.environment() : host;
        return systemModel(backends, spec, () -> ModelCache.fromEnvironment(environment));
    }

    /** {@link #systemModel(List, ModelSpec)} with names read from {@code cache}. */
    public static LanguageModel systemModel(List<ModelBackend> backends, ModelSpec spec, ModelCache cache) {
        return systemModel(backends, spec, () -> cache);
    }

    private static LanguageModel systemModel(List<ModelBackend> backends, ModelSpec spec, Supplier<ModelCache> cache) {
        return switch (spec) {
            case ModelSpec.Location location ->
                located(
                        backends,
                        ModelName.isName(location.location())
                                ? new ModelSpec.Location(
                                        cached(cache, location.location()).toString(),
                                        location.name(),
                                        location.environment())
                                : location);
            case ModelSpec.Llama llama -> {
                ModelSpec.Llama file = ModelName.isName(llama.path().toString())
                        ? new ModelSpec.Llama(
                                cached(cache, llama.path().toString()),
                                llama.contextSize(),
                                llama.threads(),
                                llama.gpuLayers(),
                                llama.seed())
                        : llama;
                yield typed(backends, "llama", llama.path().toString(), file.toJson());
            }
            case ModelSpec.OpenAI openai ->
                typed(backends, "openai", openai.baseUrl().toString(), openai.toJson());
        };
    }

    private static Path cached(Supplier<ModelCache> cache, String name) {
        try {
            return cache.get().require(name);
        } catch (PullException e) {
            throw new ModelSetupException("cannot use the model '" + name.strip() + "': " + e.getMessage(), e);
        } catch (IllegalArgumentException e) { // a malformed HF_ENDPOINT or OAM_PYPI_ENDPOINT
            throw new ModelSetupException("cannot use the model '" + name.strip() + "': " + e.getMessage(), e);
        }
    }

    /**
     * {@code backend} as a provider of {@code "model"} values whose {@code path} may be a model name, read from
     * {@code cache}: a name that is not cached is {@code -32602} naming {@code model/pull} (a download never starts
     * inside a request for a session).
     */
    public static ModelProvider provider(ModelBackend backend, ModelCache cache) {
        return (spec, path) -> {
            JsonNode file = spec.get("path");
            if (file == null || !file.isTextual() || !ModelName.isName(file.textValue())) {
                return backend.create(spec, path);
            }
            Path resolved;
            try {
                resolved = cache.require(file.textValue());
            } catch (PullException e) {
                throw ModelParameterException.invalid(path + ".path", ": " + e.getMessage() + ".");
            }
            ObjectNode copy = spec.deepCopy();
            copy.put("path", resolved.toString());
            return backend.create(copy, path);
        };
    }

    private static LanguageModel located(List<ModelBackend> backends, ModelSpec.Location spec) {
        for (ModelBackend backend : backends) {
            if (backend.servesSystemModel(spec.location())) {
                try {
                    return backend.systemModel(spec.location(), spec.name(), spec.environment());
                } catch (Exception e) {
                    throw new ModelSetupException(
                            "cannot use the model '" + spec.location() + "': " + e.getMessage(), e);
                }
            }
        }
        throw new ModelSetupException(
                "no model backend in this build serves '" + spec.location() + "' (backends: " + names(backends)
                        + "). Give a .gguf file for llama.cpp or an http(s)://…/v1 URL for an "
                        + "OpenAI-compatible server.",
                null);
    }

    private static LanguageModel typed(List<ModelBackend> backends, String type, String where, ObjectNode json) {
        for (ModelBackend backend : backends) {
            if (backend.type().equals(type)) {
                try {
                    return backend.create(json, "systemModel");
                } catch (ModelParameterException e) {
                    throw new ModelSetupException(
                            "cannot use the " + type + " model '" + where + "': " + e.shortMessage(), e);
                } catch (RuntimeException e) {
                    throw new ModelSetupException(
                            "cannot use the " + type + " model '" + where + "': " + e.getMessage(), e);
                }
            }
        }
        throw new ModelSetupException(
                "no model backend of type '" + type + "' in this build (backends: " + names(backends)
                        + "); put oam-model-" + type + " on the class path.",
                null);
    }

    private static String names(List<ModelBackend> backends) {
        return backends.isEmpty()
                ? "none"
                : String.join(", ", backends.stream().map(ModelBackend::type).toList());
    }

    /** The host's model configuration cannot be served; the message names the cause. */
    public static final class ModelSetupException extends IllegalArgumentException {
        ModelSetupException(String message, @Nullable Throwable cause) {
            super(message, cause);
        }
    }
}
