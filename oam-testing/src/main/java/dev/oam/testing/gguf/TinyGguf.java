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
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Writes a llama-architecture GGUF v3 model with random weights and its own SentencePiece vocabulary, so tests can load
 * a real model through llama.cpp without downloading one.
 *
 * <p>The output is a pure function of the builder's settings: the weights come from a SplitMix64 generator implemented
 * here and use only IEEE arithmetic, so the bytes are identical on every JDK and machine.
 *
 * <p>Layout: header ({@code GGUF}, version 3, tensor count, key count), the metadata, the tensor infos, zero padding to
 * 32 bytes, then the tensor data, each tensor starting on a 32-byte boundary. Matrices are F32 or F16; norms are always
 * F32.
 *
 * <p>Vocabulary: {@code <unk>} 0, {@code <s>} 1, {@code </s>} 2, {@code <|im_start|>} 3, {@code <|im_end|>} 4, the byte
 * pieces {@code <0x00>}…{@code <0xFF>} 5–260, {@code ▁} 261, printable ASCII 262–355, {@code ▁a-z}, {@code ▁A-Z},
 * {@code ▁0-9} 356–417, then every prefix (length ≥ 2) of each of {@link #words()} with and without {@code ▁}, JSON
 * pieces, newlines and a few non-ASCII pieces.
 */
public final class TinyGguf {

    /** The ChatML chat template written as {@code tokenizer.chat_template}. */
    public static final String CHATML_TEMPLATE =
            "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content']"
                    + " + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}"
                    + "{{ '<|im_start|>assistant\\n' }}{% endif %}";

    static final int ALIGNMENT = 32;

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
     * {@code <0x01>} renamed {@code <0x00>}, so the vocabulary holds one text twice. The file is a well-formed GGUF
     * that oam's own header check accepts (it does not look for duplicate tokens), and llama.cpp's vocabulary loader
     * then fails {@code GGML_ASSERT(id_to_token.size() == token_to_id.size())}: SIGABRT, no Java exception. For the
     * native-crash containment tests.
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
        return TinyVocabulary.WORDS;
    }

    /** The vocabulary in id order (package-private: tests check it). */
    static List<String> tokens() {
        return TinyVocabulary.INSTANCE.pieces();
    }

    /**
     * The settings of one model. Defaults are the "tiny" model: embedding 64, 4 heads, 4 KV heads, 2 layers,
     * feed-forward 192, context 4096, F32 matrices, seed 42, name {@code tiny-random-llama}, ChatML template.
     */
    public static final class Builder {
        long seed = 42;
        boolean f16;
        int embedding = 64;
        int heads = 4;
        int kvHeads = 4;
        int layers = 2;
        int feedForward = 192;
        int contextLength = 4096;
        String name = "tiny-random-llama";

        @Nullable
        String chatTemplate = CHATML_TEMPLATE;

        String architecture = "llama";

        private Builder() {}

        /**
         * The {@code general.architecture}: {@code llama} (the default) or {@code qwen3}, a current architecture (2025)
         * that llama.cpp b4916 (de.kherud:llama 4.2.0) does not know: the same tensors plus a per-head RMS norm of the
         * queries and keys ({@code attn_q_norm}, {@code attn_k_norm}), with the metadata under {@code qwen3.}.
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
         * Writes the model to {@code file} (creating its parent folders), streaming the weights so even the big model
         * needs little heap. The file appears atomically where the file system allows it, so concurrent writers of the
         * same path never expose a partial file.
         */
        public void write(Path file) throws IOException {
            TinyLayout layout = layout();
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
            TinyLayout layout = layout();
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
            return layout().headerSize();
        }

        private TinyLayout layout() {
            if (embedding % heads != 0) {
                throw new IllegalStateException("embedding " + embedding + " is not a multiple of heads " + heads);
            }
            if (heads % kvHeads != 0) {
                throw new IllegalStateException("heads " + heads + " is not a multiple of kvHeads " + kvHeads);
            }
            return new TinyLayout(this);
        }

        private static int positive(String what, int value) {
            if (value <= 0) {
                throw new IllegalArgumentException(what + " must be positive, got " + value);
            }
            return value;
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
}
