package dev.oam.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.bridge.transport.DeliveryListener;
import dev.oam.bridge.transport.LineInput;
import dev.oam.bridge.transport.StreamSink;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OutboundTest {
    /** Records each line with the thread that delivered it, and whether two threads were ever inside at once. */
    static final class RecordingSink implements MessageSink, StreamSink {
        final List<String> lines = new ArrayList<>(); // guarded by this
        final List<String> threads = new ArrayList<>(); // guarded by this
        final List<String> flushes =
                new ArrayList<>(); // guarded by this: the thread that flushed, and how many lines were sent by then
        final AtomicInteger inside = new AtomicInteger();
        volatile boolean overlapped;
        volatile boolean takes; // what takesWithoutBlocking answers
        volatile boolean buffering; // what buffers answers
        volatile int flushedAll = -1; // flushing with this many lines sent counts down allFlushed
        final CountDownLatch allFlushed = new CountDownLatch(1);
        final CountDownLatch flushed = new CountDownLatch(1); // any flush
        volatile Runnable whileAsked = () -> {}; // runs inside takesWithoutBlocking
        final AtomicInteger asked = new AtomicInteger(); // how often takesWithoutBlocking was called
        volatile Runnable whileSending = () -> {}; // runs inside send, once

        @Override
        public void send(String line) {
            if (inside.incrementAndGet() > 1) {
                overlapped = true;
            }
            Runnable hook = whileSending;
            whileSending = () -> {};
            hook.run();
            synchronized (this) {
                lines.add(line);
                threads.add(
                        Thread.currentThread().isVirtual()
                                ? "virtual"
                                : Thread.currentThread().getName());
            }
            inside.decrementAndGet();
        }

        @Override
        public void connect(LineInput input) {}

        @Override
        public boolean takesWithoutBlocking(String line) {
            asked.incrementAndGet();
            whileAsked.run();
            return takes;
        }

        @Override
        public boolean buffers(String line) {
            return buffering;
        }

        @Override
        public synchronized void flush() {
            flushes.add(Thread.currentThread().getName() + " after " + lines.size());
            flushed.countDown();
            if (lines.size() == flushedAll) {
                allFlushed.countDown();
            }
        }

        synchronized List<String> flushes() {
            return List.copyOf(flushes);
        }

        synchronized List<String> lines() {
            return List.copyOf(lines);
        }

        synchronized List<String> threads() {
            return List.copyOf(threads);
        }
    }

    /** An outbound queue whose dispatcher is the thread named oam-stdin, as on stdio. */
    private static Outbound outbound(MessageSink sink) {
        return new Outbound(
                sink,
                DeliveryListener.NONE,
                () -> Thread.currentThread().getName().equals("oam-stdin"));
    }

    /** {@code sink} as a host callback: not a stream sink, so only the writer thread delivers. */
    private static MessageSink callback(RecordingSink sink) {
        return new MessageSink() {
            @Override
            public void send(String line) {
                sink.send(line);
            }

            @Override
            public void flush() {
                sink.flush();
            }
        };
    }

    private static void awaitDelivered(Outbound outbound) throws InterruptedException {
        CountDownLatch delivered = new CountDownLatch(1);
        outbound.after(delivered::countDown);
        assertThat(delivered.await(30, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aWorkerOnAVirtualThreadDeliversItsOwnMessageWhileTheWriterIsIdle() throws Exception {
        RecordingSink sink = new RecordingSink();
        Outbound outbound = outbound(sink);
        Thread worker =
                Thread.ofVirtual().start(() -> outbound.send(Json.object().put("n", 1)));
        worker.join();
        // Delivered before send returned, on the worker's own thread: no hand-off to oam-writer.
        assertThat(sink.lines()).containsExactly("{\"n\":1}");
        assertThat(sink.threads()).containsExactly("virtual");
        outbound.close(1000);
    }

    @Test
    void aWorkerAlsoDeliversTheLinesQueuedWhileItDeliveredInsteadOfWakingTheWriter() throws Exception {
        RecordingSink sink = new RecordingSink();
        Outbound outbound = outbound(sink);
        // While the worker is inside the sink, another producer's line is queued (the worker counts as delivering).
        sink.whileSending = () -> outbound.send(Json.object().put("n", 2));
        Thread worker = Thread.ofVirtual()
                .name("worker")
                .start(() -> outbound.send(Json.object().put("n", 1)));
        worker.join();
        // Both delivered before send returned, on the worker's thread, each batch flushed.
        assertThat(sink.lines()).containsExactly("{\"n\":1}", "{\"n\":2}");
        assertThat(sink.threads()).containsExactly("virtual", "virtual");
        assertThat(sink.flushes()).containsExactly("worker after 1", "worker after 2");
        outbound.close(1000);
    }

    @Test
    void platformThreadsAndSinksThatDoNotAllowItHandTheMessageToTheWriter() throws Exception {
        RecordingSink stdio = new RecordingSink();
        Outbound outbound = outbound(stdio);
        outbound.send(Json.object().put("n", 1)); // a platform thread, like the dispatcher
        awaitDelivered(outbound);
        assertThat(stdio.threads()).containsExactly("oam-writer");
        outbound.close(1000);

        RecordingSink callback = new RecordingSink();
        Outbound host = outbound(callback(callback));
        Thread worker = Thread.ofVirtual().start(() -> host.send(Json.object().put("n", 2)));
        worker.join();
        awaitDelivered(host);
        assertThat(callback.threads()).containsExactly("oam-writer");
        host.close(1000);
    }

    @Test
    void concurrentProducersKeepTheirOrderEachMessageArrivesOnceAndTheSinkIsNeverEnteredTwice() throws Exception {
        RecordingSink sink = new RecordingSink();
        Outbound outbound = outbound(sink);
        int producers = 6;
        int each = 400;
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int producer = p;
            Runnable work = () -> {
                for (int i = 0; i < each; i++) {
                    if (producer == 0) {
                        outbound.send(Json.object().put("p", producer).put("i", i)); // always queued
                    } else {
                        outbound.send(Json.object().put("p", producer).put("i", i));
                    }
                }
            };
            threads.add(
                    producer % 2 == 0
                            ? Thread.ofPlatform().start(work)
                            : Thread.ofVirtual().start(work));
        }
        for (Thread thread : threads) {
            thread.join();
        }
        awaitDelivered(outbound);
        assertThat(sink.overlapped).as("two threads inside the sink at once").isFalse();
        List<String> lines = sink.lines();
        assertThat(lines).hasSize(producers * each).doesNotHaveDuplicates();
        Map<Integer, Integer> next = new HashMap<>();
        for (String line : lines) {
            var node = Json.parse(line);
            int producer = node.get("p").asInt();
            assertThat(node.get("i").asInt())
                    .as("producer %d in order", producer)
                    .isEqualTo(next.getOrDefault(producer, 0));
            next.put(producer, node.get("i").asInt() + 1);
        }
        outbound.close(1000);
    }

    @Test
    void anAfterActionRunsOnceEverythingSentBeforeItWasDelivered() throws Exception {
        RecordingSink sink = new RecordingSink();
        Outbound outbound = outbound(sink);
        List<Integer> seenByAction = new ArrayList<>();
        outbound.send(Json.object().put("n", 1));
        Thread worker =
                Thread.ofVirtual().start(() -> outbound.send(Json.object().put("n", 2)));
        worker.join();
        CountDownLatch ran = new CountDownLatch(1);
        outbound.after(() -> {
            seenByAction.add(sink.lines().size());
            ran.countDown();
        });
        assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(seenByAction).containsExactly(2);
        assertThat(sink.lines()).containsExactly("{\"n\":1}", "{\"n\":2}");
        outbound.close(1000);
    }

    @Test
    void theReaderWritesAndFlushesItsOwnMessageWhenTheSinkTakesItWithoutBlocking() throws Exception {
        RecordingSink sink = new RecordingSink();
        sink.takes = true;
        Outbound outbound = outbound(sink);
        Thread reader = Thread.ofPlatform().name("oam-stdin").start(() -> {
            outbound.lastLine(true); // it handles the last line there is
            outbound.send(Json.object().put("n", 1));
            outbound.send(Json.object().put("n", 2));
        });
        reader.join();
        // Written and flushed by the reader itself before send returned: no hand-off to oam-writer.
        assertThat(sink.lines()).containsExactly("{\"n\":1}", "{\"n\":2}");
        assertThat(sink.threads()).containsExactly("oam-stdin", "oam-stdin");
        assertThat(sink.flushes()).containsExactly("oam-stdin after 1", "oam-stdin after 2");
        outbound.close(1000);
    }

    @Test
    void whileMoreInputIsThereTheReaderHandsItsMessagesToTheWriterThoughTheSinkWouldTakeThem() throws Exception {
        RecordingSink sink = new RecordingSink();
        sink.takes = true;
        Outbound outbound = outbound(sink);
        Thread reader = Thread.ofPlatform().name("oam-stdin").start(() -> {
            outbound.lastLine(false); // more lines are buffered: answers batch on the writer
            outbound.send(Json.object().put("n", 1));
            outbound.send(Json.object().put("n", 2));
        });
        reader.join();
        awaitDelivered(outbound);
        assertThat(sink.lines()).containsExactly("{\"n\":1}", "{\"n\":2}");
        assertThat(sink.threads()).containsOnly("oam-writer");
        assertThat(sink.asked.get()).isZero(); // not even asked: the reader did not try
        outbound.close(1000);
    }

    @Test
    void whenTheSinkCannotTakeItTheReaderHandsItToTheWriterAndQueuesBehindItUntilItHandlesAnotherLastLine()
            throws Exception {
        RecordingSink sink = new RecordingSink();
        Outbound outbound = outbound(sink);
        CountDownLatch sent = new CountDownLatch(1);
        Thread reader = Thread.ofPlatform().name("oam-stdin").start(() -> {
            outbound.lastLine(true);
            outbound.send(Json.object().put("n", 1)); // refused: the writer delivers it
            sink.takes = true;
            outbound.send(Json.object().put("n", 2)); // queued behind it, though the sink would take it now
            sent.countDown();
            outbound.lastLine(false);
            outbound.lastLine(true); // the last line of its next input: it may write its message itself, after those
            outbound.send(Json.object().put("n", 3));
        });
        reader.join();
        assertThat(sent.await(30, TimeUnit.SECONDS)).isTrue();
        awaitDelivered(outbound);
        assertThat(sink.lines()).containsExactly("{\"n\":1}", "{\"n\":2}", "{\"n\":3}");
        assertThat(sink.threads().subList(0, 2)).containsExactly("oam-writer", "oam-writer");
        outbound.close(1000);
    }

    @Test
    void aWorkerMessageQueuedWhileTheReaderAsksTheSinkGoesAfterTheReadersMessage() throws Exception {
        RecordingSink sink = new RecordingSink();
        Outbound outbound = outbound(sink);
        CountDownLatch asking = new CountDownLatch(1);
        CountDownLatch workerQueued = new CountDownLatch(1);
        sink.whileAsked = () -> {
            asking.countDown();
            await(workerQueued);
        };
        Thread reader = Thread.ofPlatform().name("oam-stdin").start(() -> {
            outbound.lastLine(true);
            outbound.send(Json.object().put("from", "reader")); // the sink says no (takes is false)
        });
        assertThat(asking.await(30, TimeUnit.SECONDS)).isTrue();
        // The reader is delivering (deciding), so the worker must queue; the reader's line came first and stays first.
        Thread worker =
                Thread.ofVirtual().start(() -> outbound.send(Json.object().put("from", "worker")));
        worker.join();
        workerQueued.countDown();
        reader.join();
        awaitDelivered(outbound);
        assertThat(sink.lines()).containsExactly("{\"from\":\"reader\"}", "{\"from\":\"worker\"}");
        assertThat(sink.overlapped).isFalse();
        outbound.close(1000);
    }

    @Test
    void inAnInputBurstTheReaderBuffersItsAnswersWithoutFlushingAndFlushesThemItselfWhenTheBurstEnds()
            throws Exception {
        RecordingSink sink = new RecordingSink();
        sink.buffering = true;
        sink.takes = true; // what is held fits an empty pipe: the reader flushes it itself
        Outbound outbound = outbound(sink);
        List<List<String>> flushesInBurst = new ArrayList<>();
        Thread reader = Thread.ofPlatform().name("oam-stdin").start(() -> {
            outbound.burst(true); // more input is there behind each of these lines
            outbound.send(Json.object().put("n", 1));
            outbound.send(Json.object().put("n", 2));
            outbound.send(Json.object().put("n", 3));
            flushesInBurst.add(sink.flushes());
            outbound.burst(false); // about to wait for input
        });
        reader.join();
        // Delivered by the reader into the sink's buffer, not flushed during the burst; one flush when it ended.
        assertThat(sink.lines()).containsExactly("{\"n\":1}", "{\"n\":2}", "{\"n\":3}");
        assertThat(sink.threads()).containsOnly("oam-stdin");
        assertThat(flushesInBurst.getFirst()).isEmpty();
        assertThat(sink.flushes()).containsExactly("oam-stdin after 3");
        outbound.close(1000);
    }

    @Test
    void whenTheHeldOutputCannotBeFlushedWithoutBlockingTheWriterFlushesItOnceTheBurstEnds() throws Exception {
        RecordingSink sink = new RecordingSink();
        sink.buffering = true; // takes stays false: the pipe is not known to be empty
        Outbound outbound = outbound(sink);
        List<List<String>> flushesInBurst = new ArrayList<>();
        Thread reader = Thread.ofPlatform().name("oam-stdin").start(() -> {
            outbound.burst(true);
            outbound.send(Json.object().put("n", 1));
            outbound.send(Json.object().put("n", 2));
            flushesInBurst.add(sink.flushes());
            outbound.burst(false);
        });
        reader.join();
        assertThat(sink.flushed.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(flushesInBurst.getFirst()).isEmpty();
        assertThat(sink.threads()).containsOnly("oam-stdin");
        assertThat(sink.flushes()).containsExactly("oam-writer after 2");
        outbound.close(1000);
    }

    @Test
    void aBurstThatEndsInALastLineIsFlushedWithThatLinesAnswerInOneFlush() throws Exception {
        RecordingSink sink = new RecordingSink();
        sink.buffering = true;
        sink.takes = true;
        Outbound outbound = outbound(sink);
        Thread reader = Thread.ofPlatform().name("oam-stdin").start(() -> {
            outbound.burst(true);
            outbound.send(Json.object().put("n", 1));
            outbound.send(Json.object().put("n", 2));
            outbound.lastLine(true); // as the transport does: the last line there is, then the burst ends
            outbound.burst(false);
            outbound.send(Json.object().put("n", 3));
            outbound.lastLine(false);
        });
        reader.join();
        assertThat(sink.lines()).containsExactly("{\"n\":1}", "{\"n\":2}", "{\"n\":3}");
        assertThat(sink.threads()).containsOnly("oam-stdin");
        assertThat(sink.flushes()).containsExactly("oam-stdin after 3");
        outbound.close(1000);
    }

    @Test
    void aLineTheSinkCannotBufferInABurstGoesToTheWriterAndKeepsItsPlace() throws Exception {
        RecordingSink sink = new RecordingSink();
        sink.buffering = true;
        Outbound outbound = outbound(sink);
        sink.flushedAll = 3;
        Thread reader = Thread.ofPlatform().name("oam-stdin").start(() -> {
            outbound.burst(true);
            outbound.send(Json.object().put("n", 1));
            sink.buffering = false; // the buffer is full: writing this one may block
            outbound.send(Json.object().put("n", 2));
            sink.buffering = true;
            outbound.send(Json.object().put("n", 3)); // queued behind it or buffered after it: never before
            outbound.burst(false);
        });
        reader.join();
        assertThat(sink.allFlushed.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(sink.lines()).containsExactly("{\"n\":1}", "{\"n\":2}", "{\"n\":3}");
        assertThat(sink.threads().get(0)).isEqualTo("oam-stdin");
        assertThat(sink.threads().get(1)).isEqualTo("oam-writer");
        outbound.close(1000);
    }

    @Test
    void workersAndAReaderInBurstsKeepTheOrderEachLineArrivesOnceAndTheLastIsFlushed() throws Exception {
        RecordingSink sink = new RecordingSink();
        sink.buffering = true;
        Outbound outbound = outbound(sink);
        int workers = 3;
        int each = 400;
        int fromReader = 1200;
        sink.flushedAll = workers * each + fromReader;
        List<Thread> threads = new ArrayList<>();
        for (int p = 1; p <= workers; p++) {
            int producer = p;
            Runnable work = () -> {
                for (int i = 0; i < each; i++) {
                    if (producer == 1) {
                        outbound.send(Json.object().put("p", producer).put("i", i));
                    } else {
                        outbound.send(Json.object().put("p", producer).put("i", i));
                    }
                }
            };
            threads.add(
                    producer == 1
                            ? Thread.ofPlatform().start(work)
                            : Thread.ofVirtual().start(work));
        }
        threads.add(Thread.ofPlatform().name("oam-stdin").start(() -> {
            for (int i = 0; i < fromReader; i++) {
                // Bursts of 7 lines, the last of each handled as the last line there is.
                boolean last = i % 7 == 6;
                if (i % 7 == 0) {
                    outbound.burst(true);
                }
                if (last) {
                    outbound.lastLine(true);
                    outbound.burst(false);
                }
                sink.takes = i % 3 == 0;
                sink.buffering = i % 5 != 0;
                outbound.send(Json.object().put("p", 0).put("i", i));
                if (last) {
                    outbound.lastLine(false);
                }
            }
            outbound.burst(false);
        }));
        for (Thread thread : threads) {
            thread.join();
        }
        // Nothing is held once the reader is out of its burst: the last line is flushed without an after-action.
        assertThat(sink.allFlushed.await(30, TimeUnit.SECONDS)).isTrue();
        assertThat(sink.overlapped).as("two threads inside the sink at once").isFalse();
        List<String> lines = sink.lines();
        assertThat(lines).hasSize(workers * each + fromReader).doesNotHaveDuplicates();
        Map<Integer, Integer> next = new HashMap<>();
        for (String line : lines) {
            var node = Json.parse(line);
            int producer = node.get("p").asInt();
            assertThat(node.get("i").asInt())
                    .as("producer %d in order", producer)
                    .isEqualTo(next.getOrDefault(producer, 0));
            next.put(producer, node.get("i").asInt() + 1);
        }
        outbound.close(1000);
    }

    private static void await(CountDownLatch latch) {
        try {
            assertThat(latch.await(30, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }
}
