package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The single writer: every outgoing message goes through one queue and one thread, so messages are
 * delivered one at a time in the order they were produced. Producers never block (the queue is
 * unbounded), so a client that is slow to read cannot stall the dispatcher.
 */
final class Outbound {
    private static final Object STOP = new Object();

    private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
    private final MessageSink sink;
    private final Thread thread;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private volatile boolean sinkBroken;
    private final Object closeLock = new Object();
    private boolean closed; // guarded by closeLock

    Outbound(MessageSink sink) {
        this.sink = sink;
        this.thread = Thread.ofPlatform().daemon().name("oam-writer").unstarted(this::run);
        thread.start();
    }

    /** Serializes on the caller's thread, then queues. */
    void send(JsonNode message) {
        queue.offer(Json.write(message));
    }

    /**
     * Runs {@code action} on the writer thread after every message queued before it was delivered; once the
     * writer is closed, at once on the caller's thread (nothing more will be delivered), so a caller waiting
     * on it is never left waiting.
     */
    void after(Runnable action) {
        synchronized (closeLock) {
            if (!closed) {
                queue.offer(action);
                return;
            }
        }
        action.run();
    }

    boolean isWriterThread() {
        return Thread.currentThread() == thread;
    }

    /** Delivers what is queued, then stops the thread (waits at most {@code millis}). */
    void close(long millis) {
        synchronized (closeLock) {
            closed = true;
            queue.offer(STOP);
        }
        if (isWriterThread()) {
            return;
        }
        try {
            stopped.await(millis, java.util.concurrent.TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void run() {
        try {
            while (true) {
                Object item = queue.take();
                if (item == STOP) {
                    flush();
                    return;
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
                if (queue.isEmpty()) {
                    flush();
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
