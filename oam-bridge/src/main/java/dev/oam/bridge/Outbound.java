package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.Log;
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
 * wake-up less on a tool round trip). Such a worker may then block on a slow client; it holds no lock while it
 * does (callers of {@code sendFromWorker} hold none, and this class releases its own before delivering), and
 * the dispatcher never waits for the client, so reading input goes on.
 *
 * <p>The thread reading input (the transport's, {@linkplain #readerThread registered}) delivers its own messages too
 * ({@link #sendFromReader}): answers of requests handled on the dispatcher, and events it sends for a turn (a tool
 * reply's {@code toolCallCompleted}). It does so only when nothing is queued, nobody delivers and the sink
 * {@linkplain MessageSink#takesWithoutBlocking takes the line without blocking}. Otherwise the line is queued for the
 * writer thread, and so are the reader's next lines until it has read input again.
 */
final class Outbound {
    private static final Object STOP = new Object();

    private final MessageSink sink;
    private final boolean callerDelivery;
    private final Thread thread;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition ready = lock.newCondition(); // something queued and nobody delivering
    private final ArrayDeque<Object> queue = new ArrayDeque<>(); // guarded by lock: lines, after-actions, STOP
    private boolean delivering; // guarded by lock: one thread at a time uses the sink
    private boolean closed; // guarded by lock
    private volatile boolean sinkBroken;
    private volatile @Nullable Thread reader; // the transport's input thread, which flushes before it waits for input
    private boolean readerRefused; // guarded by lock: the sink could not take a line of the reader's; queue until it flushes

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
                queue.addLast(line);
                ready.signal();
                return;
            }
            delivering = true;
        } finally {
            lock.unlock();
        }
        try {
            deliver(line);
            flush();
        } finally {
            lock.lock();
            try {
                delivering = false;
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
     * blocking ({@link #sendFromReader}); it calls {@link #readerWaits} before it waits for input.
     */
    void readerThread() {
        reader = Thread.currentThread();
    }

    boolean isReaderThread() {
        return callerDelivery && Thread.currentThread() == reader;
    }

    /**
     * A message sent by the input thread: delivered and flushed at once when nothing is queued, nobody is delivering and
     * the sink takes it without blocking; otherwise queued, and so are the reader's next messages until it waits for input
     * again ({@link #readerWaits}). Never waits for the client.
     */
    void sendFromReader(JsonNode message) {
        String line = Json.write(message);
        lock.lock();
        try {
            if (closed || delivering || readerRefused || !queue.isEmpty()) {
                queue.addLast(line);
                if (!delivering) {
                    ready.signal();
                }
                return;
            }
            delivering = true;
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
            lock.lock();
            try {
                delivering = false;
                if (!delivered) {
                    // First: producers that came while this thread was deciding queued behind it.
                    queue.addFirst(line);
                    readerRefused = true;
                }
                if (!queue.isEmpty()) {
                    ready.signal();
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /** Called by the input thread before it waits for input: from now on its messages may be delivered by it again. */
    void readerWaits() {
        lock.lock();
        try {
            readerRefused = false;
        } finally {
            lock.unlock();
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
                lock.lock();
                try {
                    while (queue.isEmpty() || delivering) {
                        ready.await();
                    }
                    delivering = true;
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
                    } else if (item instanceof Runnable action) {
                        flush();
                        try {
                            action.run();
                        } catch (RuntimeException e) {
                            Log.error("an after-delivery action failed", e);
                        }
                    }
                }
                batch.clear();
                boolean runDry;
                lock.lock();
                try {
                    runDry = stop || queue.isEmpty();
                } finally {
                    lock.unlock();
                }
                if (runDry) {
                    flush(); // still the only one delivering, and without the lock: producers never wait for the sink
                }
                lock.lock();
                try {
                    delivering = false;
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
