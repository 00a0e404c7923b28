package dev.oam.model.llama.gguf;

import dev.oam.model.llama.gguf.GgufFile.Tensor;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Parses one GGUF header: the magic and version, the metadata, the tensor infos (checked against the ggml types and the
 * file's size) and the keys a model needs. Every failure names the file.
 */
final class GgufParser {
    private static final int MAX_DIMS = 4;
    private static final Pattern BYTE_TOKEN = Pattern.compile("<0x[0-9A-Fa-f]{2}>");
    private static final int MAX_TENSOR_NAME = 63;
    private static final int TOKEN_TYPE_CONTROL = 3;
    private static final int TOKEN_TYPE_USER_DEFINED = 4;

    /** Block size and bytes per block of the ggml types llama.cpp b4916 knows; {@code null} for removed ids. */
    private static final int[][] GGML_TYPES = {
        {1, 4},
        {1, 2},
        {32, 18},
        {32, 20},
        null,
        null,
        {32, 22},
        {32, 24},
        {32, 34},
        {32, 36}, // F32 … Q8_1
        {256, 84},
        {256, 110},
        {256, 144},
        {256, 176},
        {256, 210},
        {256, 292}, // Q2_K … Q8_K
        {256, 66},
        {256, 74},
        {256, 98},
        {256, 50},
        {32, 18},
        {256, 110},
        {256, 82},
        {256, 136}, // IQ2_XXS … IQ4_XS
        {1, 1},
        {1, 2},
        {1, 4},
        {1, 8},
        {1, 8},
        {256, 56},
        {1, 2}, // I8, I16, I32, I64, F64, IQ1_M, BF16
        null,
        null,
        null,
        {256, 54},
        {256, 66}, // (removed Q4_0_4_x), TQ1_0, TQ2_0
    };

    private final Path path;
    private final long size;
    private final GgufReader in;
    private final GgufValues values;

    GgufParser(Path path, FileChannel channel) throws IOException {
        this.path = path;
        this.in = new GgufReader(path, channel);
        this.size = in.size();
        this.values = new GgufValues(in);
    }

    GgufFile parse() throws IOException, GgufException {
        if (size == 0) {
            throw new GgufException("Model file " + path + " is empty, not a GGUF file");
        }
        byte[] magic = new byte[(int) Math.min(4, size)];
        in.readFirst(magic);
        if (magic.length < 4 || magic[0] != 'G' || magic[1] != 'G' || magic[2] != 'U' || magic[3] != 'F') {
            throw new GgufException("Model file " + path + " is not a GGUF file (it starts with " + describe(magic)
                    + " instead of \"GGUF\"); llama.cpp models are .gguf files");
        }
        int version = (int) in.u32("the version");
        if (version != 2 && version != 3) {
            throw new GgufException("Model file " + path + " uses GGUF version " + Integer.toUnsignedString(version)
                    + ", which is not supported (versions 2 and 3 are); convert it again with a recent llama.cpp");
        }
        long tensorCount = in.count(in.u64("the tensor count"), 8 + 4 + 8 + 4 + 8, "tensors");
        long kvCount = in.count(in.u64("the metadata count"), 8 + 4 + 1, "metadata entries");

        Map<String, Object> metadata = new LinkedHashMap<>();
        for (long i = 0; i < kvCount; i++) {
            long at = in.position();
            String key = in.string("a metadata key");
            int type = (int) in.u32("the type of '" + key + "'");
            Object value = values.value(key, type);
            if (metadata.putIfAbsent(key, value) != null) {
                throw in.corrupt("the key '" + key + "' appears twice (at byte " + at + ")");
            }
        }
        int alignment = 32;
        if (metadata.containsKey("general.alignment")) {
            if (!(metadata.get("general.alignment") instanceof Long a)
                    || a <= 0
                    || a > 1 << 20
                    || Long.bitCount(a) != 1) {
                throw in.corrupt("general.alignment is " + metadata.get("general.alignment") + ", not a power of two");
            }
            alignment = a.intValue();
        }

        List<Tensor> tensors = tensors(tensorCount, alignment);
        long dataOffset = (in.position() + alignment - 1) / alignment * alignment;
        for (Tensor t : tensors) {
            if (t.offset() > size - dataOffset || t.size() > size - dataOffset - t.offset()) {
                throw in.corrupt("tensor '" + t.name() + "' needs bytes " + (dataOffset + t.offset()) + " to "
                        + (dataOffset + t.offset() + t.size()) + " but the file has only " + size
                        + " (truncated download?)");
            }
        }
        return model(metadata, tensors, dataOffset, version);
    }

    /** Reads {@code count} tensor infos, each checked against the ggml types and the alignment. */
    private List<Tensor> tensors(long count, int alignment) throws IOException, GgufException {
        List<Tensor> tensors = new ArrayList<>((int) Math.min(count, 4096));
        List<long[]> shapes = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (long i = 0; i < count; i++) {
            String name = in.string("a tensor name");
            if (name.getBytes(StandardCharsets.UTF_8).length > MAX_TENSOR_NAME) {
                throw in.corrupt("the tensor name '" + clip(name) + "' is longer than " + MAX_TENSOR_NAME + " bytes");
            }
            if (!names.add(name)) {
                throw in.corrupt("the tensor '" + name + "' appears twice");
            }
            long dims = in.u32("the dimensions of tensor '" + name + "'");
            if (dims < 1 || dims > MAX_DIMS) {
                throw in.corrupt("tensor '" + name + "' has " + dims + " dimensions (1 to " + MAX_DIMS + " allowed)");
            }
            long[] shape = new long[(int) dims];
            long elements = 1;
            for (int d = 0; d < dims; d++) {
                shape[d] = in.u64("a dimension of tensor '" + name + "'");
                if (shape[d] <= 0) {
                    throw in.corrupt("tensor '" + name + "' has a dimension of " + Long.toUnsignedString(shape[d]));
                }
                elements = multiply(elements, shape[d], name);
            }
            int type = (int) in.u32("the type of tensor '" + name + "'");
            int[] info = type >= 0 && type < GGML_TYPES.length ? GGML_TYPES[type] : null;
            if (info == null) {
                throw in.corrupt("tensor '" + name + "' has the unknown ggml type " + Integer.toUnsignedString(type)
                        + " (the file may need a newer llama.cpp)");
            }
            if (shape[0] % info[0] != 0) {
                throw in.corrupt("tensor '" + name + "' has a row of " + shape[0]
                        + " values, not a multiple of its type's block of " + info[0]);
            }
            long bytes = multiply(elements / info[0], info[1], name);
            long offset = in.u64("the offset of tensor '" + name + "'");
            if (offset < 0 || offset % alignment != 0) {
                throw in.corrupt("tensor '" + name + "' starts at " + Long.toUnsignedString(offset)
                        + ", not a multiple of the alignment " + alignment);
            }
            tensors.add(new Tensor(name, boxed(shape), type, offset, bytes));
            shapes.add(shape);
        }
        return tensors;
    }

    private GgufFile model(Map<String, Object> metadata, List<Tensor> tensors, long dataOffset, int version)
            throws GgufException {
        if (!(metadata.get("general.architecture") instanceof String architecture)) {
            throw missing("general.architecture", "a string", metadata);
        }
        String contextKey = architecture + ".context_length";
        if (!(metadata.get(contextKey) instanceof Long context)) {
            throw missing(contextKey, "an integer", metadata);
        }
        if (context <= 0 || context > Integer.MAX_VALUE) {
            throw new GgufException("Model file " + path + " declares a context length of " + context + " ("
                    + contextKey + "); it must be between 1 and " + Integer.MAX_VALUE);
        }
        if (!(metadata.get("tokenizer.ggml.tokens") instanceof GgufValues.StringList tokens)) {
            throw missing("tokenizer.ggml.tokens", "a list of strings", metadata);
        }
        if (tokens.isEmpty()) {
            throw new GgufException("Model file " + path + " has an empty vocabulary (tokenizer.ggml.tokens)");
        }
        for (String key : List.of("tokenizer.ggml.scores", "tokenizer.ggml.token_type")) {
            Object value = metadata.get(key);
            if (value != null && (!(value instanceof GgufValues.NumberList list) || list.size() != tokens.size())) {
                throw in.corrupt(key + " should hold one number per token (" + tokens.size() + ") but holds "
                        + (value instanceof List<?> l ? l.size() + " values" : value));
            }
        }
        return new GgufFile(
                path,
                size,
                version,
                metadata,
                tensors,
                dataOffset,
                architecture,
                context.intValue(),
                tokens,
                controlTokens(tokens, metadata.get("tokenizer.ggml.token_type")));
    }

    private static Set<String> controlTokens(List<String> tokens, @Nullable Object types) {
        Set<String> control = new LinkedHashSet<>();
        for (int id = 0; id < tokens.size(); id++) {
            String token = tokens.get(id);
            if (token.isEmpty()) {
                continue;
            }
            boolean special = types instanceof GgufValues.NumberList list
                    ? isControl(list.get(id))
                    : token.length() > 2
                            && token.startsWith("<")
                            && token.endsWith(">")
                            && !BYTE_TOKEN.matcher(token).matches();
            if (special) {
                control.add(token);
            }
        }
        return control;
    }

    private static boolean isControl(Object type) {
        return type instanceof Long t && (t == TOKEN_TYPE_CONTROL || t == TOKEN_TYPE_USER_DEFINED);
    }

    private GgufException missing(String key, String kind, Map<String, Object> metadata) {
        Object value = metadata.get(key);
        return new GgufException("Model file " + path
                + (value == null
                        ? " has no '" + key + "' entry"
                        : " has '" + key + "' as " + describeType(value) + " instead of " + kind)
                + "; it is not a complete llama.cpp model");
    }

    private static String describeType(Object value) {
        return switch (value) {
            case String s -> "a string";
            case Long l -> "an integer";
            case Double d -> "a number";
            case Boolean b -> "a boolean";
            default -> "a list";
        };
    }

    private long multiply(long a, long b, String tensor) throws GgufException {
        try {
            return Math.multiplyExact(a, b);
        } catch (ArithmeticException e) {
            throw in.corrupt("tensor '" + tensor + "' is impossibly large");
        }
    }

    private static String describe(byte[] start) {
        StringBuilder text = new StringBuilder("\"");
        for (byte b : start) {
            text.append(b >= 0x20 && b < 0x7F ? String.valueOf((char) b) : String.format("\\x%02X", b & 0xFF));
        }
        return text.append('"').toString();
    }

    private static String clip(String s) {
        return s.length() <= 80 ? s : s.substring(0, 80) + "…";
    }

    private static List<Long> boxed(long[] shape) {
        List<Long> list = new ArrayList<>(shape.length);
        for (long d : shape) {
            list.add(d);
        }
        return list;
    }
}
