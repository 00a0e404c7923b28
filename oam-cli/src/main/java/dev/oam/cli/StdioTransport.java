package dev.oam.cli;

import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.MessageSink;
import dev.oam.bridge.transport.DeliveryListener;
import dev.oam.bridge.transport.LineInput;
import dev.oam.bridge.transport.StreamSink;
import dev.oam.core.Log;
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
import org.jspecify.annotations.Nullable;

/**
 * Newline-delimited JSON over a byte stream pair. Lines are handed to the engine as raw bytes (so invalid UTF-8 is a
 * parse error, not a crash); a line longer than {@link #MAX_LINE_BYTES} is dropped with an error response and reading
 * goes on.
 */
public final class StdioTransport {
    /** Longest line accepted. */
    public static final int MAX_LINE_BYTES = 64 * 1024 * 1024;

    private StdioTransport() {}

    /** A sink that writes each message and a newline into its buffer; flushed when the engine runs dry. */
    public static Sink sink(OutputStream out) {
        return new Sink(out, -1, DeliveryListener.NONE);
    }

    /**
     * Like {@link #sink(OutputStream)}, where {@code out} writes to descriptor {@code fd} unbuffered (this sink's
     * buffer of {@link #SINK_BUFFER} bytes is the only one in between). When {@code fd} is a pipe, the sink can tell a
     * line that fits without blocking ({@link StreamSink#takesWithoutBlocking}), so the input thread writes its own
     * answers. {@code listener} is told which path each line and tool reply took ({@link StreamSink#deliveryListener}).
     */
    public static Sink sink(OutputStream out, int fd, DeliveryListener listener) {
        return new Sink(out, isPipe(fd) && Posix.isAvailable() ? fd : -1, listener);
    }

    /** The sink's buffer: lines are written to the descriptor when it is full or flushed. */
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
            return Files.readSymbolicLink(Path.of("/proc/self/fd/" + fd))
                    .toString()
                    .startsWith("pipe:");
        } catch (IOException | RuntimeException e) {
            return false; // not Linux, or no /proc
        }
    }

    /**
     * The stdio sink; {@link #input()} is where {@link #pump} reports its input to the engine writing here. Called by
     * one thread at a time (the engine's delivering thread), so its fields need no lock.
     */
    public static final class Sink implements MessageSink, StreamSink {
        private final OutputStream out;
        private final DeliveryListener listener;
        private final byte[] buffer = new byte[SINK_BUFFER];
        private int count; // bytes in the buffer
        private int fd; // a pipe we can ask how much is unread, or -1
        private long sinceFlush; // bytes sent since the last flush (in the buffer or written through)
        private boolean pipeEmpty; // the pipe was empty when last asked, and nothing was written to it since
        private @Nullable String encodedLine; // the line buffers() encoded last, and its bytes, for send()
        private byte @Nullable [] encoded;
        private volatile LineInput input = LineInput.NONE;

        Sink(OutputStream out, int fd, DeliveryListener listener) {
            this.out = out;
            this.fd = fd;
            this.listener = listener;
        }

        private byte[] encode(String line) {
            if (line == encodedLine && encoded != null) {
                return encoded;
            }
            byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
            encodedLine = line;
            encoded = bytes;
            return bytes;
        }

        @Override
        public void send(String line) throws IOException {
            byte[] bytes = encode(line);
            encodedLine = null;
            encoded = null;
            int length = bytes.length + 1;
            if (count + length > buffer.length) {
                writeBuffer();
            }
            if (length > buffer.length) {
                out.write(bytes);
                out.write('\n');
                pipeEmpty = false;
            } else {
                System.arraycopy(bytes, 0, buffer, count, bytes.length);
                count += bytes.length;
                buffer[count++] = '\n';
            }
            sinceFlush += length;
        }

        private void writeBuffer() throws IOException {
            if (count > 0) {
                pipeEmpty = false;
                int n = count;
                count = 0;
                out.write(buffer, 0, n);
            }
        }

        @Override
        public void flush() throws IOException {
            writeBuffer();
            out.flush();
            sinceFlush = 0;
        }

        @Override
        public void connect(LineInput input) {
            this.input = input;
        }

        @Override
        public DeliveryListener deliveryListener() {
            return listener;
        }

        /** The input side of the engine writing to this sink ({@link LineInput#NONE} before one is made). */
        public LineInput input() {
            return input;
        }

        @Override
        public boolean buffers(String line) {
            // At most 3 UTF-8 bytes per char: most lines are decided without encoding them.
            if (count + 3L * line.length() + 1 <= buffer.length) {
                return true;
            }
            return count + encode(line).length + 1 <= buffer.length;
        }

        @Override
        public boolean takesWithoutBlocking(String line) {
            // An upper bound of the UTF-8 size, without encoding: at most 3 bytes per char, and the newline.
            if (fd < 0 || sinceFlush + 3L * line.length() + 1 > SURE_ROOM) {
                listener.sinkRefused(fd < 0 ? DeliveryListener.Refused.NOT_A_PIPE : DeliveryListener.Refused.TOO_LONG);
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
            if (!pipeEmpty) {
                listener.sinkRefused(DeliveryListener.Refused.UNREAD);
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

    /** {@link #pump(InputStream, BridgeEngine, LineInput)} for an engine that is not told about its input. */
    public static void pump(InputStream in, BridgeEngine engine) throws IOException {
        pump(in, engine, LineInput.NONE);
    }

    /**
     * Reads lines until end of input, handing each to the engine in order. It tells the engine's {@code input} which
     * lines have more input behind them (an input burst: their answers are buffered, not flushed) and which is the last
     * there is (its answer may be written by this thread at once, and what the burst held goes out with it); before a
     * read that may wait, the burst has ended, so nothing is held while this thread waits for input.
     */
    public static void pump(InputStream in, BridgeEngine engine, LineInput input) throws IOException {
        boolean[] ahead = {false}; // as told to the engine: the line being handled has more input behind it
        try {
            pumpLines(in, engine, input, ahead);
        } finally {
            endBurst(input, ahead); // after a failure in a burst too: nothing may stay held
        }
    }

    /** Tells the engine the input burst is over, if it was told one began: what the burst held goes out now. */
    private static void endBurst(LineInput input, boolean[] ahead) {
        if (ahead[0]) {
            ahead[0] = false;
            input.burst(false);
        }
    }

    /** {@link #pump}'s loop; {@code ahead[0]} is what the engine was last told about the line it handles. */
    private static void pumpLines(InputStream in, BridgeEngine engine, LineInput input, boolean[] ahead)
            throws IOException {
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
            if (ahead[0] && available(in) <= 0) {
                // Only part of a line is left and nothing more is readable: the read below may wait, so the burst is
                // over and the answers it held go out now.
                endBurst(input, ahead);
            }
            int read = in.read(buffer, end, buffer.length - end);
            if (read < 0) {
                endBurst(input, ahead);
                if (discarding) {
                    engine.rejectLine(tooLong());
                } else if (end > start) {
                    handle(engine, buffer, start, end);
                }
                return;
            }
            end += read;
            for (int i = scan; i < end; i++) {
                if (buffer[i] == '\n') {
                    // The last line there is (nothing after it, nothing more to read): the input thread may write its
                    // answer itself, as it would wait for input next. With more input there, answers are buffered and
                    // flushed when the input runs dry (one write for the burst, as the echo server does).
                    boolean drained = i + 1 == end && available(in) == 0;
                    if (drained) {
                        input.lastLine(true);
                    }
                    if (ahead[0] == drained) {
                        ahead[0] = !drained;
                        input.burst(!drained);
                    }
                    try {
                        if (discarding) {
                            discarding = false;
                            engine.rejectLine(tooLong());
                        } else {
                            handle(engine, buffer, start, i);
                        }
                    } finally {
                        if (drained) {
                            input.lastLine(false);
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
