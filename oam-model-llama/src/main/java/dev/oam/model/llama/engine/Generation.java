package dev.oam.model.llama.engine;

import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.engine.GenerationEvents.Cancelled;
import dev.oam.model.llama.engine.GenerationEvents.Event;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One request on an engine, as both engines share it: the computing thread posts its events and, last,
 * {@link #complete} once it holds nothing of the request's any more; the caller {@link #await}s them. A cancel (the
 * caller's token, an interrupt, a failing {@code onDelta}, or the engine closing) sets a flag the computing thread
 * checks and posts {@link Cancelled}, so the caller returns at once; it then waits up to the engine's bound for the
 * computing thread to let the request go.
 */
public abstract class Generation {
    private final GenerationEvents events = new GenerationEvents();
    private final CountDownLatch finished = new CountDownLatch(1);
    private final long cancelWaitMillis;
    private volatile boolean cancelRequested;

    /** {@code cancelWaitMillis}: how long a cancelled caller waits for the computing thread to let the request go. */
    protected Generation(long cancelWaitMillis) {
        this.cancelWaitMillis = cancelWaitMillis;
    }

    /** Asks the computing thread to stop and posts {@link Cancelled}. Any thread. */
    public final void cancel() {
        cancelRequested = true;
        events.add(new Cancelled());
        cancelled();
    }

    /** Runs after {@link #cancel()}: an engine whose computing thread sleeps wakes it here. */
    protected void cancelled() {}

    public final boolean cancelRequested() {
        return cancelRequested;
    }

    /** Posts a non-terminal event ({@code Delta}) to the caller. Computing thread. */
    public final void post(Event event) {
        events.add(event);
    }

    /** Ends the request: the caller stops waiting after a cancel, then receives {@code terminal}. Computing thread. */
    public final void complete(Event terminal) {
        finished.countDown();
        events.add(terminal);
    }

    /** Runs on the caller's thread: forwards deltas until the request ends or {@code token} is cancelled. */
    public final EngineResult await(Consumer<String> onDelta, CancellationToken token) throws AgentException {
        return events.await(this, onDelta, token);
    }

    /** Waits, bounded, for the computing thread to let the request go after a cancel. */
    final void waitAfterCancel() {
        try {
            if (!finished.await(cancelWaitMillis, TimeUnit.MILLISECONDS)) {
                stillBusy();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Says (in the log) that the computing thread still holds the request after the wait. */
    protected abstract void stillBusy();

    /** Whether the engine was closed (a cancel the caller did not ask for is then {@code model_unavailable}). */
    protected abstract boolean engineClosed();

    /** The error a {@code Failed} event becomes. */
    protected abstract AgentException failure(Throwable error);
}
