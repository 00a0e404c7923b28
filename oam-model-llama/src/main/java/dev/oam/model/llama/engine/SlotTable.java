package dev.oam.model.llama.engine;

import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Admission and slot choice for one engine: a fair (FIFO) queue in front of the model's parallel slots, which a waiting
 * request leaves at once when its token is cancelled, and a record of the tokens each slot's KV cache holds, so a
 * request goes to the slot that already holds the longest part of its prompt.
 *
 * <p>Slot choice among the free slots: the score is the common prefix with the prompt, minus the cached tokens of
 * another session it would destroy (so a new session takes an empty slot rather than evicting another session's
 * conversation, but still takes over a slot whose cache it shares mostly, e.g. a long common system prompt). Ties go to
 * the slot this session used last, then to the least recently used slot.
 *
 * <p>The tokens recorded for a slot are an estimate from the Java side: the prompt tokens exactly, then the generated
 * text tokenized again (the model may have sampled a different split of the same text), without the last generated
 * token (llama.cpp never decodes the token that ends a generation). After a cancel or a failure only the part of the
 * prompt that was cached before is recorded, which llama.cpp certainly still holds.
 */
public final class SlotTable {
    static final class Slot {
        final int id;
        int[] held = new int[0]; // guarded by the table's lock

        @Nullable
        Object owner; // the session that used it last; guarded by the table's lock

        boolean busy; // guarded by the table's lock
        long lastUsed; // guarded by the table's lock

        Slot(int id) {
            this.id = id;
        }
    }

    /** A slot granted to one request; {@code cached} prompt tokens are already in its cache. */
    public record Lease(Slot slot, int cached) {
        public int id() {
            return slot.id;
        }
    }

    private final FairQueue queue = new FairQueue();
    private final ReentrantLock lock = queue.lock;
    private final Condition changed = queue.changed;
    private final Slot[] slots;
    private boolean closed; // guarded by lock
    private long clock; // guarded by lock

    public SlotTable(int count) {
        slots = new Slot[count];
        for (int i = 0; i < count; i++) {
            slots[i] = new Slot(i);
        }
    }

    /**
     * Waits in FIFO order for a free slot and takes the best one for {@code prompt}.
     *
     * @throws AgentException {@code cancelled} when the token is cancelled (or the thread interrupted) while waiting;
     *     {@code model_unavailable} once the engine is closed
     */
    public Lease acquire(int[] prompt, Object session, CancellationToken token) throws AgentException {
        return queue.await(
                token,
                () -> {
                    if (closed) {
                        throw closedError();
                    }
                },
                () -> {
                    Slot best = choose(prompt, session);
                    if (best == null) {
                        return null;
                    }
                    best.busy = true;
                    best.owner = session;
                    int cached = Math.min(commonPrefix(best.held, prompt), prompt.length - 1);
                    return new Lease(best, Math.max(0, cached));
                });
    }

    /**
     * Takes, without waiting, the free slot that holds all of {@code prompt} at its start (the conversation whose last
     * prompt it was, and what was generated after it), for saving its state; {@code null} when no free slot does. The
     * lease's {@code cached} is the count of tokens the slot holds; {@link #held} names them.
     */
    public @Nullable Lease takeHolding(int[] prompt) {
        lock.lock();
        try {
            Slot best = null;
            for (Slot slot : slots) {
                if (!slot.busy
                        && prompt.length > 0
                        && commonPrefix(slot.held, prompt) == prompt.length
                        && (best == null || slot.lastUsed > best.lastUsed)) {
                    best = slot;
                }
            }
            if (best == null || closed) {
                return null;
            }
            best.busy = true;
            return new Lease(best, best.held.length);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes, without waiting, a free slot for a restored conversation: an empty one, else the least recently used;
     * {@code null} when every slot is busy. The caller loads the state and {@link #release}s it with the tokens loaded,
     * owned by {@code owner}.
     */
    public @Nullable Lease takeForRestore(Object owner) {
        lock.lock();
        try {
            Slot best = null;
            for (Slot slot : slots) {
                if (slot.busy) {
                    continue;
                }
                if (best == null
                        || slot.held.length == 0 && best.held.length > 0
                        || (slot.held.length == 0) == (best.held.length == 0) && slot.lastUsed < best.lastUsed) {
                    best = slot;
                }
            }
            if (best == null || closed) {
                return null;
            }
            best.busy = true;
            best.owner = owner;
            return new Lease(best, 0);
        } finally {
            lock.unlock();
        }
    }

    /** The tokens the lease's slot holds (a copy). */
    public int[] held(Lease lease) {
        lock.lock();
        try {
            return lease.slot().held.clone();
        } finally {
            lock.unlock();
        }
    }

    /** Frees the lease's slot, recording the tokens its cache now holds. */
    public void release(Lease lease, int[] held) {
        lock.lock();
        try {
            Slot slot = lease.slot();
            if (!slot.busy) {
                throw new IllegalStateException("slot " + slot.id + " released twice");
            }
            slot.held = held;
            slot.busy = false;
            slot.lastUsed = ++clock;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Forgets what the free slots hold (their KV cache was cleared); busy slots record theirs on release. */
    public void forgetIdle() {
        lock.lock();
        try {
            for (Slot slot : slots) {
                if (!slot.busy) {
                    slot.held = new int[0];
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Fails every waiting and future {@link #acquire}. Busy slots stay busy until released. */
    public void close() {
        lock.lock();
        try {
            closed = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    public int busySlots() {
        lock.lock();
        try {
            return (int) Arrays.stream(slots).filter(s -> s.busy).count();
        } finally {
            lock.unlock();
        }
    }

    public int waiting() {
        return queue.waiting();
    }

    /** Waits until {@code condition} (read under the lock) holds; false on timeout. For tests. */
    public boolean await(java.util.function.Predicate<SlotTable> condition, long timeoutMillis)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        lock.lock();
        try {
            while (!condition.test(this)) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return false;
                }
                changed.awaitNanos(left);
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    // guarded by lock
    private @Nullable Slot choose(int[] prompt, Object session) {
        Slot best = null;
        long bestScore = Long.MIN_VALUE;
        for (Slot slot : slots) {
            if (slot.busy) {
                continue;
            }
            int prefix = commonPrefix(slot.held, prompt);
            boolean own = Objects.equals(slot.owner, session);
            long score = prefix - (own || slot.owner == null ? 0 : (long) slot.held.length - prefix);
            if (best == null || score > bestScore || score == bestScore && better(slot, best, session)) {
                best = slot;
                bestScore = score;
            }
        }
        return best;
    }

    private static boolean better(Slot candidate, Slot current, Object session) {
        boolean candidateOwn = Objects.equals(candidate.owner, session);
        boolean currentOwn = Objects.equals(current.owner, session);
        if (candidateOwn != currentOwn) {
            return candidateOwn;
        }
        return candidate.lastUsed < current.lastUsed;
    }

    public static int commonPrefix(int[] a, int[] b) {
        int n = Math.min(a.length, b.length);
        int mismatch = Arrays.mismatch(a, 0, n, b, 0, n);
        return mismatch < 0 ? n : mismatch;
    }

    public static AgentException closedError() {
        return new AgentException(ErrorCode.MODEL_UNAVAILABLE, "The model was closed.");
    }
}
