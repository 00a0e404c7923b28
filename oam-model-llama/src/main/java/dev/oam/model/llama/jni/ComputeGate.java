package dev.oam.model.llama.jni;

import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.engine.FairQueue;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Lets one model compute at a time in the process: two loaded llama.cpp models decoding at once were seen to corrupt
 * each other and abort in grammar steps. Any number of generations of the same engine may be inside together (its slots
 * decode in one batch); another engine waits until they have all left. Entry is FIFO: once an engine is waiting, later
 * arrivals of the running engine queue behind it, so no engine starves. Waiting is cancellable through the request's
 * token (or an interrupt).
 */
public final class ComputeGate {
    public static final ComputeGate PROCESS = new ComputeGate();

    private final FairQueue queue = new FairQueue();
    private final ReentrantLock lock = queue.lock;
    private @Nullable Object owner; // guarded by lock
    private int inside; // guarded by lock

    /** Waits until {@code engine} may compute; throws {@code cancelled} when the token is cancelled first. */
    public void enter(Object engine, CancellationToken token) throws AgentException {
        queue.await(token, () -> {}, () -> {
            if (owner != null && owner != engine) {
                return null;
            }
            owner = engine;
            inside++;
            return Boolean.TRUE;
        });
    }

    /** Leaves the gate; called once per successful {@link #enter}. */
    public void exit(Object engine) {
        lock.lock();
        try {
            if (owner != engine || inside == 0) {
                throw new IllegalStateException("exit without enter");
            }
            if (--inside == 0) {
                owner = null;
            }
            queue.changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Generations inside the gate now (tests). */
    int inside() {
        lock.lock();
        try {
            return inside;
        } finally {
            lock.unlock();
        }
    }
}
