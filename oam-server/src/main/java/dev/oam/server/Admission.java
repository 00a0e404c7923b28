package dev.oam.server;

import java.util.ArrayDeque;
import java.util.Map;

/**
 * At most {@code maxActive} completions run at once; up to {@code maxQueued} more wait in arrival order (FIFO); a
 * request beyond that is refused at once with 429. A waiter leaves the queue when its deadline passes or its client
 * goes away.
 */
final class Admission {
    private final int maxActive;
    private final int maxQueued;
    private final Object lock = new Object();
    private int active; // guarded by lock
    private final ArrayDeque<Ticket> queue = new ArrayDeque<>(); // guarded by lock

    /** One admitted request; {@link #close()} frees its place. */
    final class Ticket implements AutoCloseable {
        private boolean admitted; // guarded by lock
        private boolean closed; // guarded by lock

        @Override
        public void close() {
            synchronized (lock) {
                if (closed) {
                    return;
                }
                closed = true;
                if (admitted) {
                    active--;
                    admitNext();
                } else {
                    queue.remove(this);
                }
            }
        }
    }

    Admission(int maxActive, int maxQueued) {
        if (maxActive < 1 || maxQueued < 0) {
            throw new IllegalArgumentException("maxActive must be at least 1 and maxQueued at least 0");
        }
        this.maxActive = maxActive;
        this.maxQueued = maxQueued;
    }

    /**
     * Waits for a place until {@code deadlineNanos} (a {@link System#nanoTime()} value).
     *
     * @param gone tells whether the client is still there; checked whenever the waiter wakes up
     */
    Ticket enter(long deadlineNanos, java.util.function.BooleanSupplier gone) throws ApiError, InterruptedException {
        Ticket ticket = new Ticket();
        synchronized (lock) {
            if (active < maxActive && queue.isEmpty()) {
                active++;
                ticket.admitted = true;
                return ticket;
            }
            if (queue.size() >= maxQueued) {
                throw new ApiError(
                        429,
                        ApiError.RATE_LIMIT,
                        null,
                        "rate_limited",
                        "The server is busy: " + active + " requests are running and " + queue.size()
                                + " are queued. Retry later.",
                        Map.of("Retry-After", "1"));
            }
            queue.addLast(ticket);
            try {
                while (!ticket.admitted) {
                    long left = deadlineNanos - System.nanoTime();
                    if (left <= 0) {
                        throw ApiError.timeout("The request waited in the queue past the server's timeout.");
                    }
                    if (gone.getAsBoolean()) {
                        throw new ApiError(499, ApiError.INVALID_REQUEST, null, "cancelled", "The client went away.");
                    }
                    long millis = Math.min(Math.max(1, left / 1_000_000L), 1_000);
                    lock.wait(millis);
                }
                return ticket;
            } catch (ApiError | InterruptedException | RuntimeException e) {
                ticket.closed = true;
                if (ticket.admitted) {
                    active--;
                    admitNext();
                } else {
                    queue.remove(ticket);
                }
                throw e;
            }
        }
    }

    /** Hands a freed place to the oldest waiter. Caller holds the lock. */
    private void admitNext() {
        while (active < maxActive && !queue.isEmpty()) {
            Ticket next = queue.pollFirst();
            next.admitted = true;
            active++;
        }
        lock.notifyAll();
    }

    int active() {
        synchronized (lock) {
            return active;
        }
    }

    int queued() {
        synchronized (lock) {
            return queue.size();
        }
    }
}
