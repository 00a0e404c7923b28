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

    /**
     * How a tool reply of the turn reached its records, for measuring; told only to a listener that
     * {@linkplain #acceptsReplyThread() accepts the reply's thread}, on that thread, sometimes holding the tool round's
     * lock and sometimes while the turn's thread is in {@link #onEvent}, so it must return at once and be safe to call
     * alongside it. Default: nothing.
     */
    default void replyRecorded(ReplyPath path) {}

    /** Which thread recorded a tool reply (see {@link #replyRecorded}). */
    enum ReplyPath {
        /** The thread completing the reply recorded and announced it. */
        REPLY_THREAD,
        /** The reply completed on the turn's thread while it sent the call: recorded and announced there at once. */
        TURN_THREAD_AT_ONCE,
        /** The round's lock was busy: the turn's thread records the reply once it wakes. */
        LOCK_BUSY,
        /** The call was already finished (timed out or abandoned): the reply is not recorded. */
        FINISHED_ALREADY,
        /** The reply completed exceptionally: the turn's thread handles it once it wakes. */
        FAILED
    }
}
