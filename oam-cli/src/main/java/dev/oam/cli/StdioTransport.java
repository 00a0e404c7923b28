package dev.oam.cli;

import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.MessageSink;
import dev.oam.bridge.internal.TransportAccess;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;

/**
 * Newline-delimited JSON over a byte stream pair. Lines are handed to the engine as raw bytes (so
 * invalid UTF-8 is a parse error, not a crash); a line longer than {@link #MAX_LINE_BYTES} is
 * dropped with an error response and reading goes on.
 */
public final class StdioTransport {
    /** Longest line accepted. */
    public static final int MAX_LINE_BYTES = 64 * 1024 * 1024;

    private StdioTransport() {}

    /** A sink that writes each message and a newline; flushed when the writer runs dry. */
    public static MessageSink sink(OutputStream out) {
        return new MessageSink() {
            @Override
            public void send(String line) throws IOException {
                out.write(line.getBytes(StandardCharsets.UTF_8));
                out.write('\n');
            }

            @Override
            public void flush() throws IOException {
                out.flush();
            }

            @Override
            public boolean allowsCallerDelivery() {
                return true; // a pipe does not care which thread writes
            }
        };
    }

    /** An input stream that remembers when bytes last arrived (read by another thread than the reader). */
    public static final class Activity extends FilterInputStream {
        private volatile long lastInput = System.nanoTime();

        public Activity(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            lastInput = System.nanoTime();
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            int n = super.read(buffer, offset, length);
            lastInput = System.nanoTime();
            return n;
        }

        /** Nanoseconds until the input will have been quiet for {@code quiet}; 0 or less once it has. */
        public long quietLeft(Duration quiet) {
            return lastInput + quiet.toNanos() - System.nanoTime();
        }
    }

    /** Reads lines until end of input, handing each to the engine in order. */
    public static void pump(InputStream in, BridgeEngine engine) throws IOException {
        byte[] buffer = new byte[64 * 1024];
        int start = 0;
        int end = 0;
        int scan = 0;
        boolean discarding = false;
        while (true) {
            if (end == buffer.length) {
                if (start > 0) {
                    System.arraycopy(buffer, start, buffer, 0, end - start);
                    end -= start;
                    scan -= start;
                    start = 0;
                } else if (buffer.length <= MAX_LINE_BYTES) {
                    buffer = Arrays.copyOf(buffer, Math.min(buffer.length * 2, MAX_LINE_BYTES + 1));
                } else {
                    discarding = true;
                    start = 0;
                    end = 0;
                    scan = 0;
                }
            }
            int read = in.read(buffer, end, buffer.length - end);
            if (read < 0) {
                if (discarding) {
                    TransportAccess.rejectLine(engine, tooLong());
                } else if (end > start) {
                    handle(engine, buffer, start, end);
                }
                return;
            }
            end += read;
            for (int i = scan; i < end; i++) {
                if (buffer[i] == '\n') {
                    if (discarding) {
                        discarding = false;
                        TransportAccess.rejectLine(engine, tooLong());
                    } else {
                        handle(engine, buffer, start, i);
                    }
                    start = i + 1;
                }
            }
            scan = end;
            if (start == end) {
                start = 0;
                end = 0;
                scan = 0;
            }
            if (buffer.length > 1024 * 1024 && end - start < 64 * 1024 && !discarding) {
                byte[] smaller = new byte[64 * 1024];
                System.arraycopy(buffer, start, smaller, 0, end - start);
                end -= start;
                scan = end;
                start = 0;
                buffer = smaller;
            }
        }
    }

    private static String tooLong() {
        return "The line is longer than " + (MAX_LINE_BYTES / (1024 * 1024)) + " MiB; the message was dropped.";
    }

    private static void handle(BridgeEngine engine, byte[] buffer, int from, int to) {
        int stop = to;
        if (stop > from && buffer[stop - 1] == '\r') {
            stop--;
        }
        engine.receive(buffer, from, stop - from);
    }
}
