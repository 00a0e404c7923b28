package dev.oam.model.llama.gguf;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.AbstractList;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.RandomAccess;
import java.util.Set;
import java.util.function.IntFunction;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The header and metadata of a GGUF model file, read in Java so a bad file is refused with a clear message
 * before llama.cpp sees it (native code aborts the whole process on some malformed inputs). The tensor data
 * is never read; the tensor infos are checked against the file's size.
 *
 * <p>Every count and length in the file is checked against the bytes that remain before anything is
 * allocated, so a hostile file can neither exhaust the heap nor make the reader loop for long.
 */
public final class GgufFile {

    /** More metadata than any real model carries (a 262k-token vocabulary takes about 6 MiB). */
    static final long MAX_HEADER_BYTES = 64L << 20;

    private static final int MAX_DIMS = 4;
    private static final Pattern BYTE_TOKEN = Pattern.compile("<0x[0-9A-Fa-f]{2}>");
    private static final int MAX_TENSOR_NAME = 63;
    private static final int TOKEN_TYPE_CONTROL = 3;
    private static final int TOKEN_TYPE_USER_DEFINED = 4;

    // GGUF value types
    private static final int U8 = 0;
    private static final int I8 = 1;
    private static final int U16 = 2;
    private static final int I16 = 3;
    private static final int U32 = 4;
    private static final int I32 = 5;
    private static final int F32 = 6;
    private static final int BOOL = 7;
    private static final int STRING = 8;
    private static final int ARRAY = 9;
    private static final int U64 = 10;
    private static final int I64 = 11;
    private static final int F64 = 12;

    private final Path path;
    private final long fileSize;
    private final int version;
    private final String architecture;
    private final @Nullable String name;
    private final int contextLength;
    private final @Nullable String chatTemplate;
    private final List<String> tokens;
    private final Set<String> controlTokens;
    private final List<Tensor> tensors;
    private final long dataOffset;
    private final Map<String, Object> metadata;

    /**
     * One tensor as the header describes it.
     *
     * @param shape the dimensions in GGUF order (the first is the contiguous one)
     * @param type the ggml type (0 = F32, 1 = F16, 8 = Q8_0, …)
     * @param offset where its data starts, relative to {@link #dataOffset()}
     * @param size its data in bytes
     */
    public record Tensor(String name, List<Long> shape, int type, long offset, long size) {
        public Tensor {
            shape = List.copyOf(shape);
        }
    }

    private GgufFile(
            Path path,
            long fileSize,
            int version,
            Map<String, Object> metadata,
            List<Tensor> tensors,
            long dataOffset,
            String architecture,
            int contextLength,
            List<String> tokens,
            Set<String> controlTokens) {
        this.path = path;
        this.fileSize = fileSize;
        this.version = version;
        this.metadata = Collections.unmodifiableMap(metadata);
        this.tensors = List.copyOf(tensors);
        this.dataOffset = dataOffset;
        this.architecture = architecture;
        this.name = metadata.get("general.name") instanceof String s ? s : null;
        this.contextLength = contextLength;
        this.chatTemplate = metadata.get("tokenizer.chat_template") instanceof String s ? s : null;
        this.tokens = tokens;
        this.controlTokens = Collections.unmodifiableSet(controlTokens);
    }

    /**
     * Reads and checks the header of {@code path}.
     *
     * @throws GgufException when the file is missing, unreadable, not GGUF (version 2 or 3), truncated or
     *     corrupt, or lacks {@code general.architecture}, {@code <arch>.context_length} (positive) or
     *     {@code tokenizer.ggml.tokens}
     */
    public static GgufFile read(Path path) throws GgufException {
        if (Files.isDirectory(path)) {
            throw new GgufException("Model file " + path + " is a directory, not a GGUF file");
        }
        if (!Files.exists(path)) {
            throw new GgufException("Model file " + path + " does not exist");
        }
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ)) {
            return new Parser(path, channel).parse();
        } catch (NoSuchFileException e) {
            throw new GgufException("Model file " + path + " does not exist");
        } catch (AccessDeniedException e) {
            throw new GgufException("Model file " + path + " cannot be read: permission denied", e);
        } catch (IOException e) {
            throw new GgufException("Model file " + path + " cannot be read: " + e.getMessage(), e);
        }
    }

    public Path path() {
        return path;
    }

    public long fileSize() {
        return fileSize;
    }

    /** The GGUF version: 2 or 3. */
    public int version() {
        return version;
    }

    /** {@code general.architecture}, e.g. {@code llama}. */
    public String architecture() {
        return architecture;
    }

    /** {@code general.name}, if the file has it. */
    public @Nullable String name() {
        return name;
    }

    /** {@code <architecture>.context_length}: the context the model was trained for. */
    public int contextLength() {
        return contextLength;
    }

    /** {@code tokenizer.chat_template}, if the file has it. */
    public @Nullable String chatTemplate() {
        return chatTemplate;
    }

    /** {@code tokenizer.ggml.tokens}: the vocabulary in id order. */
    public List<String> tokens() {
        return tokens;
    }

    /**
     * The texts of the control and user-defined tokens ({@code tokenizer.ggml.token_type} 3 or 4), without
     * empty ones. Without token types, the tokens that look like {@code <…>} or {@code <|…|>}.
     */
    public Set<String> controlTokens() {
        return controlTokens;
    }

    public int tensorCount() {
        return tensors.size();
    }

    /** The tensor infos in file order. */
    public List<Tensor> tensors() {
        return tensors;
    }

    /** Where the tensor data starts in the file. */
    public long dataOffset() {
        return dataOffset;
    }

    /**
     * Every key in file order. Integers are {@link Long} (a {@code u64} above 2^63−1 appears negative), floats
     * {@link Double}, booleans {@link Boolean}, strings {@link String}, arrays an unmodifiable {@link List} of
     * those.
     */
    public Map<String, Object> metadata() {
        return metadata;
    }

    @Override
    public String toString() {
        return "GgufFile[" + path + ", " + architecture + ", " + tokens.size() + " tokens, " + tensors.size()
                + " tensors]";
    }

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

    /** Parses one file; every failure names {@link #path}. */
    private static final class Parser {
        private final Path path;
        private final FileChannel channel;
        private final long size;
        private final ByteBuffer buffer = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        private long bufferStart; // file position of buffer[0]

        Parser(Path path, FileChannel channel) throws IOException {
            this.path = path;
            this.channel = channel;
            this.size = channel.size();
            buffer.limit(0);
        }

        GgufFile parse() throws IOException, GgufException {
            if (size == 0) {
                throw new GgufException("Model file " + path + " is empty, not a GGUF file");
            }
            byte[] magic = new byte[(int) Math.min(4, size)];
            fill(magic.length);
            buffer.get(magic);
            if (magic.length < 4 || magic[0] != 'G' || magic[1] != 'G' || magic[2] != 'U' || magic[3] != 'F') {
                throw new GgufException("Model file " + path + " is not a GGUF file (it starts with " + describe(magic)
                        + " instead of \"GGUF\"); llama.cpp models are .gguf files");
            }
            int version = (int) u32("the version");
            if (version != 2 && version != 3) {
                throw new GgufException("Model file " + path + " uses GGUF version " + Integer.toUnsignedString(version)
                        + ", which is not supported (versions 2 and 3 are); convert it again with a recent llama.cpp");
            }
            long tensorCount = count(u64("the tensor count"), 8 + 4 + 8 + 4 + 8, "tensors");
            long kvCount = count(u64("the metadata count"), 8 + 4 + 1, "metadata entries");

            Map<String, Object> metadata = new LinkedHashMap<>();
            for (long i = 0; i < kvCount; i++) {
                long at = position();
                String key = string("a metadata key");
                int type = (int) u32("the type of '" + key + "'");
                Object value = value(key, type);
                if (metadata.putIfAbsent(key, value) != null) {
                    throw corrupt("the key '" + key + "' appears twice (at byte " + at + ")");
                }
            }
            int alignment = 32;
            if (metadata.containsKey("general.alignment")) {
                if (!(metadata.get("general.alignment") instanceof Long a)
                        || a <= 0
                        || a > 1 << 20
                        || Long.bitCount(a) != 1) {
                    throw corrupt("general.alignment is " + metadata.get("general.alignment") + ", not a power of two");
                }
                alignment = a.intValue();
            }

            List<Tensor> tensors = new ArrayList<>((int) Math.min(tensorCount, 4096));
            List<long[]> shapes = new ArrayList<>();
            Set<String> names = new HashSet<>();
            for (long i = 0; i < tensorCount; i++) {
                String name = string("a tensor name");
                if (name.getBytes(StandardCharsets.UTF_8).length > MAX_TENSOR_NAME) {
                    throw corrupt("the tensor name '" + clip(name) + "' is longer than " + MAX_TENSOR_NAME + " bytes");
                }
                if (!names.add(name)) {
                    throw corrupt("the tensor '" + name + "' appears twice");
                }
                long dims = u32("the dimensions of tensor '" + name + "'");
                if (dims < 1 || dims > MAX_DIMS) {
                    throw corrupt("tensor '" + name + "' has " + dims + " dimensions (1 to " + MAX_DIMS + " allowed)");
                }
                long[] shape = new long[(int) dims];
                long elements = 1;
                for (int d = 0; d < dims; d++) {
                    shape[d] = u64("a dimension of tensor '" + name + "'");
                    if (shape[d] <= 0) {
                        throw corrupt("tensor '" + name + "' has a dimension of " + Long.toUnsignedString(shape[d]));
                    }
                    elements = multiply(elements, shape[d], name);
                }
                int type = (int) u32("the type of tensor '" + name + "'");
                int[] info = type >= 0 && type < GGML_TYPES.length ? GGML_TYPES[type] : null;
                if (info == null) {
                    throw corrupt("tensor '" + name + "' has the unknown ggml type " + Integer.toUnsignedString(type)
                            + " (the file may need a newer llama.cpp)");
                }
                if (shape[0] % info[0] != 0) {
                    throw corrupt("tensor '" + name + "' has a row of " + shape[0]
                            + " values, not a multiple of its type's block of " + info[0]);
                }
                long bytes = multiply(elements / info[0], info[1], name);
                long offset = u64("the offset of tensor '" + name + "'");
                if (offset < 0 || offset % alignment != 0) {
                    throw corrupt("tensor '" + name + "' starts at " + Long.toUnsignedString(offset)
                            + ", not a multiple of the alignment " + alignment);
                }
                tensors.add(new Tensor(name, boxed(shape), type, offset, bytes));
                shapes.add(shape);
            }
            long dataOffset = (position() + alignment - 1) / alignment * alignment;
            for (Tensor t : tensors) {
                if (t.offset() > size - dataOffset || t.size() > size - dataOffset - t.offset()) {
                    throw corrupt("tensor '" + t.name() + "' needs bytes " + (dataOffset + t.offset()) + " to "
                            + (dataOffset + t.offset() + t.size()) + " but the file has only " + size
                            + " (truncated download?)");
                }
            }
            return model(metadata, tensors, dataOffset, version);
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
            if (!(metadata.get("tokenizer.ggml.tokens") instanceof StringList tokens)) {
                throw missing("tokenizer.ggml.tokens", "a list of strings", metadata);
            }
            if (tokens.isEmpty()) {
                throw new GgufException("Model file " + path + " has an empty vocabulary (tokenizer.ggml.tokens)");
            }
            for (String key : List.of("tokenizer.ggml.scores", "tokenizer.ggml.token_type")) {
                Object value = metadata.get(key);
                if (value != null && (!(value instanceof NumberList list) || list.size() != tokens.size())) {
                    throw corrupt(key + " should hold one number per token (" + tokens.size() + ") but holds "
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
                boolean special = types instanceof NumberList list
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

        // --- values ---

        private Object value(String key, int type) throws IOException, GgufException {
            return switch (type) {
                case U8 -> (long) (u8(key) & 0xFF);
                case I8 -> (long) (byte) u8(key);
                case U16 -> (long) (u16(key) & 0xFFFF);
                case I16 -> (long) (short) u16(key);
                case U32 -> u32(key);
                case I32 -> (long) (int) u32(key);
                case F32 -> (double) Float.intBitsToFloat((int) u32(key));
                case BOOL -> u8(key) != 0;
                case STRING -> string("the value of '" + key + "'");
                case U64, I64 -> u64(key);
                case F64 -> Double.longBitsToDouble(u64(key));
                case ARRAY -> array(key);
                default -> throw corrupt("'" + key + "' has the unknown value type " + Integer.toUnsignedString(type));
            };
        }

        private List<?> array(String key) throws IOException, GgufException {
            int type = (int) u32("the element type of '" + key + "'");
            if (type == ARRAY) {
                throw corrupt("'" + key + "' is a list of lists, which llama.cpp models do not use");
            }
            int width = switch (type) {
                case U8, I8, BOOL -> 1;
                case U16, I16 -> 2;
                case U32, I32, F32 -> 4;
                case U64, I64, F64, STRING -> 8; // a string takes at least its 8-byte length
                default ->
                    throw corrupt(
                            "'" + key + "' is a list of the unknown value type " + Integer.toUnsignedString(type));
            };
            int n = (int) count(u64("the length of '" + key + "'"), width, "values in '" + key + "'");
            switch (type) {
                case STRING -> {
                    String[] values = new String[n];
                    String what = "an entry of '" + key + "'";
                    for (int i = 0; i < n; i++) {
                        values[i] = string(what);
                    }
                    return new StringList(values);
                }
                case U8, I8, BOOL -> {
                    byte[] v = new byte[n];
                    read(v, "'" + key + "'");
                    IntFunction<Object> get = switch (type) {
                        case U8 -> i -> (long) (v[i] & 0xFF);
                        case I8 -> i -> (long) v[i];
                        default -> i -> v[i] != 0;
                    };
                    return new NumberList(n, get);
                }
                case U16, I16 -> {
                    short[] v = new short[n];
                    for (int i = 0; i < n; i++) {
                        v[i] = (short) u16(key);
                    }
                    return new NumberList(n, type == U16 ? i -> (long) (v[i] & 0xFFFF) : i -> (long) v[i]);
                }
                case U32, I32, F32 -> {
                    int[] v = new int[n];
                    for (int i = 0; i < n; i++) {
                        v[i] = (int) u32(key);
                    }
                    IntFunction<Object> get = switch (type) {
                        case U32 -> i -> v[i] & 0xFFFF_FFFFL;
                        case I32 -> i -> (long) v[i];
                        default -> i -> (double) Float.intBitsToFloat(v[i]);
                    };
                    return new NumberList(n, get);
                }
                default -> {
                    long[] v = new long[n];
                    for (int i = 0; i < n; i++) {
                        v[i] = u64(key);
                    }
                    return new NumberList(n, type == F64 ? i -> Double.longBitsToDouble(v[i]) : i -> v[i]);
                }
            }
        }

        // --- primitives ---

        private long position() {
            return bufferStart + buffer.position();
        }

        /** Bytes left for the header: to the end of the file, or to {@link #MAX_HEADER_BYTES}. */
        private long remaining() {
            return Math.min(size, MAX_HEADER_BYTES) - position();
        }

        /**
         * Checks that {@code count} (the u64 just read) items of at least {@code minBytes} each can fit in what
         * remains, so nothing is allocated for a count a corrupt file made up.
         */
        private long count(long count, int minBytes, String what) throws GgufException {
            long remaining = remaining();
            if (count < 0 || count > remaining / minBytes || count > Integer.MAX_VALUE - 8) {
                throw corrupt("it claims " + Long.toUnsignedString(count) + " " + what + " at byte " + (position() - 8)
                        + ", more than its remaining " + remaining + " bytes can hold");
            }
            return count;
        }

        private String string(String what) throws IOException, GgufException {
            long at = position();
            long length = u64(what);
            long remaining = remaining();
            if (length < 0 || length > remaining) {
                throw corrupt(what + " at byte " + at + " claims " + Long.toUnsignedString(length) + " bytes, but only "
                        + remaining + " remain");
            }
            if (length == 0) {
                return "";
            }
            if (length <= buffer.capacity()) {
                fill((int) length);
                String s = new String(buffer.array(), buffer.position(), (int) length, StandardCharsets.UTF_8);
                buffer.position(buffer.position() + (int) length);
                return s;
            }
            byte[] bytes = new byte[(int) length];
            read(bytes, what);
            return new String(bytes, StandardCharsets.UTF_8);
        }

        private int u8(String what) throws IOException, GgufException {
            fill(1, what);
            return buffer.get();
        }

        private int u16(String what) throws IOException, GgufException {
            fill(2, what);
            return buffer.getShort();
        }

        private long u32(String what) throws IOException, GgufException {
            fill(4, what);
            return buffer.getInt() & 0xFFFF_FFFFL;
        }

        private long u64(String what) throws IOException, GgufException {
            fill(8, what);
            return buffer.getLong();
        }

        private void read(byte[] into, String what) throws IOException, GgufException {
            int done = 0;
            while (done < into.length) {
                fill(1, what);
                int n = Math.min(buffer.remaining(), into.length - done);
                buffer.get(into, done, n);
                done += n;
            }
        }

        private void fill(int bytes, String what) throws IOException, GgufException {
            if (buffer.remaining() >= bytes) {
                return;
            }
            if (position() + bytes > size) {
                throw corrupt("it ends at byte " + size + " while reading " + what + " (truncated download?)");
            }
            fill(bytes);
        }

        /** Makes at least {@code bytes} (≤ the buffer's capacity, and present in the file) available. */
        private void fill(int bytes) throws IOException, GgufException {
            if (buffer.remaining() >= bytes) {
                return;
            }
            if (position() + bytes > MAX_HEADER_BYTES) {
                throw corrupt(
                        "its metadata goes on past " + (MAX_HEADER_BYTES >> 20) + " MiB, more than any real model");
            }
            bufferStart = position();
            buffer.compact();
            while (buffer.position() < bytes) {
                if (channel.read(buffer, bufferStart + buffer.position()) < 0) {
                    throw new EOFException("the file shrank while it was read");
                }
            }
            buffer.flip();
        }

        private long multiply(long a, long b, String tensor) throws GgufException {
            try {
                return Math.multiplyExact(a, b);
            } catch (ArithmeticException e) {
                throw corrupt("tensor '" + tensor + "' is impossibly large");
            }
        }

        private GgufException corrupt(String problem) {
            return new GgufException("Model file " + path + " is truncated or corrupt: " + problem);
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

    /** An unmodifiable list of strings over an array. */
    private static final class StringList extends AbstractList<String> implements RandomAccess {
        private final String[] values;

        StringList(String[] values) {
            this.values = values;
        }

        @Override
        public String get(int index) {
            return values[index];
        }

        @Override
        public int size() {
            return values.length;
        }
    }

    /** An unmodifiable list over a primitive array, boxing on access so big arrays stay compact. */
    private static final class NumberList extends AbstractList<Object> implements RandomAccess {
        private final int size;
        private final IntFunction<Object> get;

        NumberList(int size, IntFunction<Object> get) {
            this.size = size;
            this.get = get;
        }

        @Override
        public Object get(int index) {
            Objects.checkIndex(index, size);
            return get.apply(index);
        }

        @Override
        public int size() {
            return size;
        }
    }
}
