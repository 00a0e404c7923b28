package dev.oam.model.llama.engine;

import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A first-come, first-served wait on one lock, which a waiter leaves at once when its token is cancelled (or its thread
 * interrupted). {@link SlotTable} (a free slot) and {@code jni.ComputeGate} (the right to compute) wait through it;
 * they guard their own state with {@link #lock} and call {@link #changed}'s {@code signalAll} when it changes.
 */
public final class FairQueue {
    /** A check every waiter makes on every wake-up, before its cancellation (e.g. "the engine is closed"). */
    @FunctionalInterface
    public interface Check {
        void check() throws AgentException;
    }

    /** What the first waiter tries on every wake-up: a value ends the wait, {@code null} waits on. */
    @FunctionalInterface
    public interface Take<T> {
        @Nullable
        T take() throws AgentException;
    }

    public final ReentrantLock lock = new ReentrantLock();
    public final Condition changed = lock.newCondition();
    private final ArrayDeque<Object> waiting = new ArrayDeque<>(); // guarded by lock

    /**
     * Queues, then waits until this waiter is first and {@code take} gives a value (run under {@link #lock}).
     *
     * @throws AgentException from {@code check} or {@code take}, or {@code cancelled} once the token is cancelled
     */
    public <T> T await(CancellationToken token, Check check, Take<T> take) throws AgentException {
        Runnable wake = this::wakeAll;
        token.onCancel(wake);
        Object ticket = new Object();
        lock.lock();
        try {
            waiting.addLast(ticket);
            changed.signalAll();
            try {
                while (true) {
                    check.check();
                    if (token.isCancelled()) {
                        throw AgentException.cancelled();
                    }
                    if (waiting.peekFirst() == ticket) {
                        T taken = take.take();
                        if (taken != null) {
                            return taken;
                        }
                    }
                    try {
                        changed.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw AgentException.cancelled();
                    }
                }
            } finally {
                waiting.remove(ticket);
                changed.signalAll();
            }
        } finally {
            lock.unlock();
            token.removeListener(wake);
        }
    }

    /** Waiters now. */
    int waiting() {
        lock.lock();
        try {
            return waiting.size();
        } finally {
            lock.unlock();
        }
    }

    /** Wakes every waiter to look again. */
    void wakeAll() {
        lock.lock();
        try {
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }
}
