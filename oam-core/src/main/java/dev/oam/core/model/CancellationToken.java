package dev.oam.core.model;

import java.util.ArrayList;
import java.util.List;

/**
 * Cooperative cancellation for one operation. Code checks {@link #check()} between steps and waits with
 * {@link #sleep(long)}; blocking waits register a listener that wakes them.
 */
public final class CancellationToken {
    private final Object lock = new Object();
    private boolean cancelled; // guarded by lock
    private final List<Runnable> listeners = new ArrayList<>(); // guarded by lock

    /** A token not yet cancelled, as {@link #create()} returns. */
    public CancellationToken() {}

    public static CancellationToken create() {
        return new CancellationToken();
    }

    public boolean isCancelled() {
        synchronized (lock) {
            return cancelled;
        }
    }

    /** Cancels and runs every listener once (on the calling thread). */
    public void cancel() {
        List<Runnable> toRun;
        synchronized (lock) {
            if (cancelled) {
                return;
            }
            cancelled = true;
            lock.notifyAll();
            toRun = List.copyOf(listeners);
            listeners.clear();
        }
        toRun.forEach(Runnable::run);
    }

    /** Runs {@code listener} on cancellation, or at once when already cancelled. */
    public void onCancel(Runnable listener) {
        synchronized (lock) {
            if (!cancelled) {
                listeners.add(listener);
                return;
            }
        }
        listener.run();
    }

    public void removeListener(Runnable listener) {
        synchronized (lock) {
            listeners.remove(listener);
        }
    }

    public void check() throws AgentException {
        if (isCancelled()) {
            throw AgentException.cancelled();
        }
    }

    /** Waits {@code millis} or until cancelled; throws when cancelled. */
    public void sleep(long millis) throws AgentException {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        synchronized (lock) {
            while (!cancelled) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                try {
                    lock.wait(Math.max(1, left / 1_000_000L), 0);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw AgentException.cancelled();
                }
            }
        }
        throw AgentException.cancelled();
    }
}
