package dev.oam.model.llama.gguf;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The little-endian primitives of a GGUF header, read through one buffer and bounded by the file's size and
 * {@link GgufFile#MAX_HEADER_BYTES}; every failure names the file.
 */
final class GgufReader {
    private final Path path;
    private final FileChannel channel;
    private final long size;
    private final ByteBuffer buffer = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
    private long bufferStart; // file position of buffer[0]

    GgufReader(Path path, FileChannel channel) throws IOException {
        this.path = path;
        this.channel = channel;
        this.size = channel.size();
        buffer.limit(0);
    }

    /** The file's size in bytes. */
    long size() {
        return size;
    }

    /** Reads the file's first {@code into.length} bytes, which the caller knows are present. */
    void readFirst(byte[] into) throws IOException, GgufException {
        fill(into.length);
        buffer.get(into);
    }

    long position() {
        return bufferStart + buffer.position();
    }

    /** Bytes left for the header: to the end of the file, or to {@link GgufFile#MAX_HEADER_BYTES}. */
    long remaining() {
        return Math.min(size, GgufFile.MAX_HEADER_BYTES) - position();
    }

    /**
     * Checks that {@code count} (the u64 just read) items of at least {@code minBytes} each can fit in what remains, so
     * nothing is allocated for a count a corrupt file made up.
     */
    long count(long count, int minBytes, String what) throws GgufException {
        long remaining = remaining();
        if (count < 0 || count > remaining / minBytes || count > Integer.MAX_VALUE - 8) {
            throw corrupt("it claims " + Long.toUnsignedString(count) + " " + what + " at byte " + (position() - 8)
                    + ", more than its remaining " + remaining + " bytes can hold");
        }
        return count;
    }

    String string(String what) throws IOException, GgufException {
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

    int u8(String what) throws IOException, GgufException {
        fill(1, what);
        return buffer.get();
    }

    int u16(String what) throws IOException, GgufException {
        fill(2, what);
        return buffer.getShort();
    }

    long u32(String what) throws IOException, GgufException {
        fill(4, what);
        return buffer.getInt() & 0xFFFF_FFFFL;
    }

    long u64(String what) throws IOException, GgufException {
        fill(8, what);
        return buffer.getLong();
    }

    void read(byte[] into, String what) throws IOException, GgufException {
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
        if (position() + bytes > GgufFile.MAX_HEADER_BYTES) {
            throw corrupt("its metadata goes on past " + (GgufFile.MAX_HEADER_BYTES >> 20)
                    + " MiB, more than any real model");
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

    GgufException corrupt(String problem) {
        return new GgufException("Model file " + path + " is truncated or corrupt: " + problem);
    }
}
