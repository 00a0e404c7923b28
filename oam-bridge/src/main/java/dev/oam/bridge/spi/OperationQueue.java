package dev.oam.bridge.spi;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Per-object order: operations run one after another in submission order on a virtual thread that exists only while
 * there is work. Different queues run in parallel.
 */
public final class OperationQueue {
    private final String name;
    private final Object lock = new Object();
    private final ArrayDeque<Operation> queued = new ArrayDeque<>(); // guarded by lock
    private Operation running; // guarded by lock
    private boolean workerActive; // guarded by lock

    /** The body of an operation; it answers nothing itself, the queue reports its result or error. */
    @FunctionalInterface
    public interface Work {
        JsonNode run(Operation operation) throws Exception;
    }

    /** Work queued by the bridge itself (e.g. an NPC's background compaction): nobody is answered. */
    @FunctionalInterface
    public interface BackgroundWork {
        void run(Operation operation) throws Exception;
    }

    public OperationQueue(String name) {
        this.name = name;
    }

    /** Queues {@code work} for {@code request}; the queue answers the request. */
    public void submit(BridgeRequest request, Work work) {
        Operation operation = new Operation(request, work);
        request.setCanceller(() -> {
            boolean queuedBefore = operation.wasQueued();
            if (operation.cancel() && queuedBefore) {
                request.failCancelled();
            }
        });
        enqueue(operation);
    }

    private void enqueue(Operation operation) {
        synchronized (lock) {
            queued.addLast(operation);
            if (workerActive) {
                return;
            }
            workerActive = true;
        }
        Thread.ofVirtual().name("oam-queue-" + name).start(this::drain);
    }

    /** Queues work that answers nobody; cancel counts and stops it like any other operation. */
    public void submitBackground(BackgroundWork work) {
        enqueue(new Operation(null, op -> {
            work.run(op);
            return null;
        }));
    }

    /** Whether an operation is running, and how many wait behind it. */
    public record Load(boolean busy, int pending) {}

    /**
     * Both counts in one reading. Read one after the other they could miss an operation that the worker moved from
     * waiting to running in between (neither busy nor pending), as a session/list sent right after a request once
     * showed.
     */
    public Load load() {
        synchronized (lock) {
            return new Load(running != null, queued.size());
        }
    }

    /**
     * Cancels the running operation and every queued one; queued ones are answered with {@code -32009} at once. Returns
     * how many were cancelled (committed work is not counted).
     */
    public int cancelAll() {
        List<Operation> dropped;
        Operation current;
        synchronized (lock) {
            dropped = new ArrayList<>(queued);
            queued.clear();
            current = running;
        }
        int count = 0;
        if (current != null && current.cancel()) {
            count++;
        }
        for (Operation operation : dropped) {
            if (operation.cancel()) {
                if (operation.request() != null) {
                    operation.request().failCancelled();
                }
                count++;
            }
        }
        return count;
    }

    private void drain() {
        while (true) {
            Operation operation;
            synchronized (lock) {
                operation = queued.pollFirst();
                if (operation == null) {
                    workerActive = false;
                    running = null;
                    return;
                }
                if (!operation.start()) {
                    continue;
                }
                running = operation;
            }
            Runnable answer = execute(operation);
            synchronized (lock) {
                running = null;
            }
            // Answered after the queue stopped counting it as running, so a client that has the
            // answer never sees the session busy with it.
            answer.run();
        }
    }

    private static Runnable execute(Operation operation) {
        BridgeRequest request = operation.request();
        if (request == null) {
            try {
                operation.work().run(operation);
            } catch (Exception e) {
                if (!operation.isCancelled()) {
                    Log.warning("background work failed: " + e.getMessage());
                }
            } catch (Throwable t) {
                Log.error("background work failed", t);
            }
            operation.finish();
            return () -> {};
        }
        try {
            JsonNode result = operation.work().run(operation);
            if (operation.finish()) {
                return () -> request.respond(result);
            }
            return request::failCancelled;
        } catch (Exception e) {
            if (operation.isCancelled()) {
                return request::failCancelled;
            }
            operation.finish();
            BridgeException error = BridgeException.wrap(e);
            return () -> request.fail(error);
        } catch (Throwable t) {
            Log.error("operation '" + request.method() + "' failed", t);
            operation.finish();
            return () -> request.fail(new BridgeException(ErrorCode.INTERNAL_ERROR, "Internal error: " + t));
        }
    }
}
