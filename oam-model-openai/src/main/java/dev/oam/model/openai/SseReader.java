package dev.oam.model.openai;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.jspecify.annotations.Nullable;

/**
 * Reads server-sent events from a byte stream. Lines end in LF, CRLF or CR (even when a CRLF is split between two
 * reads); lines are decoded as UTF-8 only once complete, so a character split between two network packets arrives
 * whole. Comments ({@code :}) and unknown fields are skipped.
 */
final class SseReader {
    /** One event: its {@code event} name ({@code "message"} by default) and its data lines joined with LF. */
    record Event(String name, String data) {}

    /** Longest line accepted (a server gone wrong must not exhaust memory). */
    static final int MAX_LINE = 16 * 1024 * 1024;

    private final InputStream in;
    private final byte[] buffer = new byte[8192];
    private int position;
    private int limit;
    private boolean skipLineFeed;
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();
    private boolean ended;

    SseReader(InputStream in) {
        this.in = in;
    }

    /** The next event with data, or {@code null} at the end of the stream. */
    @Nullable
    Event next() throws IOException {
        StringBuilder data = null;
        String name = "message";
        while (true) {
            String text = readLine();
            if (text == null) {
                // A last event without its blank line still counts: some servers close right after it.
                return data == null ? null : new Event(name, data.toString());
            }
            if (text.isEmpty()) {
                if (data != null) {
                    return new Event(name, data.toString());
                }
                name = "message";
                continue;
            }
            if (text.charAt(0) == ':') {
                continue;
            }
            int colon = text.indexOf(':');
            String field = colon < 0 ? text : text.substring(0, colon);
            String value = colon < 0 ? "" : text.substring(colon + 1);
            if (value.startsWith(" ")) {
                value = value.substring(1);
            }
            switch (field) {
                case "data" -> {
                    if (data == null) {
                        data = new StringBuilder(value);
                    } else {
                        data.append('\n').append(value);
                    }
                }
                case "event" -> name = value;
                default -> {
                    // id, retry and unknown fields mean nothing here
                }
            }
        }
    }

    private @Nullable String readLine() throws IOException {
        if (ended) {
            return null;
        }
        line.reset();
        while (true) {
            if (position == limit) {
                limit = in.read(buffer);
                position = 0;
                if (limit <= 0) {
                    limit = 0;
                    ended = true;
                    return line.size() == 0 ? null : line.toString(StandardCharsets.UTF_8);
                }
            }
            if (skipLineFeed) {
                skipLineFeed = false;
                if (buffer[position] == '\n') {
                    position++;
                    continue;
                }
            }
            int start = position;
            while (position < limit) {
                byte b = buffer[position];
                if (b == '\n' || b == '\r') {
                    line.write(buffer, start, position - start);
                    position++;
                    skipLineFeed = b == '\r';
                    return line.toString(StandardCharsets.UTF_8);
                }
                position++;
            }
            line.write(buffer, start, position - start);
            if (line.size() > MAX_LINE) {
                throw new IOException("a server-sent event line is longer than " + MAX_LINE + " bytes");
            }
        }
    }
}
