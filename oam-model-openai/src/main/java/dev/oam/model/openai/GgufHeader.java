package dev.oam.model.openai;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;

/**
 * The few metadata values of a GGUF file that starting a {@code llama-server} on it needs: the architecture (for
 * messages), the name, the trained context and whether the file has its own chat template. Read in Java, without
 * llama.cpp, so this module stays free of native code; every length is bounded before it is read, so a hostile file
 * cannot exhaust the heap.
 *
 * @param chatTemplate whether {@code tokenizer.chat_template} is present
 * @param contextLength {@code <arch>.context_length}, or 0 when absent
 */
record GgufHeader(String architecture, @Nullable String name, int contextLength, boolean chatTemplate) {
    private static final long MAX_STRING = 16L << 20;
    private static final long MAX_KEYS = 1 << 16;
    private static final int STRING = 8;
    private static final int ARRAY = 9;

    /**
     * The header of {@code path}; an {@link IOException} with a message fit for a client when it is not a GGUF file.
     */
    static GgufHeader read(Path path) throws IOException {
        try (InputStream raw = Files.newInputStream(path);
                DataInputStream in = new DataInputStream(new BufferedInputStream(raw, 1 << 16))) {
            byte[] magic = new byte[4];
            in.readFully(magic);
            if (!new String(magic, StandardCharsets.ISO_8859_1).equals("GGUF")) {
                throw new IOException("is not a GGUF model file (it does not start with 'GGUF')");
            }
            int version = Integer.reverseBytes(in.readInt());
            if (version < 2 || version > 3) {
                throw new IOException("is GGUF version " + version + "; versions 2 and 3 are supported");
            }
            in.readLong(); // tensor count
            long keys = Long.reverseBytes(in.readLong());
            if (keys < 0 || keys > MAX_KEYS) {
                throw new IOException("claims " + keys + " metadata entries");
            }
            String architecture = null;
            String name = null;
            long contextLength = 0;
            boolean template = false;
            java.util.Map<String, Long> lengths = new java.util.HashMap<>();
            for (long i = 0; i < keys; i++) {
                String key = string(in);
                int type = Integer.reverseBytes(in.readInt());
                if (type == STRING && (key.equals("general.architecture") || key.equals("general.name"))) {
                    String value = string(in);
                    if (key.equals("general.architecture")) {
                        architecture = value;
                    } else {
                        name = value;
                    }
                } else if (key.endsWith(".context_length") && (type == 4 || type == 5 || type == 10 || type == 11)) {
                    lengths.put(
                            key,
                            type >= 10
                                    ? Long.reverseBytes(in.readLong())
                                    : Integer.toUnsignedLong(Integer.reverseBytes(in.readInt())));
                } else {
                    if (key.equals("tokenizer.chat_template")) {
                        template = true;
                    }
                    skip(in, type, 0);
                }
            }
            if (architecture == null) {
                throw new IOException("has no general.architecture");
            }
            Long trained = lengths.get(architecture + ".context_length");
            contextLength = trained == null ? 0 : trained;
            return new GgufHeader(
                    architecture, name, (int) Math.min(Integer.MAX_VALUE, Math.max(0, contextLength)), template);
        } catch (EOFException e) {
            throw new IOException("ends inside its metadata (a truncated or damaged GGUF file)", e);
        }
    }

    private static String string(DataInputStream in) throws IOException {
        long length = Long.reverseBytes(in.readLong());
        if (length < 0 || length > MAX_STRING) {
            throw new IOException("has a metadata string of " + length + " bytes");
        }
        byte[] bytes = new byte[(int) length];
        in.readFully(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static void skip(DataInputStream in, int type, int depth) throws IOException {
        switch (type) {
            case 0, 1, 7 -> in.skipNBytes(1);
            case 2, 3 -> in.skipNBytes(2);
            case 4, 5, 6 -> in.skipNBytes(4);
            case 10, 11, 12 -> in.skipNBytes(8);
            case STRING -> {
                long length = Long.reverseBytes(in.readLong());
                if (length < 0 || length > MAX_STRING) {
                    throw new IOException("has a metadata string of " + length + " bytes");
                }
                in.skipNBytes(length);
            }
            case ARRAY -> {
                if (depth > 0) {
                    throw new IOException("has nested metadata arrays");
                }
                int element = Integer.reverseBytes(in.readInt());
                long count = Long.reverseBytes(in.readLong());
                if (count < 0 || count > (1L << 26)) {
                    throw new IOException("has a metadata array of " + count + " elements");
                }
                for (long i = 0; i < count; i++) {
                    skip(in, element, depth + 1);
                }
            }
            default -> throw new IOException("has a metadata value of unknown type " + type);
        }
    }
}
