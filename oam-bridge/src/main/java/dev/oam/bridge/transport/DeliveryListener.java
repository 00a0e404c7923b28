package dev.oam.bridge.transport;

/**
 * Which path each outgoing line and tool reply took, for measuring; given by a {@link StreamSink} to the engine writing
 * to it ({@link StreamSink#deliveryListener}). Called on the deciding thread (any, several at once), sometimes holding
 * the engine's outbound lock: an implementation must return at once and never call back into the engine.
 */
public interface DeliveryListener {
    /** Listens to nothing. */
    DeliveryListener NONE = new DeliveryListener() {};

    /** Who produced a line that could have been delivered by its own thread. */
    enum Producer {
        WORKER,
        READER
    }

    /** Why such a line was queued for the writer thread instead. */
    enum Queued {
        CLOSED,
        WRITER_DELIVERING,
        OTHER_DELIVERING,
        QUEUE_NOT_EMPTY,
        NOT_DRAINED,
        BUFFER_FULL,
        SINK_REFUSED
    }

    /** Why a stream sink refused a line the input thread would have written itself. */
    enum Refused {
        /** The sink cannot tell whether a write would block (its descriptor is not a pipe it can ask). */
        NOT_A_PIPE,
        /** The line (with what was sent since the last flush) is longer than the sink is sure to take. */
        TOO_LONG,
        /** The peer has not read everything written before. */
        UNREAD
    }

    /**
     * A producer's line was queued; {@code otherDeliveringNanos}: how long another producer had been delivering
     * ({@link Queued#OTHER_DELIVERING}), else -1.
     */
    default void queued(Producer producer, Queued why, long otherDeliveringNanos) {}

    /** A producer wrote and flushed its own line. */
    default void wroteOwn(Producer producer) {}

    /** A worker that wrote its own line also wrote the lines queued meanwhile. */
    default void workerWroteQueued() {}

    /** The input thread put its line into the sink's buffer during an input burst. */
    default void buffered() {}

    /**
     * An input burst ended with output held: {@code byReader}, the input thread flushed it; else it woke the writer.
     */
    default void heldFlushed(boolean byReader) {}

    /** The writer ran dry during an input burst and left its lines unflushed for the burst's end. */
    default void writerHeldFlush() {}

    /** The sink refused a direct write ({@link StreamSink#takesWithoutBlocking}). */
    default void sinkRefused(Refused why) {}

    /** Who announced a client's reply to a {@code tool/call} ({@code toolCallCompleted}), as the engine saw it. */
    enum ReplyPath {
        /** The thread that read the reply: it recorded and announced it before it read on (a turn sending events). */
        REPLY_THREAD,
        /** The turn's thread, once woken: its round's lock was busy, or the turn announces on its own thread only. */
        TURN_THREAD,
        /** Nobody: no call waits for that id (it timed out, was abandoned, or never was). */
        NO_CALL_WAITING
    }

    /** How a client's reply to a {@code tool/call} reached its turn; told on the thread that read the reply. */
    default void toolReply(ReplyPath path) {}
}
