package dev.oam.bench;

import java.nio.charset.StandardCharsets;

/**
 * Receives the lines the other side sent, one call per line, on the channel's delivery thread. {@code nanos} is
 * {@link System#nanoTime()} taken when the line arrived.
 */
interface LineHandler {
    void onLine(String line, long nanos);

    /** Byte form used by stdio channels; decodes by default. Counters override it to skip decoding. */
    default void onLine(byte[] buffer, int offset, int length, long nanos) {
        onLine(new String(buffer, offset, length, StandardCharsets.UTF_8), nanos);
    }

    LineHandler IGNORE = (line, nanos) -> {};
}
