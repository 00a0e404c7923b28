package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.transport.DeliveryListener;
import dev.oam.bridge.transport.DeliveryListener.Producer;
import dev.oam.bridge.transport.DeliveryListener.Queued;
import dev.oam.bridge.transport.LineInput;
import dev.oam.bridge.transport.StreamSink;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The delivery policy: how every outgoing line reaches the sink. One queue, one thread at a time using the sink, so
 * lines reach it one at a time in the order their producers took the queue's lock. Producers never wait for the sink
 * (the queue is unbounded), so a client that is slow to read cannot stall the dispatcher.
 *
 * <p>The writer thread ({@code oam-writer}) delivers what is queued, in batches, and flushes when the queue runs dry.
 * With a {@link StreamSink} (stdio), a line may be delivered by the thread that produced it ({@link #send}):
 *
 * <ul>
 *   <li>a worker (a virtual thread sending its own request's event, {@code tool/call} or answer, holding no lock)
 *       delivers it itself when nothing is queued and nobody delivers, then once the lines queued meanwhile, and
 *       flushes; it may wait for a slow client then, holding no lock;
 *   <li>the dispatcher (the input thread) never waits for the client: while it handles the last line there is
 *       ({@link #lastLine}), it writes and flushes its line when nothing is queued, nobody delivers and the sink
 *       {@linkplain StreamSink#takesWithoutBlocking takes it without blocking}; in an input burst ({@link #burst}) it
 *       puts its line into the sink's buffer when the sink {@linkplain StreamSink#buffers only buffers it}, and neither
 *       it nor the writer flushes until the burst ends, when what is held is flushed at once (by the input thread if
 *       that cannot block, else by the writer). So pipelined requests are answered in a few large writes, and an answer
 *       waits at most for input that was already there.
 * </ul>
 *
 * Every other line is queued for the writer, and so are the input thread's lines after a refused direct write, until it
 * handles the next last line.
 */
final class Outbound implements LineInput {
    private static final Object STOP = new Object();

    /** Who uses the sink; one thread at a time. */
    private enum Holder {
        NOBODY,
        /** The writer thread, delivering what was queued and flushing when it runs dry. */
        WRITER,
        /** A worker or the input thread delivering its own line, or the input thread flushing held output. */
        PRODUCER
    }

    private final MessageSink sink;
    private final @Nullable StreamSink stream; // set: producers may deliver their own lines
    private final DeliveryListener listener;
    // Whether the calling thread is the dispatcher (holds the dispatch lock).
    private final BooleanSupplier onDispatcher;
    private final Thread writer;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final ReentrantLock lock = new ReentrantLock();
    // Something queued (or held output to flush) and nobody delivering.
    private final Condition ready = lock.newCondition();

    // Guarded by lock: the queue, who uses the sink, and what the sink holds.
    private final ArrayDeque<Object> queue = new ArrayDeque<>(); // lines, after-actions, STOP
    private Holder holder = Holder.NOBODY;
    private long deliveringSince; // when the holder took the sink (for the listener)
    private boolean closed; // STOP is queued: lines sent after it are not delivered
    private boolean unflushed; // lines reached the sink since its last flush (set when a holder is done with it)
    private boolean inBurst; // the input thread handles a line with more input behind it: the writer holds its flush

    // Confined to the input thread: it handles the last line there is, so its lines may go direct.
    private boolean lastLine;
    // Set when a write or flush failed; from then on nothing reaches the sink. Read without the lock.
    private volatile boolean sinkBroken;

    /** @param onDispatcher whether the calling thread is the one dispatching input (for stdio, the input thread) */
    Outbound(MessageSink sink, DeliveryListener listener, BooleanSupplier onDispatcher) {
        this.sink = sink;
        this.stream = sink instanceof StreamSink streamSink ? streamSink : null;
        this.listener = listener;
        this.onDispatcher = onDispatcher;
        this.writer = Thread.ofPlatform().daemon().name("oam-writer").unstarted(this::run);
        writer.start();
        if (stream != null) {
            stream.connect(this);
        }
    }

    /**
     * A line about a request, sent by the thread working on it (its handler on the dispatcher, or a worker holding no
     * lock): with a stream sink, that thread may deliver it itself (see the class comment); otherwise it is queued.
     */
    void send(JsonNode message) {
        String line = Json.write(message);
        if (stream == null) {
            enqueue(line);
        } else if (onDispatcher.getAsBoolean()) {
            fromDispatcher(stream, line);
        } else if (Thread.currentThread().isVirtual()) {
            fromWorker(line);
        } else {
            enqueue(line);
        }
    }

    /** A line not about the sender's own request (an extension's notification, {@code tool/cancel}): always queued. */
    void queue(JsonNode message) {
        enqueue(Json.write(message));
    }

    /**
     * Runs {@code action} on the writer thread after every line queued before it was delivered and flushed; once the
     * writer is closed, at once on the caller's thread (nothing more will be delivered), so nobody waits on it forever.
     */
    void after(Runnable action) {
        lock.lock();
        try {
            if (!closed) {
                queue.addLast(action);
                if (!delivering()) {
                    ready.signal();
                }
                return;
            }
        } finally {
            lock.unlock();
        }
        action.run();
    }

    /** Delivers what is queued, then stops the writer (waits at most {@code millis}). */
    void close(long millis) {
        lock.lock();
        try {
            closed = true;
            queue.addLast(STOP);
            ready.signal();
        } finally {
            lock.unlock();
        }
        if (Thread.currentThread() == writer) {
            return;
        }
        try {
            stopped.await(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void burst(boolean ahead) {
        boolean flush;
        lock.lock();
        try {
            if (ahead) {
                inBurst = true;
                return;
            }
            if (lastLine) {
                return; // a burst ending in the last line ends after it (lastLine(false)): held output goes with its
                // answer
            }
            inBurst = false;
            flush = claimHeldFlush();
        } finally {
            lock.unlock();
        }
        if (flush) {
            flushHeld();
        }
    }

    @Override
    public void lastLine(boolean handling) {
        lastLine = handling;
        if (handling) {
            return;
        }
        boolean flush;
        lock.lock();
        try {
            inBurst = false;
            flush = claimHeldFlush();
        } finally {
            lock.unlock();
        }
        if (flush) {
            flushHeld();
        }
    }

    // --- producers delivering their own lines ----------------------------------------------------------------------

    /** A worker's line: delivered by the worker when nothing is queued and nobody delivers. */
    private void fromWorker(String line) {
        lock.lock();
        try {
            if (closed || delivering() || !queue.isEmpty()) {
                queueLocked(line, Producer.WORKER, queuedBecause());
                return;
            }
            claim(Holder.PRODUCER);
        } finally {
            lock.unlock();
        }
        listener.wroteOwn(Producer.WORKER);
        List<String> more = new ArrayList<>();
        boolean flushed = false;
        try {
            deliver(line);
            flush();
            flushed = true;
            // Lines queued meanwhile (the input thread's answer to a reply that came while this thread, descheduled
            // after its write, still delivered): this thread runs anyway, so it delivers them rather than waking the
            // writer. Once only, so a worker never serves a stream of others' lines.
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
                listener.workerWroteQueued();
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
                if (flushed) {
                    unflushed = false; // its flush took what the input thread had left in the sink too
                }
                release();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * The dispatcher's line: written and flushed at once while it handles the last line there is and the sink takes it
     * without blocking; buffered unflushed in an input burst when the sink only buffers it; else queued. Never waits
     * for the client.
     */
    private void fromDispatcher(StreamSink stream, String line) {
        lock.lock();
        try {
            if (!lastLine) {
                boolean free = inBurst && !closed && !delivering() && queue.isEmpty();
                if (free && (sinkBroken || stream.buffers(line))) {
                    // In a burst: into the sink's buffer, under the lock, as that copy cannot block. Flushed when the
                    // burst ends.
                    deliver(line);
                    unflushed = true;
                    listener.buffered();
                    return;
                }
                queueLocked(
                        line,
                        Producer.READER,
                        free ? Queued.BUFFER_FULL : queuedBecause()); // a full buffer: the writer writes it out
                return;
            }
            if (closed || delivering() || !queue.isEmpty()) {
                queueLocked(line, Producer.READER, queuedBecause());
                return;
            }
            claim(Holder.PRODUCER);
        } finally {
            lock.unlock();
        }
        boolean delivered = false;
        try {
            if (sinkBroken || stream.takesWithoutBlocking(line)) {
                // Flushed at once, before this thread goes on (and, say, wakes the turn a tool reply was for).
                deliver(line);
                flush();
                delivered = true;
            }
        } finally {
            if (delivered) {
                listener.wroteOwn(Producer.READER);
            } else {
                listener.queued(Producer.READER, Queued.SINK_REFUSED, -1);
            }
            lock.lock();
            try {
                if (delivered) {
                    unflushed = false; // its flush took what the burst before this last line had left in the sink
                } else {
                    queue.addFirst(line); // first: producers that came while this thread was deciding queued behind it
                    lastLine = false; // the pipe is not empty: this thread's next lines go to the writer too
                }
                release();
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Claims the sink to flush what an input burst left unflushed (called holding the lock, when the burst ends): false
     * when nothing is held, or a deliverer is busy (it flushes when done), or the writer is stopping (its STOP
     * flushes).
     */
    private boolean claimHeldFlush() {
        if (!unflushed || delivering() || closed) {
            return false;
        }
        claim(Holder.PRODUCER);
        return true;
    }

    /**
     * Flushes held output after {@link #claimHeldFlush}, without the lock: here if that cannot block, else by the
     * writer.
     */
    private void flushHeld() {
        boolean flushed = false;
        try {
            if (sinkBroken || (stream != null && stream.takesWithoutBlocking(""))) {
                flush();
                flushed = true;
            }
        } finally {
            listener.heldFlushed(flushed);
            lock.lock();
            try {
                if (flushed) {
                    unflushed = false;
                }
                release();
                if (unflushed) {
                    ready.signal(); // the writer flushes it
                }
            } finally {
                lock.unlock();
            }
        }
    }

    private boolean delivering() { // called holding lock
        return holder != Holder.NOBODY;
    }

    private void claim(Holder who) { // called holding lock, when nobody delivers
        holder = who;
        deliveringSince = System.nanoTime();
    }

    private void release() { // called holding lock, by a producer done with the sink
        holder = Holder.NOBODY;
        if (!queue.isEmpty()) {
            ready.signal();
        }
    }

    private Queued queuedBecause() { // called holding lock
        if (closed) {
            return Queued.CLOSED;
        }
        return switch (holder) {
            case WRITER -> Queued.WRITER_DELIVERING;
            case PRODUCER -> Queued.OTHER_DELIVERING;
            case NOBODY -> !queue.isEmpty() ? Queued.QUEUE_NOT_EMPTY : Queued.NOT_DRAINED;
        };
    }

    private void queueLocked(String line, Producer producer, Queued why) {
        listener.queued(producer, why, why == Queued.OTHER_DELIVERING ? System.nanoTime() - deliveringSince : -1);
        queue.addLast(line);
        if (!delivering()) {
            ready.signal();
        }
    }

    private void enqueue(Object item) {
        lock.lock();
        try {
            queue.addLast(item);
            if (!delivering()) {
                ready.signal();
            }
        } finally {
            lock.unlock();
        }
    }

    // --- the writer thread -----------------------------------------------------------------------------------------

    private void run() {
        List<Object> batch = new ArrayList<>();
        try {
            while (true) {
                boolean dirty; // lines in the sink not flushed yet
                lock.lock();
                try {
                    // Wakes for queued items, and for output held back in an input burst that has ended.
                    while (delivering() || (queue.isEmpty() && !(unflushed && !inBurst))) {
                        ready.await();
                    }
                    claim(Holder.WRITER);
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
                    hold = !stop && inBurst; // the input thread flushes (or wakes this thread to) when the burst ends
                } finally {
                    lock.unlock();
                }
                if (runDry) {
                    if (!hold) {
                        flush(); // still the only one delivering, and without the lock: producers never wait for the
                        // sink
                        dirty = false;
                    } else if (dirty) {
                        listener.writerHeldFlush();
                    }
                }
                lock.lock();
                try {
                    holder = Holder.NOBODY;
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
