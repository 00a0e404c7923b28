package dev.oam.bridge.spi;

import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One queued request of a session (or another object with a queue). It is cancelled at most once and committed at most
 * once; whichever comes first decides whether its result is reported.
 */
public final class Operation {
    enum State {
        QUEUED,
        RUNNING,
        COMMITTED,
        CANCELLED,
        DONE
    }

    private final @org.jspecify.annotations.Nullable BridgeRequest request;
    private final OperationQueue.Work work;
    private final CancellationToken token = CancellationToken.create();
    private final AtomicReference<State> state = new AtomicReference<>(State.QUEUED);

    Operation(@org.jspecify.annotations.Nullable BridgeRequest request, OperationQueue.Work work) {
        this.request = request;
        this.work = work;
    }

    /** The request this operation answers, or {@code null} for background work. */
    public @org.jspecify.annotations.Nullable BridgeRequest request() {
        return request;
    }

    public CancellationToken token() {
        return token;
    }

    OperationQueue.Work work() {
        return work;
    }

    /**
     * Call right before the operation changes state: throws when it was cancelled, and otherwise makes it immune to
     * later cancellation so the reply always matches the state.
     */
    public void commit() throws AgentException {
        if (state.compareAndSet(State.RUNNING, State.COMMITTED) || state.get() == State.COMMITTED) {
            return;
        }
        throw AgentException.cancelled();
    }

    boolean start() {
        return state.compareAndSet(State.QUEUED, State.RUNNING);
    }

    /** True when the operation's successful result may be reported (it was not cancelled first). */
    boolean finish() {
        while (true) {
            State current = state.get();
            if (current == State.CANCELLED) {
                return false;
            }
            if (state.compareAndSet(current, State.DONE)) {
                return true;
            }
        }
    }

    /** Cancels a queued or running operation; false when it had already committed or finished. */
    boolean cancel() {
        while (true) {
            State current = state.get();
            if (current != State.QUEUED && current != State.RUNNING) {
                return false;
            }
            if (state.compareAndSet(current, State.CANCELLED)) {
                token.cancel();
                return true;
            }
        }
    }

    boolean wasQueued() {
        return state.get() == State.QUEUED;
    }

    boolean isCancelled() {
        return state.get() == State.CANCELLED;
    }
}
