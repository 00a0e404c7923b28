package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.MessageSink;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Which thread answers what {@link StdioTransport#pump} reads (issue 12, point 6: latency without losing batching). */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StdioTransportTest {
    /** A sink that takes every line without blocking, as an empty pipe would, and records who delivered each. */
    private static final class RecordingPipe implements MessageSink {
        private final List<String> lines = new ArrayList<>(); // guarded by this
        private final List<String> threads = new ArrayList<>(); // guarded by this

        @Override
        public synchronized void send(String line) {
            lines.add(line);
            threads.add(Thread.currentThread().getName());
        }

        @Override
        public void flush() {}

        @Override
        public boolean allowsCallerDelivery() {
            return true;
        }

        @Override
        public boolean takesWithoutBlocking(String line) {
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
                StdioTransport.pump(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), engine);
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
    void requestsWithMoreInputBehindThemAreAnsweredByTheWriterSoAnswersBatch() throws Exception {
        RecordingPipe sink = pump(ping(1) + ping(2) + ping(3));
        assertThat(sink.lines()).containsExactly("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}",
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}", "{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}");
        // Only the last line there is may be answered by the input thread, and only if the writer is done by then.
        assertThat(sink.threads().subList(0, 2)).containsOnly("oam-writer");
        assertThat(sink.threads().get(2)).isIn("oam-stdin", "oam-writer");
    }
}
