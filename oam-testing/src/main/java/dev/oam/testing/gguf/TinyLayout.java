package dev.oam.testing.gguf;

import static dev.oam.testing.gguf.GgufBytes.GGML_F16;
import static dev.oam.testing.gguf.GgufBytes.GGML_F32;
import static dev.oam.testing.gguf.GgufBytes.GGUF_ARRAY;
import static dev.oam.testing.gguf.GgufBytes.GGUF_F32;
import static dev.oam.testing.gguf.GgufBytes.GGUF_I32;
import static dev.oam.testing.gguf.GgufBytes.GGUF_STRING;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Everything about one file except the weights, which are generated while writing. */
final class TinyLayout {
    private static final TinyVocabulary VOCABULARY = TinyVocabulary.INSTANCE;

    private final long seed;
    private final byte[] header;
    private final List<Tensor> tensors;
    private final long fileSize;

    TinyLayout(TinyGguf.Builder b) {
        this.seed = b.seed;
        int vocab = VOCABULARY.pieces().size();
        int headDim = b.embedding / b.heads;
        int matrix = b.f16 ? GGML_F16 : GGML_F32;
        List<Tensor> planned = new ArrayList<>();
        long[] offset = {0};
        // std of U(-a, a) is a/√3: a = √3·std gives each tensor the std asked for here
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
            uniform.add(p + "ffn_down.weight", new long[] {b.feedForward, b.embedding}, 1.0 / Math.sqrt(b.feedForward));
        }
        norm.add("output_norm.weight", new long[] {b.embedding}, 1.0);
        // a peakier LM head than the other matrices, so greedy output is less uniform
        uniform.add("output.weight", new long[] {b.embedding, vocab}, 3.0 * inEmbd);
        this.tensors = List.copyOf(planned);

        GgufBytes h = new GgufBytes();
        h.raw("GGUF".getBytes(StandardCharsets.US_ASCII));
        h.u32(3);
        h.u64(tensors.size());
        h.u64(b.chatTemplate == null ? 25 : 26);
        String a = b.architecture;
        h.kvString("general.architecture", a);
        h.kvString("general.name", b.name);
        h.kvU32("general.alignment", TinyGguf.ALIGNMENT);
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
        for (String piece : VOCABULARY.pieces()) {
            h.string(piece);
        }
        h.key("tokenizer.ggml.scores");
        h.u32(GGUF_ARRAY);
        h.u32(GGUF_F32);
        h.u64(vocab);
        for (float score : VOCABULARY.scores()) {
            h.f32(score);
        }
        h.key("tokenizer.ggml.token_type");
        h.u32(GGUF_ARRAY);
        h.u32(GGUF_I32);
        h.u64(vocab);
        for (int type : VOCABULARY.types()) {
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
        h.pad(TinyGguf.ALIGNMENT);
        this.header = h.toByteArray();
        this.fileSize = header.length + offset[0];
    }

    private interface TensorAdder {
        void add(String name, long[] ne, double std);
    }

    private static Tensor place(long[] offset, String name, long[] ne, int type, Init init, double scale) {
        Tensor t = new Tensor(name, ne, type, init, scale, offset[0]);
        offset[0] = TinyGguf.align(offset[0] + t.bytes());
        return t;
    }

    long fileSize() {
        return fileSize;
    }

    /** Where the tensor data starts: the header, metadata and tensor infos, padded to 32 bytes. */
    long headerSize() {
        return header.length;
    }

    void writeTo(OutputStream out) throws IOException {
        out.write(header);
        TinyGguf.SplitMix64 random = new TinyGguf.SplitMix64(seed);
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
}
