package dev.oam.testing.gguf;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.SequencedSet;
import org.jspecify.annotations.Nullable;

/**
 * Writes a llama-architecture GGUF v3 model with random weights and its own SentencePiece vocabulary, so
 * tests can load a real model through llama.cpp without downloading one (LLAMA-JAVA.md §2).
 *
 * <p>The output is a pure function of the builder's settings: the weights come from a SplitMix64 generator
 * implemented here and use only IEEE arithmetic, so the bytes are identical on every JDK and machine.
 *
 * <p>Layout: header ({@code GGUF}, version 3, tensor count, key count), the metadata, the tensor infos, zero
 * padding to 32 bytes, then the tensor data, each tensor starting on a 32-byte boundary. Matrices are F32 or
 * F16; norms are always F32.
 *
 * <p>Vocabulary: {@code <unk>} 0, {@code <s>} 1, {@code </s>} 2, {@code <|im_start|>} 3, {@code <|im_end|>} 4,
 * the byte pieces {@code <0x00>}…{@code <0xFF>} 5–260, {@code ▁} 261, printable ASCII 262–355, {@code ▁a-z},
 * {@code ▁A-Z}, {@code ▁0-9} 356–417, then every prefix (length ≥ 2) of each of {@link #words()} with and
 * without {@code ▁}, JSON pieces, newlines and a few non-ASCII pieces.
 */
public final class TinyGguf {

    /** The ChatML chat template written as {@code tokenizer.chat_template}. */
    public static final String CHATML_TEMPLATE =
            "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content']"
                    + " + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}"
                    + "{{ '<|im_start|>assistant\\n' }}{% endif %}";

    static final int ALIGNMENT = 32;
    static final String SPACE = "\u2581";

    private static final List<String> WORDS = List.of(
            // tools, arguments and answer keys the tests use
            "attack",
            "flee",
            "beg",
            "trade",
            "open_gate",
            "check_inventory",
            "gate_id",
            "item",
            "name",
            "arguments",
            "tool_calls",
            "reasoning",
            "choice",
            "answer",
            "emotion",
            "line",
            "neutral",
            "happy",
            "angry",
            "sad",
            "afraid",
            "surprised",
            // JSON and chat words
            "true",
            "false",
            "null",
            "type",
            "object",
            "string",
            "number",
            "content",
            "role",
            "user",
            "assistant",
            "system",
            "tool",
            "message",
            "text",
            "id",
            "value",
            "result",
            "error",
            // the game
            "hello",
            "gold",
            "door",
            "guard",
            "player",
            "goblin",
            "sword",
            "shield",
            "potion",
            "key",
            "gate",
            "king",
            "queen",
            "village",
            "castle",
            "forest",
            "dragon",
            "merchant",
            "price",
            "coin",
            "coins",
            "buy",
            "sell",
            "quest",
            "enemy",
            "friend",
            "world",
            "state",
            "health",
            "damage",
            "run",
            "hide",
            "fight",
            "talk",
            "wait",
            "look",
            "find",
            "open",
            "close",
            "inventory",
            "weapon",
            "food",
            "bread",
            "tavern",
            "road",
            "north",
            "south",
            "night",
            "good",
            "bad",
            "old",
            "new",
            // small words
            "yes",
            "no",
            "the",
            "should",
            "and",
            "or",
            "to",
            "of",
            "in",
            "is",
            "are",
            "you",
            "it",
            "we",
            "my",
            "your",
            "this",
            "that",
            "what",
            "where",
            "who",
            "not",
            "can",
            "will",
            "have",
            "do",
            "go",
            "give",
            "take",
            "want",
            "need",
            "know",
            "see",
            "say",
            "help",
            "please",
            "thank",
            "here",
            "now",
            "ok",
            "hi",
            "sir");

    private static final List<String> EXTRA_PIECES = List.of(
            "{\"",
            "\":",
            "\",",
            "\"}",
            SPACE + "\"",
            "\":" + SPACE + "\"",
            "\"," + SPACE + "\"",
            "\n",
            "\n\n",
            SPACE + SPACE,
            "é",
            "ß",
            "€",
            "ü",
            "café",
            SPACE + "café");

    private static final int TYPE_NORMAL = 1;
    private static final int TYPE_UNKNOWN = 2;
    private static final int TYPE_CONTROL = 3;
    private static final int TYPE_BYTE = 6;

    // GGUF value types and ggml tensor types used here
    private static final int GGUF_U32 = 4;
    private static final int GGUF_I32 = 5;
    private static final int GGUF_F32 = 6;
    private static final int GGUF_BOOL = 7;
    private static final int GGUF_STRING = 8;
    private static final int GGUF_ARRAY = 9;
    private static final int GGML_F32 = 0;
    private static final int GGML_F16 = 1;

    private static final Vocabulary VOCABULARY = Vocabulary.build();

    private TinyGguf() {}

    /** A builder for the default "tiny" model (see {@link Builder}). */
    public static Builder builder() {
        return new Builder();
    }

    /** The "tiny" model: embedding 64, 4 heads, 2 layers, feed-forward 192, F32, about 1 MB. */
    public static Builder tiny() {
        return new Builder();
    }

    /** The "mid" model: embedding 512, 8 heads, 8 layers, feed-forward 1536, F16, about 57 MB. */
    public static Builder mid() {
        return new Builder()
                .embedding(512)
                .heads(8)
                .kvHeads(8)
                .layers(8)
                .feedForward(1536)
                .f16(true)
                .name("mid-random-llama");
    }

    /** The "big" model: embedding 1024, 16 heads, 4 KV heads, 16 layers, feed-forward 4096, F16, about 490 MB. */
    public static Builder big() {
        return new Builder()
                .embedding(1024)
                .heads(16)
                .kvHeads(4)
                .layers(16)
                .feedForward(4096)
                .f16(true)
                .name("big-random-llama");
    }

    /**
     * Writes a model that makes llama.cpp abort the process when it loads it: the tiny model with the token
     * {@code <0x01>} renamed {@code <0x00>}, so the vocabulary holds one text twice. The file is a well-formed
     * GGUF that oam's own header check accepts (it does not look for duplicate tokens), and llama.cpp's
     * vocabulary loader then fails {@code GGML_ASSERT(id_to_token.size() == token_to_id.size())}: SIGABRT, no
     * Java exception. For the native-crash containment tests.
     */
    public static void writeAbortingModel(Path file) throws IOException {
        byte[] bytes = tiny().name("aborting-tiny").bytes();
        byte[] from = "<0x01>".getBytes(StandardCharsets.US_ASCII);
        byte[] to = "<0x00>".getBytes(StandardCharsets.US_ASCII);
        int patched = 0;
        search:
        for (int i = 8; i + from.length <= bytes.length; i++) {
            for (int j = 0; j < from.length; j++) {
                if (bytes[i + j] != from[j]) {
                    continue search;
                }
            }
            // a GGUF string: a little-endian u64 length right before its bytes
            if (ByteBuffer.wrap(bytes, i - 8, 8).order(ByteOrder.LITTLE_ENDIAN).getLong() == from.length) {
                System.arraycopy(to, 0, bytes, i, to.length);
                patched++;
            }
        }
        if (patched != 1) {
            throw new IllegalStateException(
                    "expected the token <0x01> once in the tiny model, found it " + patched + " times");
        }
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.write(file, bytes);
    }

    /** The words whose every prefix is in the vocabulary, so each is reachable as one token. */
    public static List<String> words() {
        return WORDS;
    }

    /** The vocabulary in id order (package-private: tests check it). */
    static List<String> tokens() {
        return VOCABULARY.pieces;
    }

    /**
     * The settings of one model. Defaults are the "tiny" model: embedding 64, 4 heads, 4 KV heads, 2 layers,
     * feed-forward 192, context 4096, F32 matrices, seed 42, name {@code tiny-random-llama}, ChatML template.
     */
    public static final class Builder {
        private long seed = 42;
        private boolean f16;
        private int embedding = 64;
        private int heads = 4;
        private int kvHeads = 4;
        private int layers = 2;
        private int feedForward = 192;
        private int contextLength = 4096;
        private String name = "tiny-random-llama";
        private @Nullable String chatTemplate = CHATML_TEMPLATE;
        private String architecture = "llama";

        private Builder() {}

        /**
         * The {@code general.architecture}: {@code llama} (the default) or {@code qwen3}, a current architecture (2025)
         * that llama.cpp b4916 (de.kherud:llama 4.2.0) does not know: the same tensors plus a per-head RMS norm of
         * the queries and keys ({@code attn_q_norm}, {@code attn_k_norm}), with the metadata under {@code qwen3.}.
         */
        public Builder architecture(String architecture) {
            if (!architecture.equals("llama") && !architecture.equals("qwen3")) {
                throw new IllegalArgumentException("architecture must be llama or qwen3, got " + architecture);
            }
            this.architecture = architecture;
            return this;
        }

        /** Seed of the weights; the vocabulary and metadata do not depend on it. */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /** F16 matrices (norms stay F32) instead of F32. */
        public Builder f16(boolean f16) {
            this.f16 = f16;
            return this;
        }

        public Builder embedding(int embedding) {
            this.embedding = positive("embedding", embedding);
            return this;
        }

        public Builder heads(int heads) {
            this.heads = positive("heads", heads);
            return this;
        }

        public Builder kvHeads(int kvHeads) {
            this.kvHeads = positive("kvHeads", kvHeads);
            return this;
        }

        public Builder layers(int layers) {
            this.layers = positive("layers", layers);
            return this;
        }

        public Builder feedForward(int feedForward) {
            this.feedForward = positive("feedForward", feedForward);
            return this;
        }

        public Builder contextLength(int contextLength) {
            this.contextLength = positive("contextLength", contextLength);
            return this;
        }

        /** The {@code general.name}. */
        public Builder name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /** The {@code tokenizer.chat_template}; {@code null} leaves the key out. */
        public Builder chatTemplate(@Nullable String chatTemplate) {
            this.chatTemplate = chatTemplate;
            return this;
        }

        /**
         * Writes the model to {@code file} (creating its parent folders), streaming the weights so even the
         * big model needs little heap. The file appears atomically where the file system allows it, so
         * concurrent writers of the same path never expose a partial file.
         */
        public void write(Path file) throws IOException {
            Layout layout = layout();
            Path absolute = file.toAbsolutePath();
            Path parent = absolute.getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Path temp = Files.createTempFile(parent, absolute.getFileName().toString(), ".part");
            try {
                try (OutputStream out = Files.newOutputStream(temp)) {
                    layout.writeTo(out);
                }
                try {
                    Files.move(temp, absolute, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(temp, absolute, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(temp);
            }
        }

        /** The whole file in memory; meant for small models (at most 1 GiB). */
        public byte[] bytes() {
            Layout layout = layout();
            if (layout.fileSize() > 1L << 30) {
                throw new IllegalStateException(
                        "the model is " + layout.fileSize() + " bytes, too big for bytes(); use write(Path)");
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream((int) layout.fileSize());
            try {
                layout.writeTo(out);
            } catch (IOException e) {
                throw new AssertionError("a ByteArrayOutputStream does not fail", e);
            }
            return out.toByteArray();
        }

        /** The size in bytes of the file {@link #write} produces. */
        long fileSize() {
            return layout().fileSize();
        }

        /** Where the tensor data starts: the header, metadata and tensor infos, padded to 32 bytes. */
        long headerSize() {
            return layout().header.length;
        }

        private Layout layout() {
            if (embedding % heads != 0) {
                throw new IllegalStateException("embedding " + embedding + " is not a multiple of heads " + heads);
            }
            if (heads % kvHeads != 0) {
                throw new IllegalStateException("heads " + heads + " is not a multiple of kvHeads " + kvHeads);
            }
            return new Layout(this);
        }

        private static int positive(String what, int value) {
            if (value <= 0) {
                throw new IllegalArgumentException(what + " must be positive, got " + value);
            }
            return value;
        }
    }

    /** One tensor: its shape (GGUF order, ne[0] contiguous), type, initialisation and offset in the data. */
    private record Tensor(String name, long[] ne, int ggmlType, Init init, double scale, long offset) {
        long elements() {
            long n = 1;
            for (long d : ne) {
                n *= d;
            }
            return n;
        }

        long bytes() {
            return elements() * (ggmlType == GGML_F16 ? 2 : 4);
        }
    }

    private enum Init {
        ONES,
        UNIFORM
    }

    /** Everything about one file except the weights, which are generated while writing. */
    private static final class Layout {
        private final long seed;
        private final byte[] header;
        private final List<Tensor> tensors;
        private final long fileSize;

        Layout(Builder b) {
            this.seed = b.seed;
            int vocab = VOCABULARY.pieces.size();
            int headDim = b.embedding / b.heads;
            int matrix = b.f16 ? GGML_F16 : GGML_F32;
            List<Tensor> planned = new ArrayList<>();
            long[] offset = {0};
            // std of U(-a, a) is a/√3: a = √3·std keeps the std of each tensor as LLAMA-JAVA.md §2 lists it
            TensorAdder norm = (name, ne, unused) -> planned.add(place(offset, name, ne, GGML_F32, Init.ONES, 1.0));
            TensorAdder uniform =
                    (name, ne, std) -> planned.add(place(offset, name, ne, matrix, Init.UNIFORM, Math.sqrt(3.0) * std));
            double inEmbd = 1.0 / Math.sqrt(b.embedding);
            uniform.add("token_embd.weight", new long[] {b.embedding, vocab}, 1.0);
            for (int layer = 0; layer < b.layers; layer++) {
                String p = "blk." + layer + ".";
                norm.add(p + "attn_norm.weight", new long[] {b.embedding}, 1.0);
                uniform.add(p + "attn_q.weight", new long[] {b.embedding, (long) b.heads * headDim}, inEmbd);
                uniform.add(p + "attn_k.weight", new long[] {b.embedding, (long) b.kvHeads * headDim}, inEmbd);
                uniform.add(p + "attn_v.weight", new long[] {b.embedding, (long) b.kvHeads * headDim}, inEmbd);
                uniform.add(
                        p + "attn_output.weight",
                        new long[] {(long) b.heads * headDim, b.embedding},
                        1.0 / Math.sqrt((double) b.heads * headDim));
                if (b.architecture.equals("qwen3")) {
                    norm.add(p + "attn_q_norm.weight", new long[] {headDim}, 1.0);
                    norm.add(p + "attn_k_norm.weight", new long[] {headDim}, 1.0);
                }
                norm.add(p + "ffn_norm.weight", new long[] {b.embedding}, 1.0);
                uniform.add(p + "ffn_gate.weight", new long[] {b.embedding, b.feedForward}, inEmbd);
                uniform.add(p + "ffn_up.weight", new long[] {b.embedding, b.feedForward}, inEmbd);
                uniform.add(
                        p + "ffn_down.weight", new long[] {b.feedForward, b.embedding}, 1.0 / Math.sqrt(b.feedForward));
            }
            norm.add("output_norm.weight", new long[] {b.embedding}, 1.0);
            // a peakier LM head than the other matrices, so greedy output is less uniform
            uniform.add("output.weight", new long[] {b.embedding, vocab}, 3.0 * inEmbd);
            this.tensors = List.copyOf(planned);

            Bytes h = new Bytes();
            h.raw("GGUF".getBytes(StandardCharsets.US_ASCII));
            h.u32(3);
            h.u64(tensors.size());
            h.u64(b.chatTemplate == null ? 25 : 26);
            String a = b.architecture;
            h.kvString("general.architecture", a);
            h.kvString("general.name", b.name);
            h.kvU32("general.alignment", ALIGNMENT);
            h.kvU32("general.file_type", b.f16 ? 1 : 0);
            h.kvU32(a + ".context_length", b.contextLength);
            h.kvU32(a + ".embedding_length", b.embedding);
            h.kvU32(a + ".block_count", b.layers);
            h.kvU32(a + ".feed_forward_length", b.feedForward);
            h.kvU32(a + ".attention.head_count", b.heads);
            h.kvU32(a + ".attention.head_count_kv", b.kvHeads);
            h.kvF32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
            h.kvU32(a + ".rope.dimension_count", headDim);
            h.kvF32(a + ".rope.freq_base", 10000f);
            h.kvU32(a + ".vocab_size", vocab);
            h.kvString("tokenizer.ggml.model", "llama");
            h.key("tokenizer.ggml.tokens");
            h.u32(GGUF_ARRAY);
            h.u32(GGUF_STRING);
            h.u64(vocab);
            for (String piece : VOCABULARY.pieces) {
                h.string(piece);
            }
            h.key("tokenizer.ggml.scores");
            h.u32(GGUF_ARRAY);
            h.u32(GGUF_F32);
            h.u64(vocab);
            for (float score : VOCABULARY.scores) {
                h.f32(score);
            }
            h.key("tokenizer.ggml.token_type");
            h.u32(GGUF_ARRAY);
            h.u32(GGUF_I32);
            h.u64(vocab);
            for (int type : VOCABULARY.types) {
                h.u32(type);
            }
            h.kvU32("tokenizer.ggml.bos_token_id", 1);
            h.kvU32("tokenizer.ggml.eos_token_id", 2);
            h.kvU32("tokenizer.ggml.unknown_token_id", 0);
            h.kvU32("tokenizer.ggml.padding_token_id", 0);
            h.kvBool("tokenizer.ggml.add_bos_token", true);
            h.kvBool("tokenizer.ggml.add_eos_token", false);
            // false, so decode(encode(s)) == s exactly
            h.kvBool("tokenizer.ggml.add_space_prefix", false);
            if (b.chatTemplate != null) {
                h.kvString("tokenizer.chat_template", b.chatTemplate);
            }
            for (Tensor t : tensors) {
                h.string(t.name());
                h.u32(t.ne().length);
                for (long d : t.ne()) {
                    h.u64(d);
                }
                h.u32(t.ggmlType());
                h.u64(t.offset());
            }
            h.pad(ALIGNMENT);
            this.header = h.toByteArray();
            this.fileSize = header.length + offset[0];
        }

        private interface TensorAdder {
            void add(String name, long[] ne, double std);
        }

        private static Tensor place(long[] offset, String name, long[] ne, int type, Init init, double scale) {
            Tensor t = new Tensor(name, ne, type, init, scale, offset[0]);
            offset[0] = align(offset[0] + t.bytes());
            return t;
        }

        long fileSize() {
            return fileSize;
        }

        void writeTo(OutputStream out) throws IOException {
            out.write(header);
            SplitMix64 random = new SplitMix64(seed);
            ByteBuffer buffer = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
            long written = 0;
            for (Tensor t : tensors) {
                long padding = t.offset() - written;
                for (long i = 0; i < padding; i++) {
                    put(out, buffer, (byte) 0);
                }
                long n = t.elements();
                for (long i = 0; i < n; i++) {
                    float value = t.init() == Init.ONES ? 1.0f : (float) (random.nextSigned() * t.scale());
                    if (buffer.remaining() < 4) {
                        drain(out, buffer);
                    }
                    if (t.ggmlType() == GGML_F16) {
                        buffer.putShort(Float.floatToFloat16(value));
                    } else {
                        buffer.putFloat(value);
                    }
                }
                written = t.offset() + t.bytes();
            }
            drain(out, buffer);
        }

        private static void put(OutputStream out, ByteBuffer buffer, byte b) throws IOException {
            if (!buffer.hasRemaining()) {
                drain(out, buffer);
            }
            buffer.put(b);
        }

        private static void drain(OutputStream out, ByteBuffer buffer) throws IOException {
            out.write(buffer.array(), 0, buffer.position());
            buffer.clear();
        }
    }

    static long align(long offset) {
        return (offset + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    }

    /** SplitMix64 (Steele, Lea, Flood 2014): tiny, fast and the same on every JVM. */
    static final class SplitMix64 {
        private long state;

        SplitMix64(long seed) {
            this.state = seed;
        }

        long nextLong() {
            long z = state += 0x9E3779B97F4A7C15L;
            z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
            z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
            return z ^ (z >>> 31);
        }

        /** Uniform in [-1, 1), from the top 24 bits (exact in a float). */
        double nextSigned() {
            return ((nextLong() >>> 40) * 0x1.0p-23) - 1.0;
        }
    }

    /** The pieces, scores and token types, in id order. */
    private record Vocabulary(List<String> pieces, float[] scores, int[] types) {
        static Vocabulary build() {
            SequencedSet<String> specials =
                    new LinkedHashSet<>(List.of("<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"));
            List<String> pieces = new ArrayList<>(specials);
            for (int b = 0; b < 256; b++) {
                pieces.add(String.format("<0x%02X>", b));
            }
            SequencedSet<String> normal = new LinkedHashSet<>();
            normal.add(SPACE);
            for (char c = '!'; c <= '~'; c++) {
                normal.add(String.valueOf(c));
            }
            for (char c = 'a'; c <= 'z'; c++) {
                normal.add(SPACE + c);
            }
            for (char c = 'A'; c <= 'Z'; c++) {
                normal.add(SPACE + c);
            }
            for (char c = '0'; c <= '9'; c++) {
                normal.add(SPACE + c);
            }
            for (String word : WORDS) {
                addPrefixes(normal, word);
                addPrefixes(normal, SPACE + word);
            }
            for (String piece : EXTRA_PIECES) {
                // SPM only merges pairs whose concatenation is a piece, so longer pieces need their prefixes
                addPrefixes(normal, piece);
                normal.add(piece);
            }
            int first = pieces.size();
            pieces.addAll(normal);
            float[] scores = new float[pieces.size()];
            int[] types = new int[pieces.size()];
            types[0] = TYPE_UNKNOWN;
            for (int id = 1; id < specials.size(); id++) {
                types[id] = TYPE_CONTROL;
            }
            for (int id = specials.size(); id < first; id++) {
                types[id] = TYPE_BYTE;
            }
            for (int id = first; id < pieces.size(); id++) {
                types[id] = TYPE_NORMAL;
                int rank = id - first;
                String piece = pieces.get(id);
                scores[id] = (float) (piece.codePointCount(0, piece.length()) - rank * 1e-4);
            }
            return new Vocabulary(List.copyOf(pieces), scores, types);
        }

        private static void addPrefixes(SequencedSet<String> into, String word) {
            int[] cps = word.codePoints().toArray();
            for (int length = 2; length <= cps.length; length++) {
                into.add(new String(cps, 0, length));
            }
        }
    }

    /** A little-endian byte builder for the header. */
    private static final class Bytes extends ByteArrayOutputStream {
        Bytes() {
            super(1 << 16);
        }

        void raw(byte[] bytes) {
            write(bytes, 0, bytes.length);
        }

        void u32(int value) {
            for (int i = 0; i < 4; i++) {
                write(value >>> (8 * i));
            }
        }

        void u64(long value) {
            for (int i = 0; i < 8; i++) {
                write((int) (value >>> (8 * i)));
            }
        }

        void f32(float value) {
            u32(Float.floatToRawIntBits(value));
        }

        void string(String s) {
            byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
            u64(utf8.length);
            raw(utf8);
        }

        void key(String key) {
            string(key);
        }

        void kvString(String key, String value) {
            key(key);
            u32(GGUF_STRING);
            string(value);
        }

        void kvU32(String key, int value) {
            key(key);
            u32(GGUF_U32);
            u32(value);
        }

        void kvF32(String key, float value) {
            key(key);
            u32(GGUF_F32);
            f32(value);
        }

        void kvBool(String key, boolean value) {
            key(key);
            u32(GGUF_BOOL);
            write(value ? 1 : 0);
        }

        void pad(int alignment) {
            while (size() % alignment != 0) {
                write(0);
            }
        }
    }
}
