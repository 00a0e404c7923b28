package dev.oam.core.model;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Environment;
import dev.oam.core.json.Json;
import dev.oam.core.model.pull.ModelCache;
import dev.oam.core.model.pull.PullException;
import java.math.BigDecimal;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A model as a host configures it ({@code BridgeConfiguration.Builder.systemModel(ModelSpec)}): the typed form of the
 * wire's {@code {"type": "llama", …}} and {@code {"type": "openai", …}} values, or a {@link Location} as {@code oam
 * stdio --model}, {@code OAM_MODEL} and the C ABI's settings give it. Every form is resolved by
 * {@link ModelBackends#systemModel}, through the backend that serves its type or location, with the same checks and
 * messages as the wire.
 */
public sealed interface ModelSpec {
    /**
     * The variable that names the system model: a {@code .gguf} file, a model name in the model cache
     * ({@code hf:OWNER/REPO/FILE.gguf}, {@code OWNER/REPO:QUANT}, {@code pypi:PROJECT}) or an {@code http(s)://…/v1}
     * URL.
     */
    String MODEL_VARIABLE = "OAM_MODEL";
    /** The variable with the model's name on an OpenAI-compatible server. */
    String NAME_VARIABLE = "OAM_MODEL_NAME";
    /** The variable with the API key of an OpenAI-compatible server (unless a value names another variable). */
    String API_KEY_VARIABLE = "OAM_API_KEY";

    /** The value of {@value #MODEL_VARIABLE} that asks for no system model, not even the default one. */
    String NONE = "none";

    /**
     * The system model the variables name ({@code OAM_MODEL}, {@code OAM_MODEL_NAME}; the backend reads others, such as
     * {@code OAM_API_KEY}, through the same lookup). With {@code OAM_MODEL} unset or blank it is the default model
     * ({@link ModelCache#DEFAULT_MODEL}, SmolLM2-135M-Instruct) when the model cache the variables name holds it (it is
     * never downloaded for this); {@code null} when it does not, or when {@code OAM_MODEL} is {@value #NONE}.
     */
    static @Nullable Location fromEnvironment(Environment environment) {
        String location = environment.variable(MODEL_VARIABLE);
        if (location != null && location.strip().equalsIgnoreCase(NONE)) {
            return null;
        }
        if (location == null || location.isBlank()) {
            ModelCache cache = ModelCache.fromEnvironment(environment);
            try {
                if (cache.find(cache.parse(ModelCache.DEFAULT_MODEL)) != null) {
                    return new Location(ModelCache.DEFAULT_MODEL, ModelCache.DEFAULT_MODEL, environment);
                }
            } catch (PullException e) {
                throw new IllegalStateException("the default model's name is well-formed", e);
            }
            return null;
        }
        String name = environment.variable(NAME_VARIABLE);
        return new Location(location.strip(), name == null || name.isBlank() ? null : name.strip(), environment);
    }

    /**
     * A local GGUF file run in-process by llama.cpp: {@code {"type": "llama", "path", "contextSize"?, "threads"?,
     * "gpuLayers"?, "seed"?}}. Zero means the host's default (see docs/MODELS.md); {@code gpuLayers} -1 offloads every
     * layer.
     */
    record Llama(
            Path path,
            int contextSize,
            int threads,
            int gpuLayers,
            @Nullable Long seed) implements ModelSpec {
        /**
         * The fewest tokens per session a model value may name ({@code contextSize}; 0 is the host's default). The one
         * set of bounds of a llama model value: the llama backend's parser, the host's settings and the supervised
         * llama-server's value check against these.
         */
        public static final int MIN_CONTEXT = 256;
        /** The most tokens per session a model value may name. */
        public static final int MAX_CONTEXT = 1 << 20;
        /** The most generation threads a model value may name ({@code threads}; 0 is the host's default). */
        public static final int MAX_THREADS = 256;
        /** The most layers a model value may offload to a GPU ({@code gpuLayers}; -1 is every layer). */
        public static final int MAX_GPU_LAYERS = 4096;
        /**
         * The host's count of layers to offload to a GPU for every llama model whose value names none, on both the
         * in-process backend and the supervised llama-server ({@link #hostGpuLayers}).
         */
        public static final String GPU_LAYERS_VARIABLE = "OAM_LLAMA_GPU_LAYERS";

        public Llama {
            Objects.requireNonNull(path, "path");
            if (contextSize != 0 && (contextSize < MIN_CONTEXT || contextSize > MAX_CONTEXT)) {
                throw new IllegalArgumentException(
                        "contextSize must be 0 (the host's default) or from " + MIN_CONTEXT + " to " + MAX_CONTEXT);
            }
            if (threads < 0 || threads > MAX_THREADS || seed != null && seed < 0) {
                throw new IllegalArgumentException(
                        "threads must be from 0 to " + MAX_THREADS + " and seed must not be negative");
            }
            if (gpuLayers < -1 || gpuLayers > MAX_GPU_LAYERS) {
                throw new IllegalArgumentException("gpuLayers must be from -1 (all) to " + MAX_GPU_LAYERS);
            }
        }

        /**
         * {@value #GPU_LAYERS_VARIABLE} of {@code environment}, the one parser of it: null when unset, and when it is
         * not an integer from -1 to {@value #MAX_GPU_LAYERS} (then a warning names it and the backend's default
         * applies).
         */
        public static @Nullable Integer hostGpuLayers(Environment environment) {
            return environment.integer(GPU_LAYERS_VARIABLE, -1, MAX_GPU_LAYERS);
        }

        public Llama(Path path) {
            this(path, 0, 0, 0, null);
        }

        /**
         * A model of the model cache by name ({@code hf:OWNER/REPO/FILE.gguf}, {@code OWNER/REPO:QUANT},
         * {@code pypi:PROJECT}; see {@link dev.oam.core.model.pull.ModelName}), read from the cache when the model is
         * made.
         *
         * @throws IllegalArgumentException when {@code name} is not a well-formed model name
         */
        public static Llama named(String name) {
            dev.oam.core.model.pull.ModelName.parse(name);
            if (!dev.oam.core.model.pull.ModelName.isName(name)) {
                throw new IllegalArgumentException("'" + name + "' is not a model name");
            }
            return new Llama(Path.of(name.strip()));
        }

        public Llama withContextSize(int tokens) {
            return new Llama(path, tokens, threads, gpuLayers, seed);
        }

        public Llama withThreads(int count) {
            return new Llama(path, contextSize, count, gpuLayers, seed);
        }

        public Llama withGpuLayers(int layers) {
            return new Llama(path, contextSize, threads, layers, seed);
        }

        public Llama withSeed(long value) {
            return new Llama(path, contextSize, threads, gpuLayers, value);
        }

        /** The wire's model object for this file. */
        public ObjectNode toJson() {
            ObjectNode json = Json.object();
            json.put("type", "llama");
            json.put("path", path.toString());
            if (contextSize > 0) {
                json.put("contextSize", contextSize);
            }
            if (threads > 0) {
                json.put("threads", threads);
            }
            if (gpuLayers != 0) {
                json.put("gpuLayers", gpuLayers);
            }
            if (seed != null) {
                json.put("seed", seed);
            }
            return json;
        }
    }

    /**
     * An OpenAI-compatible Chat Completions server: {@code {"type": "openai", "baseUrl", "model", "apiKeyEnv"?,
     * "headers"?, "toolCallMode"?, "contextSize"?, "timeoutSeconds"?}}.
     *
     * @param apiKeyEnv the variable holding the API key; {@code null} for {@code OAM_API_KEY}
     * @param contextSize 0 for the default (8192)
     * @param timeout the longest one request may take; {@code null} for the default, {@link Duration#ZERO} for none
     */
    record OpenAI(
            URI baseUrl,
            String model,
            @Nullable String apiKeyEnv,
            Map<String, String> headers,
            ToolCallMode toolCallMode,
            int contextSize,
            @Nullable Duration timeout)
            implements ModelSpec {
        /** How tool calls reach the server: its own {@code tools}, JSON emulation, or native with a fallback. */
        public enum ToolCallMode {
            NATIVE,
            EMULATED,
            AUTO;

            String wireName() {
                return name().toLowerCase(Locale.ROOT);
            }
        }

        public OpenAI {
            Objects.requireNonNull(baseUrl, "baseUrl");
            Objects.requireNonNull(model, "model");
            Objects.requireNonNull(toolCallMode, "toolCallMode");
            headers = Map.copyOf(headers);
            if (contextSize < 0) {
                throw new IllegalArgumentException("contextSize must not be negative");
            }
            if (timeout != null && timeout.isNegative()) {
                throw new IllegalArgumentException("timeout must not be negative");
            }
        }

        public OpenAI(URI baseUrl, String model) {
            this(baseUrl, model, null, Map.of(), ToolCallMode.AUTO, 0, null);
        }

        public OpenAI withApiKeyEnv(String variable) {
            return new OpenAI(baseUrl, model, variable, headers, toolCallMode, contextSize, timeout);
        }

        public OpenAI withHeaders(Map<String, String> values) {
            return new OpenAI(baseUrl, model, apiKeyEnv, values, toolCallMode, contextSize, timeout);
        }

        public OpenAI withToolCallMode(ToolCallMode mode) {
            return new OpenAI(baseUrl, model, apiKeyEnv, headers, mode, contextSize, timeout);
        }

        public OpenAI withContextSize(int tokens) {
            return new OpenAI(baseUrl, model, apiKeyEnv, headers, toolCallMode, tokens, timeout);
        }

        public OpenAI withTimeout(Duration value) {
            return new OpenAI(baseUrl, model, apiKeyEnv, headers, toolCallMode, contextSize, value);
        }

        /** The wire's model object for this server. */
        public ObjectNode toJson() {
            ObjectNode json = Json.object();
            json.put("type", "openai");
            json.put("baseUrl", baseUrl.toString());
            json.put("model", model);
            if (apiKeyEnv != null) {
                json.put("apiKeyEnv", apiKeyEnv);
            }
            if (!headers.isEmpty()) {
                ObjectNode values = json.putObject("headers");
                headers.forEach(values::put);
            }
            if (toolCallMode != ToolCallMode.AUTO) {
                json.put("toolCallMode", toolCallMode.wireName());
            }
            if (contextSize > 0) {
                json.put("contextSize", contextSize);
            }
            if (timeout != null) {
                json.put(
                        "timeoutSeconds",
                        BigDecimal.valueOf(timeout.toNanos()).movePointLeft(9).stripTrailingZeros());
            }
            return json;
        }
    }

    /**
     * A model named by a location, as {@code --model}/{@code OAM_MODEL} give it: the first backend that serves the
     * location ({@link ModelBackend#servesSystemModel}) makes the model.
     *
     * @param location a {@code .gguf} path or an {@code http(s)://…/v1} URL
     * @param name the model's name ({@code --model-name}, {@code OAM_MODEL_NAME}), when given
     * @param environment where the backend reads the host's other variables ({@code OAM_API_KEY})
     */
    record Location(String location, @Nullable String name, Environment environment) implements ModelSpec {
        public Location {
            Objects.requireNonNull(location, "location");
            Objects.requireNonNull(environment, "environment");
            if (location.isBlank()) {
                throw new IllegalArgumentException("location must not be blank");
            }
        }

        @Override
        public String toString() {
            return "Location[" + location + (name == null ? "" : ", name=" + name) + "]";
        }
    }
}
