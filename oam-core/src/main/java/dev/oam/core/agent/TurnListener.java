package dev.oam.core.agent;

/**
 * Receives a turn's events in order, on the turn's thread unless it {@linkplain #acceptsReplyThread() accepts} the
 * thread completing a tool's reply.
 */
@FunctionalInterface
public interface TurnListener {
    TurnListener NONE = event -> {};

    void onEvent(TurnEvent event);

    /**
     * Whether {@code toolCallCompleted} may reach this listener on the thread that completes the tool's reply, the
     * moment the reply arrives, instead of on the turn's thread once that thread has woken. A listener that says so
     * accepts calls from a thread other than the turn's (never two at once, each after the events before it) and
     * returns at once without blocking, as that thread is the reply's, not the turn's. Default false: every event
     * reaches it on the turn's thread.
     */
    default boolean acceptsReplyThread() {
        return false;
    }
}
