package dev.oam.model.llama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.model.ModelParameterException;
import dev.oam.core.model.ModelSpec;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A client's model value, {@code {"type": "llama", "path", "contextSize"?, "threads"?, "gpuLayers"?, "seed"?, "host"?,
 * "backend"?}}, or the host's system model ({@code host} is read by {@link LlamaBackend#processHost}, {@code backend}
 * by {@link #backend}). {@code 0} means "the host's default" for the sizes; the host's defaults are
 * {@link LlamaSettings}.
 *
 * @param contextSize tokens one session may hold (prompt and answer together), 0 for the default
 * @param threads generation threads, 0 for the default
 * @param seed the sampling seed of steps that do not name one
 */
record LlamaModelValue(
        Path path,
        int contextSize,
        int threads,
        int gpuLayers,
        @Nullable Long seed) {
    static final int MIN_CONTEXT = ModelSpec.Llama.MIN_CONTEXT;
    static final int MAX_CONTEXT = ModelSpec.Llama.MAX_CONTEXT;
    static final int MAX_THREADS = ModelSpec.Llama.MAX_THREADS;
    static final int MAX_GPU_LAYERS = ModelSpec.Llama.MAX_GPU_LAYERS;
    /** {@code gpuLayers} not given: the host's default ({@code OAM_LLAMA_GPU_LAYERS}, else 0) applies. */
    static final int GPU_UNSET = Integer.MIN_VALUE;

    private static final List<String> MEMBERS =
            List.of("type", "path", "contextSize", "threads", "gpuLayers", "seed", "host", "backend");

    /** The client's model object; every error is {@code -32602} naming the member. */
    static LlamaModelValue parse(ObjectNode spec, String where) throws ModelParameterException {
        for (Iterator<String> it = spec.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!MEMBERS.contains(key)) {
                throw ModelParameterException.invalid(
                        where + "." + key,
                        "is not a member of a llama model (" + String.join(", ", MEMBERS.subList(1, MEMBERS.size()))
                                + ").");
            }
        }
        JsonNode pathNode = present(spec, "path");
        if (pathNode == null) {
            throw ModelParameterException.missing(where + ".path", "the .gguf file to load");
        }
        if (!pathNode.isTextual()
                || pathNode.textValue().isBlank()
                || pathNode.textValue().indexOf('\0') >= 0) {
            throw mistyped(where, "path", "the path of a .gguf file");
        }
        Path path;
        try {
            path = Path.of(pathNode.textValue()).toAbsolutePath().normalize();
        } catch (InvalidPathException e) {
            throw mistyped(where, "path", "the path of a .gguf file");
        }
        int contextSize = integer(spec, where, "contextSize", MIN_CONTEXT, MAX_CONTEXT, "tokens");
        int threads = integer(spec, where, "threads", 1, MAX_THREADS, "threads");
        int gpuLayers = present(spec, "gpuLayers") == null
                ? GPU_UNSET
                : integer(spec, where, "gpuLayers", -1, MAX_GPU_LAYERS, "layers to offload to a GPU; -1 for all");
        Long seed = null;
        JsonNode seedNode = present(spec, "seed");
        if (seedNode != null) {
            if (!seedNode.isIntegralNumber() || !seedNode.canConvertToLong() || seedNode.longValue() < 0) {
                throw mistyped(where, "seed", "a non-negative integer");
            }
            seed = seedNode.longValue();
        }
        return new LlamaModelValue(path, contextSize, threads, gpuLayers, seed);
    }

    /** The backends a model value may name: the values of {@code OAM_LLAMA_BACKEND}. */
    static final List<String> BACKENDS = List.of("auto", "cpu", "vulkan", "cuda", "metal");

    /**
     * The {@code backend} member ({@code auto}, {@code cpu}, {@code vulkan}, {@code cuda}, {@code metal}), lower-cased,
     * or null when absent. The backend is process-wide; {@link LlamaBackend} refuses one other than the process's.
     */
    static @Nullable String backend(ObjectNode spec, String where) throws ModelParameterException {
        JsonNode node = present(spec, "backend");
        if (node == null) {
            return null;
        }
        String value = node.isTextual() ? node.textValue().strip().toLowerCase(java.util.Locale.ROOT) : "";
        if (!BACKENDS.contains(value)) {
            throw mistyped(where, "backend", "one of " + String.join(", ", BACKENDS));
        }
        return value;
    }

    /** Whether {@code location} names a GGUF file ({@code --model PATH.gguf}, {@code OAM_MODEL}). */
    static boolean isGgufLocation(String location) {
        String text = location.strip();
        // llama-server:PATH.gguf is the supervised llama-server's (oam-model-openai), not an in-process model
        return text.regionMatches(true, text.length() - 5, ".gguf", 0, 5)
                && text.length() > 5
                && !text.regionMatches(true, 0, "llama-server:", 0, "llama-server:".length());
    }

    private static int integer(ObjectNode spec, String where, String name, int min, int max, String unit)
            throws ModelParameterException {
        JsonNode node = present(spec, name);
        if (node == null) {
            return 0;
        }
        if (!node.isIntegralNumber() || !node.canConvertToInt() || node.intValue() < min || node.intValue() > max) {
            throw mistyped(where, name, "an integer from " + min + " to " + max + " (" + unit + ")");
        }
        return node.intValue();
    }

    private static @Nullable JsonNode present(ObjectNode spec, String name) {
        JsonNode value = spec.get(name);
        return value == null || value.isNull() ? null : value;
    }

    private static ModelParameterException mistyped(String where, String name, String expected) {
        return ModelParameterException.invalid(where + "." + name, "must be " + expected + ".");
    }
}
