package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.Log;
import dev.oam.core.internal.DebugCounters;
import dev.oam.core.json.Json;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The single writer: every outgoing message goes through one queue, and one thread at a time delivers, so
 * messages reach the sink one at a time in the order they were produced. Producers never block on the sink
 * (the queue is unbounded), so a client that is slow to read cannot stall the dispatcher.
 *
 * <p>The writer thread delivers what is queued. For a sink that {@linkplain MessageSink#allowsCallerDelivery()
 * allows it}, a virtual thread sending a request's own message ({@link #sendFromWorker}) delivers it itself
 * when nothing is queued and nobody is delivering: it skips the hand-off to the writer thread (one thread
 * wake-up less on a tool round trip); then it delivers the lines queued meanwhile too, once, rather than wake the
 * writer for them. Such a worker may then block on a slow client; it holds no lock while it
 * does (callers of {@code sendFromWorker} hold none, and this class releases its own before delivering), and
 * the dispatcher never waits for the client, so reading input goes on.
 *
 * <p>The thread reading input (the transport's, {@linkplain #readerThread registered}) delivers its own messages too
 * ({@link #sendFromReader}): answers of requests handled on the dispatcher, and events it sends for a turn (a tool
 * reply's {@code toolCallCompleted}). While it handles the last line of the input there is (nothing more buffered or
 * readable: {@link #readerDrained}; it would wait for input next), it writes and flushes such a message at once if
 * nothing is queued, nobody delivers and the sink {@linkplain MessageSink#takesWithoutBlocking takes the line without
 * blocking}. While it handles a line with more input behind it (an input burst: {@link #readerAhead}), it puts such a
 * message into the sink's buffer if the sink {@linkplain MessageSink#buffers buffers it without writing} (a full
 * buffer is the writer's to write out), and neither it nor the writer thread flushes during the burst (a worker
 * delivering its own line still does): when the burst ends (the last line, or a read that may wait), what is held is
 * flushed at once, by the reader if that cannot block, else by the writer. So pipelined
 * requests are answered in a few large writes, as the echo server answers them (it flushes only when no more input is
 * available), and an answer waits at most for input that was already there. Otherwise the line is queued for the
 * writer thread, which batches it with the others.
 */
final class Outbound {
    private static final Object STOP = new Object();

    private final MessageSink sink;
    private final boolean callerDelivery;
    private final Thread thread;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition ready = lock.newCondition(); // something queued (or held output to flush) and nobody delivering
    private final ArrayDeque<Object> queue = new ArrayDeque<>(); // guarded by lock: lines, after-actions, STOP
    private boolean delivering; // guarded by lock: one thread at a time uses the sink
    private boolean closed; // guarded by lock
    private volatile boolean sinkBroken;
    private @Nullable Thread deliverer; // guarded by lock: who is delivering (for the debug counters)
    private long deliveringSince; // guarded by lock: when a caller began delivering (debug counters only)
    private volatile @Nullable Thread reader; // the transport's input thread
    private boolean readerDrained; // confined to the reader: it handles the last line there is; its messages may go direct
    private boolean readerAhead; // guarded by lock: the reader handles a line with more input behind it (an input burst)
    private boolean unflushed; // guarded by lock: lines reached the sink since its last flush (set when a deliverer is done)

    Outbound(MessageSink sink) {
        this.sink = sink;
        this.callerDelivery = sink.allowsCallerDelivery();
        this.thread = Thread.ofPlatform().daemon().name("oam-writer").unstarted(this::run);
        thread.start();
    }

    /** Serializes on the caller's thread, then queues. */
    void send(JsonNode message) {
        enqueue(Json.write(message));
    }

    /**
     * Like {@link #send}, for a message a worker sends about its own request (an event or the answer) while it
     * holds no lock: on a virtual thread, with a sink that allows it and nothing queued, it is delivered at once
     * on this thread.
     */
    void sendFromWorker(JsonNode message) {
        String line = Json.write(message);
        if (!callerDelivery || !Thread.currentThread().isVirtual()) {
            enqueue(line);
            return;
        }
        lock.lock();
        try {
            if (closed || delivering || !queue.isEmpty()) {
                if (DebugCounters.ENABLED) {
                    countQueued("worker");
                }
                queue.addLast(line);
                ready.signal();
                return;
            }
            delivering = true;
            deliverer = Thread.currentThread();
            deliveringSince = DebugCounters.ENABLED ? System.nanoTime() : 0;
        } finally {
            lock.unlock();
        }
        if (DebugCounters.ENABLED) {
            DebugCounters.count("outbound.worker.direct");
        }
        List<String> more = new ArrayList<>();
        boolean flushed = false;
        try {
            deliver(line);
            flush();
            flushed = true;
            // Lines queued meanwhile (e.g. the input thread's answer to a reply that came while this thread, just
            // descheduled after its write, still counted as delivering): this thread is running anyway, so it delivers
            // them rather than waking the writer for them. Once only, so a worker never serves a stream of others' lines.
            lock.lock();
            try {
                while (queue.peekFirst() instanceof String queued) {
                    queue.pollFirst();
                    more.add(queued);
                }
            } finally {
                lock.unlock();
            }
            if (!more.isEmpty()) {
                if (DebugCounters.ENABLED) {
                    DebugCounters.count("outbound.worker.deliveredQueued");
                }
                flushed = false;
                for (String queued : more) {
                    deliver(queued);
                }
                more.clear();
                flush();
                flushed = true;
            }
        } finally {
            lock.lock();
            try {
                for (int i = more.size() - 1; i >= 0; i--) {
                    queue.addFirst(more.get(i)); // only if delivering them failed: they go first, in order
                }
                delivering = false;
                deliverer = null;
                if (flushed) {
                    unflushed = false; // its flush took what the input thread had left in the sink too
                }
                if (!queue.isEmpty()) {
                    ready.signal();
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Registers the calling thread as the transport's input thread: messages it sends may be delivered by it without
     * blocking ({@link #sendFromReader}) while it {@linkplain #readerDrained handles the last line there is}.
     */
    void readerThread() {
        reader = Thread.currentThread();
    }

    boolean isReaderThread() {
        return callerDelivery && Thread.currentThread() == reader;
    }

    /**
     * A message sent by the input thread. While it handles the last line there is ({@link #readerDrained}), and nothing
     * is queued, nobody is delivering and the sink takes the line without blocking, it is delivered and flushed at once;
     * while it handles a line with more input behind it ({@link #readerAhead}), and nothing is queued and nobody is
     * delivering, it is delivered into the sink's buffer if the sink {@linkplain MessageSink#buffers buffers it without
     * writing}, and not flushed: the input thread flushes (or has the writer flush) when it runs out of input, as the
     * echo server does. Otherwise the message is queued for the writer, and after a refusal of the last line's direct
     * delivery so are the reader's next messages until the transport says again that it handles the last line. Never
     * waits for the client.
     */
    void sendFromReader(JsonNode message) {
        String line = Json.write(message);
        lock.lock();
        try {
            if (!readerDrained) {
                boolean free = readerAhead && !closed && !delivering && queue.isEmpty();
                if (free && (sinkBroken || sink.buffers(line))) {
                    // In a burst: into the sink's buffer, under the lock, as that is a copy that cannot block (one lock
                    // round trip per answer instead of claiming and releasing). Flushed when the input runs dry.
                    deliver(line);
                    unflushed = true;
                    if (DebugCounters.ENABLED) {
                        DebugCounters.count("outbound.reader.buffered");
                    }
                    return;
                }
                if (DebugCounters.ENABLED) {
                    if (free) {
                        DebugCounters.count("outbound.reader.queued.bufferFull"); // the writer writes the buffer out
                    } else {
                        countQueued("reader");
                    }
                }
                queue.addLast(line);
                if (!delivering) {
                    ready.signal();
                }
                return;
            }
            if (closed || delivering || !queue.isEmpty()) {
                if (DebugCounters.ENABLED) {
                    countQueued("reader");
                }
                queue.addLast(line);
                if (!delivering) {
                    ready.signal();
                }
                return;
            }
            delivering = true;
            deliverer = Thread.currentThread();
            deliveringSince = DebugCounters.ENABLED ? System.nanoTime() : 0;
        } finally {
            lock.unlock();
        }
        boolean delivered = false;
        try {
            if (sinkBroken || sink.takesWithoutBlocking(line)) {
                // Flushed at once, before this thread goes on (and, say, wakes the turn a tool reply was for).
                deliver(line);
                flush();
                delivered = true;
            }
        } finally {
            if (DebugCounters.ENABLED) {
                DebugCounters.count(delivered ? "outbound.reader.direct" : "outbound.reader.queued.sinkRefused");
            }
            lock.lock();
            try {
                delivering = false;
                deliverer = null;
                if (delivered) {
                    unflushed = false; // its flush took what the burst before this last line had left in the sink
                } else {
                    // First: producers that came while this thread was deciding queued behind it.
                    queue.addFirst(line);
                    readerDrained = false; // the pipe is not empty: the reader's next messages go to the writer too
                }
                if (!queue.isEmpty()) {
                    ready.signal();
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Called by the input thread: {@code true} before it handles the last line of the input there is (nothing more is
     * buffered or readable, so it would wait for input next), {@code false} after. Only in between may it deliver its own
     * messages and flush them; while more input is there, they are buffered ({@link #readerAhead}) or go to the writer.
     * A burst that ends in a last line ends after it: what it held goes out with that line's answer, or is flushed here
     * ({@link #flushHeld}).
     */
    void readerDrained(boolean drained) {
        readerDrained = drained;
        if (!drained) {
            lock.lock();
            try {
                readerAhead = false;
                flushHeld();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Called by the input thread when it enters an input burst ({@code true}: it handles a line with more input already
     * buffered or readable behind it) and when it leaves it ({@code false}: before it handles the last line there is, or
     * before a read that may wait). In a burst, replies are buffered and not flushed, by the reader and by the writer
     * alike, so a burst of requests is answered in a few large writes rather than one per few replies; when it ends,
     * what is held is flushed at once, so a reply waits at most for the input that was already there when it was made.
     * Leaving a burst for the last line there is ends it after that line ({@link #readerDrained}), so the held output
     * goes out in one flush with that line's answer.
     */
    void readerAhead(boolean ahead) {
        lock.lock();
        try {
            if (ahead) {
                readerAhead = true;
            } else if (!readerDrained) {
                readerAhead = false;
                flushHeld();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Flushes what the last burst left unflushed in the sink, called by the reader holding the lock when it runs out of
     * input: itself if nobody is delivering and the sink takes it without blocking, otherwise by waking the writer (or
     * leaving it to whoever delivers, who flushes when done). Releases the lock while it flushes.
     */
    private void flushHeld() {
        if (!unflushed || delivering || closed) {
            return; // nothing held; or a deliverer is busy and flushes when it is done; or the writer's STOP flushes
        }
        delivering = true;
        deliverer = Thread.currentThread();
        deliveringSince = DebugCounters.ENABLED ? System.nanoTime() : 0;
        lock.unlock();
        boolean flushed = false;
        try {
            if (sinkBroken || sink.takesWithoutBlocking("")) {
                flush();
                flushed = true;
            }
        } finally {
            if (DebugCounters.ENABLED) {
                DebugCounters.count(flushed ? "outbound.reader.flushedHeld" : "outbound.reader.wokeWriterToFlush");
            }
            lock.lock();
            delivering = false;
            deliverer = null;
            if (flushed) {
                unflushed = false;
            }
            if (unflushed || !queue.isEmpty()) {
                ready.signal();
            }
        }
    }

    /** Why a message was queued, for the debug counters. Called holding the lock. */
    private void countQueued(String who) {
        DebugCounters.count("outbound." + who + ".queued." + (closed ? "closed"
                : delivering ? (deliverer == thread ? "writerDelivering" : "otherDelivering")
                : !queue.isEmpty() ? "queueNotEmpty" : "notDrained"));
        if (delivering && deliverer != thread) {
            // How long the other caller has been delivering: a few µs is its write; much more, it lost its CPU.
            long micros = (System.nanoTime() - deliveringSince) / 1000;
            DebugCounters.count("outbound." + who + ".queued.otherDelivering.for" + (micros < 10 ? "<10us"
                    : micros < 100 ? "<100us" : micros < 1000 ? "<1ms" : ">=1ms"));
        }
    }

    private void enqueue(Object item) {
        lock.lock();
        try {
            queue.addLast(item);
            if (!delivering) {
                ready.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Runs {@code action} on the writer thread after every message queued before it was delivered; once the
     * writer is closed, at once on the caller's thread (nothing more will be delivered), so a caller waiting
     * on it is never left waiting.
     */
    void after(Runnable action) {
        lock.lock();
        try {
            if (!closed) {
                queue.addLast(action);
                if (!delivering) {
                    ready.signal();
                }
                return;
            }
        } finally {
            lock.unlock();
        }
        action.run();
    }

    boolean isWriterThread() {
        return Thread.currentThread() == thread;
    }

    /** Delivers what is queued, then stops the thread (waits at most {@code millis}). */
    void close(long millis) {
        lock.lock();
        try {
            closed = true;
            queue.addLast(STOP);
            ready.signal();
        } finally {
            lock.unlock();
        }
        if (isWriterThread()) {
            return;
        }
        try {
            stopped.await(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        List<Object> batch = new ArrayList<>();
        try {
            while (true) {
                boolean dirty; // lines in the sink not flushed yet
                lock.lock();
                try {
                    // Wakes for queued items, and for output held back in an input burst that has ended.
                    while (delivering || (queue.isEmpty() && !(unflushed && !readerAhead))) {
                        ready.await();
                    }
                    delivering = true;
                    deliverer = thread;
                    dirty = unflushed;
                    batch.addAll(queue);
                    queue.clear();
                } finally {
                    lock.unlock();
                }
                boolean stop = false;
                for (Object item : batch) {
                    if (item == STOP) {
                        stop = true;
                        break;
                    }
                    if (item instanceof String line) {
                        deliver(line);
                        dirty = true;
                    } else if (item instanceof Runnable action) {
                        flush();
                        dirty = false;
                        try {
                            action.run();
                        } catch (RuntimeException e) {
                            Log.error("an after-delivery action failed", e);
                        }
                    }
                }
                batch.clear();
                boolean runDry;
                boolean hold;
                lock.lock();
                try {
                    runDry = stop || queue.isEmpty();
                    // The input thread is in a burst: it flushes (or wakes this thread to) when the burst ends.
                    hold = !stop && readerAhead;
                } finally {
                    lock.unlock();
                }
                if (runDry) {
                    if (!hold) {
                        flush(); // still the only one delivering, and without the lock: producers never wait for the sink
                        dirty = false;
                    } else if (DebugCounters.ENABLED && dirty) {
                        DebugCounters.count("outbound.writer.heldFlush");
                    }
                }
                lock.lock();
                try {
                    delivering = false;
                    deliverer = null;
                    unflushed = dirty;
                } finally {
                    lock.unlock();
                }
                if (stop) {
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            stopped.countDown();
        }
    }

    private void deliver(String line) {
        if (sinkBroken) {
            return;
        }
        try {
            sink.send(line);
        } catch (Exception e) {
            sinkBroken = true;
            Log.warning("the output channel failed; further messages are dropped: " + e);
        } catch (Error e) {
            Log.error("the output sink threw", e);
        }
    }

    private void flush() {
        if (sinkBroken) {
            return;
        }
        try {
            sink.flush();
        } catch (Exception e) {
            sinkBroken = true;
            Log.warning("the output channel failed; further messages are dropped: " + e);
        }
    }
}
