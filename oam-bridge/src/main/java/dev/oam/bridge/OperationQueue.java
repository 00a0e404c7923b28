package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Per-object order: operations run one after another in submission order on a virtual thread that
 * exists only while there is work. Different queues run in parallel.
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
        synchronized (lock) {
            queued.addLast(operation);
            if (workerActive) {
                return;
            }
            workerActive = true;
        }
        Thread.ofVirtual().name("oam-queue-" + name).start(this::drain);
    }

    public boolean busy() {
        synchronized (lock) {
            return running != null;
        }
    }

    /** Operations waiting behind the running one. */
    public int pending() {
        synchronized (lock) {
            return queued.size();
        }
    }

    /**
     * Cancels the running operation and every queued one; queued ones are answered with
     * {@code -32009} at once. Returns how many were cancelled (committed work is not counted).
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
                operation.request().failCancelled();
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
            // Not busy any more before the answer goes out: a client that reacts to the answer
            // (session/list) must not still see the operation running.
            synchronized (lock) {
                running = null;
            }
            answer.run();
        }
    }

    /** Runs the operation; returns how to answer it. */
    private static Runnable execute(Operation operation) {
        BridgeRequest request = operation.request();
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
            BridgeException error = BridgeEngine.toBridgeException(e);
            return () -> request.fail(error);
        } catch (Throwable t) {
            Log.error("operation '" + request.method() + "' failed", t);
            operation.finish();
            return () -> request.fail(new BridgeException(ErrorCode.INTERNAL_ERROR, "Internal error: " + t));
        }
    }
}
