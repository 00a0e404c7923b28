package dev.oam.model.llama.engine;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Joins token pieces (bytes) into text deltas that never split a UTF-8 sequence: the bytes of an unfinished character
 * wait for the next piece. Invalid bytes decode as U+FFFD once they cannot start or continue a character. Not
 * thread-safe.
 */
public final class Utf8Pieces {
    private final ByteArrayOutputStream pending = new ByteArrayOutputStream();

    /** Adds a piece; returns the text now complete (possibly empty). */
    public String add(byte[] piece) {
        pending.write(piece, 0, piece.length);
        byte[] bytes = pending.toByteArray();
        int complete = completeLength(bytes);
        pending.reset();
        pending.write(bytes, complete, bytes.length - complete);
        return decode(bytes, 0, complete);
    }

    /** What is still held (an unfinished character at the end of generation), decoded with replacements. */
    public String finish() {
        byte[] bytes = pending.toByteArray();
        pending.reset();
        return decode(bytes, 0, bytes.length);
    }

    /** Bytes from the start that hold no unfinished trailing character. */
    static int completeLength(byte[] bytes) {
        int n = bytes.length;
        // A character is at most 4 bytes: look back at most 3 for the lead byte of an unfinished one.
        for (int back = 1; back <= Math.min(3, n); back++) {
            int b = bytes[n - back] & 0xFF;
            if ((b & 0xC0) == 0x80) {
                continue; // continuation byte: keep looking for its lead
            }
            int need = b >= 0xC2 && b < 0xE0 ? 2 : b >= 0xE0 && b < 0xF0 ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 1;
            return need > back ? n - back : n;
        }
        return n;
    }

    /** {@code bytes} as UTF-8, malformed sequences left out. */
    static String decode(byte[] bytes, int offset, int length) {
        CharsetDecoder decoder = StandardCharsets.UTF_8
                .newDecoder()
                .onMalformedInput(CodingErrorAction.IGNORE)
                .onUnmappableCharacter(CodingErrorAction.IGNORE);
        try {
            String text = decoder.decode(ByteBuffer.wrap(bytes, offset, length)).toString();
            return text.indexOf('\uFFFD') < 0
                    ? text
                    : text.replace("\uFFFD", ""); // a vocabulary may hold it as a token
        } catch (CharacterCodingException e) {
            throw new IllegalStateException("a decoder that ignores errors threw", e);
        }
    }
}
