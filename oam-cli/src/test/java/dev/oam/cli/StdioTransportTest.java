package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.MessageSink;
import dev.oam.bridge.transport.LineInput;
import dev.oam.bridge.transport.StreamSink;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Which thread answers what {@link StdioTransport#pump} reads (latency without losing batching). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StdioTransportTest {
    /** A sink that takes every line without blocking, as an empty pipe would, and records who delivered each. */
    private static final class RecordingPipe implements MessageSink, StreamSink {
        private final List<String> lines = new ArrayList<>(); // guarded by this
        private final List<String> threads = new ArrayList<>(); // guarded by this

        @Override
        public synchronized void send(String line) {
            lines.add(line);
            threads.add(Thread.currentThread().getName());
        }

        @Override
        public void flush() {}

        volatile LineInput input = LineInput.NONE;

        @Override
        public void connect(LineInput input) {
            this.input = input;
        }

        @Override
        public boolean takesWithoutBlocking(String line) {
            return true;
        }

        @Override
        public boolean buffers(String line) {
            return true;
        }

        synchronized List<String> lines() {
            return List.copyOf(lines);
        }

        synchronized List<String> threads() {
            return List.copyOf(threads);
        }
    }

    private static String ping(int id) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"ping\"}\n";
    }

    /** Pumps {@code input} (read in one chunk) on a thread named oam-stdin, then closes the engine. */
    private static RecordingPipe pump(String input) throws InterruptedException {
        RecordingPipe sink = new RecordingPipe();
        BridgeEngine engine = BridgeEngine.withSink(BridgeConfiguration.defaults(), sink);
        Thread reader = Thread.ofPlatform().name("oam-stdin").start(() -> {
            try {
                StdioTransport.pump(
                        new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), engine, sink.input);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        reader.join();
        engine.close(); // delivers what is queued
        return sink;
    }

    @Test
    void aLoneRequestIsAnsweredByTheInputThreadItself() throws Exception {
        RecordingPipe sink = pump(ping(1));
        assertThat(sink.lines()).containsExactly("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}");
        assertThat(sink.threads()).containsExactly("oam-stdin");
    }

    @Test
    void requestsWithMoreInputBehindThemAreAnsweredIntoTheBufferByTheInputThreadToo() throws Exception {
        RecordingPipe sink = pump(ping(1) + ping(2) + ping(3));
        assertThat(sink.lines())
                .containsExactly(
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
                        "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}",
                        "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}");
        // In the burst the input thread buffers the answers (the sink takes them without writing); the last line's
        // answer goes out with them in one flush. No hand-off to the writer thread.
        assertThat(sink.threads()).containsOnly("oam-stdin");
    }

    /**
     * Input as a client writes it: {@code chunk} is there at once (one read returns it, and {@code available()} counts
     * what is left of it), then nothing more until {@link #end} (a read waits, as on a pipe).
     */
    private static final class ClientInput extends InputStream {
        private final byte[] chunk;
        private int position;
        private final CountDownLatch ended = new CountDownLatch(1);
        final CountDownLatch waiting = new CountDownLatch(1); // a read found nothing there and waits

        ClientInput(String chunk) {
            this.chunk = chunk.getBytes(StandardCharsets.UTF_8);
        }

        void end() {
            ended.countDown();
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public synchronized int read(byte[] buffer, int offset, int length) throws IOException {
            if (position < chunk.length) {
                int n = Math.min(length, chunk.length - position);
                System.arraycopy(chunk, position, buffer, offset, n);
                position += n;
                return n;
            }
            waiting.countDown();
            try {
                ended.await();
            } catch (InterruptedException e) {
                throw new IOException(e);
            }
            return -1;
        }

        @Override
        public synchronized int available() {
            return chunk.length - position;
        }
    }

    /** Counts the writes that reach the descriptor's side of the real stdio sink; counts down once n lines arrived. */
    private static final class CountingOut extends OutputStream {
        private final StringBuilder text = new StringBuilder(); // guarded by this
        private int writes; // guarded by this
        private final int expectedLines;
        final CountDownLatch arrived = new CountDownLatch(1);

        CountingOut(int expectedLines) {
            this.expectedLines = expectedLines;
        }

        @Override
        public void write(int b) {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public synchronized void write(byte[] bytes, int offset, int length) {
            writes++;
            text.append(new String(bytes, offset, length, StandardCharsets.UTF_8));
            if (text.chars().filter(c -> c == '\n').count() >= expectedLines) {
                arrived.countDown();
            }
        }

        synchronized int writes() {
            return writes;
        }

        synchronized List<String> lines() {
            return text.isEmpty() ? List.of() : List.of(text.toString().split("\n"));
        }
    }

    private static String answer(int id) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{}}";
    }

    /** Pumps {@code input} through the real stdio sink into {@code out} on a thread named oam-stdin. */
    private static Thread pumpInto(ClientInput input, BridgeEngine engine, LineInput lines) {
        return Thread.ofPlatform().name("oam-stdin").start(() -> {
            try {
                StdioTransport.pump(input, engine, lines);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    @Test
    void aBurstOfPipelinedRequestsIsAnsweredInOneWriteOnceTheInputRunsDry() throws Exception {
        int requests = 50;
        StringBuilder burst = new StringBuilder();
        List<String> expected = new ArrayList<>();
        for (int id = 1; id <= requests; id++) {
            burst.append(ping(id));
            expected.add(answer(id));
        }
        ClientInput input = new ClientInput(burst.toString());
        CountingOut out = new CountingOut(requests);
        StdioTransport.Sink sink = StdioTransport.sink(out);
        BridgeEngine engine = BridgeEngine.withSink(BridgeConfiguration.defaults(), sink);
        Thread reader = pumpInto(input, engine, sink.input());
        // Waits for the answers, not for the end of input: they must not wait for the client's next line.
        assertThat(out.arrived.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(out.lines()).containsExactlyElementsOf(expected);
        assertThat(out.writes()).as("writes for %d answers", requests).isEqualTo(1);
        input.end();
        reader.join();
        engine.close();
    }

    @Test
    void aLoneRequestIsWrittenWhileTheInputThreadWaitsForMore() throws Exception {
        ClientInput input = new ClientInput(ping(7));
        CountingOut out = new CountingOut(1);
        StdioTransport.Sink sink = StdioTransport.sink(out);
        BridgeEngine engine = BridgeEngine.withSink(BridgeConfiguration.defaults(), sink);
        Thread reader = pumpInto(input, engine, sink.input());
        assertThat(out.arrived.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(out.lines()).containsExactly(answer(7));
        input.end();
        reader.join();
        engine.close();
    }

    @Test
    void answersHeldInABurstAreWrittenBeforeTheInputThreadWaitsForTheRestOfAnIncompleteLine() throws Exception {
        // Three requests and the first half of a fourth: after them the read waits, so the burst has ended there.
        ClientInput input = new ClientInput(ping(1) + ping(2) + ping(3) + "{\"jsonrpc\":\"2.0\",");
        CountingOut out = new CountingOut(3);
        StdioTransport.Sink sink = StdioTransport.sink(out);
        BridgeEngine engine = BridgeEngine.withSink(BridgeConfiguration.defaults(), sink);
        Thread reader = pumpInto(input, engine, sink.input());
        assertThat(input.waiting.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(out.arrived.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(out.lines()).containsExactly(answer(1), answer(2), answer(3));
        assertThat(out.writes()).isEqualTo(1);
        input.end();
        reader.join();
        engine.close();
    }
}
