package dev.oam.model.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Environment;
import dev.oam.core.model.ModelParameterException;
import dev.oam.core.model.ModelSpec;
import java.io.File;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * A supervised llama-server: {@code {"type": "llama-server", "path": "model.gguf", "binary"?, "contextSize"?, "slots"?,
 * "gpuLayers"?, "threads"?, "toolCallMode"?, "timeoutSeconds"?, "startTimeoutSeconds"?}}.
 *
 * @param binary the {@code llama-server} executable: {@code binary}, else {@code OAM_LLAMA_SERVER}, else the first
 *     {@code llama-server} on {@code PATH}
 * @param contextSize tokens per slot (each session's window); the server gets {@code contextSize × slots}
 * @param gpuLayers layers to offload ({@code -ngl}); -1 for all; null leaves the server's default
 * @param threads generation threads ({@code -t}); 0 leaves the server's default
 */
record ServerSettings(
        Path binary,
        Path model,
        GgufHeader header,
        int contextSize,
        int slots,
        @Nullable Integer gpuLayers,
        int threads,
        ToolCallMode toolCallMode,
        Duration timeout,
        Duration startTimeout) {
    static final String BINARY_VARIABLE = "OAM_LLAMA_SERVER";
    static final int DEFAULT_CONTEXT = 4096;
    static final Duration DEFAULT_START = Duration.ofMinutes(5);
    private static final List<String> MEMBERS = List.of(
            "type",
            "path",
            "binary",
            "contextSize",
            "slots",
            "gpuLayers",
            "threads",
            "toolCallMode",
            "timeoutSeconds",
            "startTimeoutSeconds");

    /** What makes two sessions share one server process. */
    String key() {
        return binary + "\u0000" + model + "\u0000" + contextSize + "\u0000" + slots + "\u0000" + gpuLayers + "\u0000"
                + threads;
    }

    static ServerSettings parse(ObjectNode spec, String path, Environment environment) throws ModelParameterException {
        for (Iterator<String> it = spec.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!MEMBERS.contains(key)) {
                throw ModelParameterException.invalid(
                        path + "." + key,
                        "is not a member of a llama-server model ("
                                + String.join(", ", MEMBERS.subList(1, MEMBERS.size())) + ").");
            }
        }
        JsonNode pathNode = present(spec, "path");
        if (pathNode == null) {
            throw ModelParameterException.missing(path + ".path", "");
        }
        Path model = file(pathNode, path + ".path", "the path of a GGUF model file");
        GgufHeader header;
        try {
            header = GgufHeader.read(model);
        } catch (java.io.IOException e) {
            throw ModelParameterException.invalid(path + ".path", "names " + model + ", which " + e.getMessage() + ".");
        }
        Path binary = binary(spec, path, environment);
        int trained = header.contextLength() > 0 ? header.contextLength() : Integer.MAX_VALUE;
        int contextSize = integer(
                spec,
                path,
                "contextSize",
                ModelSpec.Llama.MIN_CONTEXT,
                ModelSpec.Llama.MAX_CONTEXT,
                Math.min(DEFAULT_CONTEXT, trained),
                "tokens per session");
        if (contextSize > trained) {
            throw ModelParameterException.invalid(
                    path + ".contextSize",
                    "must not exceed the context the model was trained for (" + trained + " tokens).");
        }
        int slots = integer(spec, path, "slots", 1, 64, 1, "sessions the server answers at once");
        JsonNode gpuNode = present(spec, "gpuLayers");
        Integer gpuLayers = gpuNode == null
                ? null
                : integer(spec, path, "gpuLayers", -1, ModelSpec.Llama.MAX_GPU_LAYERS, -1, "layers (-1 for all)");
        int threads = integer(spec, path, "threads", 0, 1024, 0, "threads (0 for the server's default)");
        ToolCallMode mode = ToolCallMode.AUTO;
        JsonNode modeNode = present(spec, "toolCallMode");
        if (modeNode != null) {
            mode = modeNode.isTextual()
                    ? ToolCallMode.parse(modeNode.textValue()).orElse(null)
                    : null;
            if (mode == null) {
                throw ModelParameterException.invalid(
                        path + ".toolCallMode", "must be \"native\", \"emulated\" or \"auto\".");
            }
        }
        Duration timeout = seconds(spec, path, "timeoutSeconds", Settings.DEFAULT_TIMEOUT, true);
        Duration start = seconds(spec, path, "startTimeoutSeconds", DEFAULT_START, false);
        return new ServerSettings(binary, model, header, contextSize, slots, gpuLayers, threads, mode, timeout, start);
    }

    private static Path binary(ObjectNode spec, String path, Environment environment) throws ModelParameterException {
        JsonNode node = present(spec, "binary");
        if (node != null) {
            return executable(file(node, path + ".binary", "the path of a llama-server executable"), path + ".binary");
        }
        String variable = environment.variable(BINARY_VARIABLE);
        if (variable != null && !variable.isBlank()) {
            Path given;
            try {
                given = Path.of(variable.strip()).toAbsolutePath();
            } catch (InvalidPathException e) {
                throw ModelParameterException.invalid(path + ".binary", BINARY_VARIABLE + " is not a valid path.");
            }
            if (!Files.isRegularFile(given)) {
                throw ModelParameterException.invalid(
                        path + ".binary", BINARY_VARIABLE + "=" + given + " is not a file.");
            }
            return executable(given, path + ".binary (" + BINARY_VARIABLE + ")");
        }
        String search = environment.variable("PATH");
        if (search != null) {
            for (String dir : search.split(File.pathSeparator)) {
                for (String name : List.of("llama-server", "llama-server.exe")) {
                    try {
                        Path candidate = Path.of(dir.isEmpty() ? "." : dir, name);
                        if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                            return candidate.toAbsolutePath();
                        }
                    } catch (InvalidPathException e) {
                        // an odd PATH entry: the next one
                    }
                }
            }
        }
        throw ModelParameterException.invalid(
                path + ".binary",
                "is needed: no llama-server was found (give 'binary', set " + BINARY_VARIABLE
                        + ", or put llama.cpp's llama-server on PATH; package managers ship GPU builds of it).");
    }

    /** Only a file called llama-server is started: a client cannot make the bridge run any other program. */
    private static Path executable(Path file, String member) throws ModelParameterException {
        String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        if (!name.equals("llama-server") && !name.equals("llama-server.exe")) {
            throw ModelParameterException.invalid(
                    member,
                    "must name llama.cpp's llama-server executable (a file called " + "llama-server), not "
                            + file.getFileName() + ".");
        }
        if (!Files.isExecutable(file)) {
            throw ModelParameterException.invalid(member, "names " + file + ", which is not executable.");
        }
        return file;
    }

    private static Path file(JsonNode node, String member, String what) throws ModelParameterException {
        if (!node.isTextual() || node.textValue().isBlank() || node.textValue().indexOf('\0') >= 0) {
            throw ModelParameterException.invalid(member, "must be " + what + ".");
        }
        Path file;
        try {
            file = Path.of(node.textValue().strip()).toAbsolutePath().normalize();
        } catch (InvalidPathException e) {
            throw ModelParameterException.invalid(member, "must be " + what + ".");
        }
        if (!Files.isRegularFile(file)) {
            throw ModelParameterException.invalid(member, "names " + file + ", which is not a file.");
        }
        return file;
    }

    private static int integer(ObjectNode spec, String path, String name, int min, int max, int fallback, String what)
            throws ModelParameterException {
        JsonNode node = present(spec, name);
        if (node == null) {
            return fallback;
        }
        if (!node.isIntegralNumber() || !node.canConvertToInt() || node.intValue() < min || node.intValue() > max) {
            throw ModelParameterException.invalid(
                    path + "." + name, "must be an integer from " + min + " to " + max + " (" + what + ").");
        }
        return node.intValue();
    }

    private static Duration seconds(ObjectNode spec, String path, String name, Duration fallback, boolean zeroAllowed)
            throws ModelParameterException {
        JsonNode node = present(spec, name);
        if (node == null) {
            return fallback;
        }
        BigDecimal seconds = node.isNumber() ? node.decimalValue() : null;
        if (seconds == null
                || seconds.signum() < 0
                || (!zeroAllowed && seconds.signum() == 0)
                || seconds.compareTo(BigDecimal.valueOf(86_400)) > 0) {
            throw ModelParameterException.invalid(
                    path + "." + name,
                    "must be a number of seconds from " + (zeroAllowed ? "0" : "above 0") + " to 86400"
                            + (zeroAllowed ? " (0 means no limit)." : "."));
        }
        return Duration.ofNanos(seconds.movePointRight(9).longValue());
    }

    private static @Nullable JsonNode present(ObjectNode spec, String name) {
        JsonNode value = spec.get(name);
        return value == null || value.isNull() ? null : value;
    }
}
