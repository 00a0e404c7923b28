package dev.oam.cli;

import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.MessageSink;
import dev.oam.bridge.internal.TransportAccess;
import dev.oam.core.Log;
import dev.oam.core.internal.DebugCounters;
import dev.oam.core.os.Posix;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
        return new Sink(out, -1);
    }

    /**
     * Like {@link #sink(OutputStream)}, where {@code out} writes to descriptor {@code fd} (unbuffered; this sink is
     * the only buffer in between, of at most {@link #SINK_BUFFER} bytes). When {@code fd} is a pipe, the sink can tell
     * a line that fits without blocking ({@link MessageSink#takesWithoutBlocking}), so the input thread writes its own
     * answers.
     */
    public static MessageSink sink(OutputStream out, int fd) {
        return new Sink(out, isPipe(fd) && Posix.isAvailable() ? fd : -1);
    }

    /** The buffer {@code oam stdio} puts between the sink and descriptor. */
    static final int SINK_BUFFER = 64 * 1024;

    /**
     * PIPE_BUF on Linux, and the least a pipe holds (one page): this many bytes written to an empty pipe never block.
     */
    private static final int SURE_ROOM = 4096;

    private static boolean isPipe(int fd) {
        if (fd < 0) {
            return false;
        }
        try {
            return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd)).toString().startsWith("pipe:");
        } catch (IOException | RuntimeException e) {
            return false; // not Linux, or no /proc
        }
    }

    /** Called by one thread at a time (the engine's delivering thread), so its fields need no lock. */
    private static final class Sink implements MessageSink {
        private final OutputStream out;
        private int fd; // a pipe we can ask how much is unread, or -1
        private long buffered; // bytes sent since the last flush
        private boolean pipeEmpty; // the pipe was empty when last asked, and nothing was written to it since

        Sink(OutputStream out, int fd) {
            this.out = out;
            this.fd = fd;
        }

        @Override
        public void send(String line) throws IOException {
            byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
            out.write(bytes);
            out.write('\n');
            buffered += bytes.length + 1;
            if (buffered > SINK_BUFFER) {
                pipeEmpty = false; // the buffer wrote through
            }
        }

        @Override
        public void flush() throws IOException {
            out.flush();
            if (buffered > 0) {
                pipeEmpty = false;
            }
            buffered = 0;
        }

        @Override
        public boolean allowsCallerDelivery() {
            return true; // a pipe does not care which thread writes
        }

        @Override
        public boolean takesWithoutBlocking(String line) {
            // An upper bound of the UTF-8 size, without encoding: at most 3 bytes per char, and the newline.
            if (fd < 0 || buffered + 3L * line.length() + 1 > SURE_ROOM) {
                if (DebugCounters.ENABLED) {
                    DebugCounters.count(fd < 0 ? "stdout.refused.notAPipe" : "stdout.refused.tooLong");
                }
                return false;
            }
            if (!pipeEmpty) {
                try {
                    pipeEmpty = Posix.bytesUnread(fd) == 0;
                } catch (IOException | RuntimeException e) {
                    Log.debug("cannot ask the output pipe how much is unread (" + e + "); the writer thread writes");
                    fd = -1;
                    return false;
                }
            }
            if (DebugCounters.ENABLED && !pipeEmpty) {
                DebugCounters.count("stdout.refused.unread");
            }
            return pipeEmpty;
        }
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
        TransportAccess.startReading(engine);
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
                    // The last line there is (nothing after it, nothing more to read): the input thread may write its
                    // answer itself, as it would wait for input next. With more input there, the writer batches.
                    boolean drained = i + 1 == end && available(in) == 0;
                    if (drained) {
                        TransportAccess.inputDrained(engine, true);
                    }
                    try {
                        if (discarding) {
                            discarding = false;
                            TransportAccess.rejectLine(engine, tooLong());
                        } else {
                            handle(engine, buffer, start, i);
                        }
                    } finally {
                        if (drained) {
                            TransportAccess.inputDrained(engine, false);
                        }
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

    /** The bytes readable without blocking, or -1 when the stream cannot tell. */
    private static int available(InputStream in) {
        try {
            return in.available();
        } catch (IOException e) {
            return -1;
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
