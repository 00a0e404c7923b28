package dev.oam.bridge;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The requests in flight: each from the moment its handler starts until its answer is queued for delivery. So
 * {@code shutdown}, end of input ({@link BridgeEngine#awaitIdle}) and {@link BridgeEngine#cancel} see every request
 * whose answer is not queued yet, also one a worker is answering at this moment. Waiting is on a condition signalled
 * when a request leaves.
 */
final class InFlight {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition left = lock.newCondition(); // signalled whenever a request leaves
    private final Map<Long, RealRequest> requests = new LinkedHashMap<>(); // guarded by lock, in arrival order

    /** Called by the dispatcher before the request's handler runs. */
    void add(RealRequest request) {
        lock.lock();
        try {
            requests.put(request.sequence(), request);
        } finally {
            lock.unlock();
        }
    }

    /** Called once the request's answer is queued (or dropped, for a notification). */
    void remove(RealRequest request) {
        lock.lock();
        try {
            if (requests.remove(request.sequence()) != null) {
                left.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** The requests in flight now, in arrival order. */
    List<RealRequest> snapshot() {
        lock.lock();
        try {
            return new ArrayList<>(requests.values());
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until no request other than {@code except} is in flight, or {@code nanos} passed. Returns whether none is.
     */
    boolean awaitNoneBut(@Nullable RealRequest except, long nanos) throws InterruptedException {
        long left = nanos;
        lock.lock();
        try {
            while (!onlyHolds(except)) {
                if (left <= 0) {
                    return false;
                }
                left = this.left.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@link #awaitNoneBut(RealRequest, long)} for a caller that cannot throw: an interrupt ends the wait, and stays
     * set.
     */
    boolean awaitNoneBut(@Nullable RealRequest except, long timeout, TimeUnit unit) {
        try {
            return awaitNoneBut(except, unit.toNanos(timeout));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private boolean onlyHolds(@Nullable RealRequest except) { // called holding lock
        return requests.isEmpty()
                || (requests.size() == 1 && except != null && requests.containsKey(except.sequence()));
    }
}
