package dev.oam.testing.gguf;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** A little-endian byte builder for a GGUF header, with the GGUF value types and ggml tensor types used here. */
final class GgufBytes extends ByteArrayOutputStream {
    // GGUF value types and ggml tensor types used here
    static final int GGUF_U32 = 4;
    static final int GGUF_I32 = 5;
    static final int GGUF_F32 = 6;
    static final int GGUF_BOOL = 7;
    static final int GGUF_STRING = 8;
    static final int GGUF_ARRAY = 9;
    static final int GGML_F32 = 0;
    static final int GGML_F16 = 1;

    GgufBytes() {
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
