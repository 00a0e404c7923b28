package dev.oam.bridge;

import dev.oam.core.internal.DebugCounters;

/**
 * What the outbound queue decided for each line, for measuring (the debug counters). Called on the deciding thread,
 * sometimes holding the queue's lock: an implementation must return at once and never call back into the engine.
 */
interface DeliveryListener {
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

    /** An input burst ended with output held: {@code byReader}, the input thread flushed it; else it woke the writer. */
    default void heldFlushed(boolean byReader) {}

    /** The writer ran dry during an input burst and left its lines unflushed for the burst's end. */
    default void writerHeldFlush() {}

    /** The listener counting into {@link DebugCounters} when they are on, else {@link #NONE}. */
    static DeliveryListener debugCounters() {
        return DebugCounters.ENABLED ? new Counting() : NONE;
    }

    /** Counts under the names {@code outbound.<producer>.<what>}. */
    final class Counting implements DeliveryListener {
        private static String name(Producer producer) {
            return producer == Producer.WORKER ? "worker" : "reader";
        }

        @Override
        public void queued(Producer producer, Queued why, long otherDeliveringNanos) {
            String prefix = "outbound." + name(producer) + ".queued.";
            String reason = switch (why) {
                case CLOSED -> "closed";
                case WRITER_DELIVERING -> "writerDelivering";
                case OTHER_DELIVERING -> "otherDelivering";
                case QUEUE_NOT_EMPTY -> "queueNotEmpty";
                case NOT_DRAINED -> "notDrained";
                case BUFFER_FULL -> "bufferFull";
                case SINK_REFUSED -> "sinkRefused";
            };
            DebugCounters.count(prefix + reason);
            if (otherDeliveringNanos >= 0) {
                // A few µs is the other producer's write; much more, it lost its CPU.
                long micros = otherDeliveringNanos / 1000;
                DebugCounters.count(prefix + "otherDelivering.for"
                        + (micros < 10 ? "<10us" : micros < 100 ? "<100us" : micros < 1000 ? "<1ms" : ">=1ms"));
            }
        }

        @Override
        public void wroteOwn(Producer producer) {
            DebugCounters.count("outbound." + name(producer) + ".direct");
        }

        @Override
        public void workerWroteQueued() {
            DebugCounters.count("outbound.worker.deliveredQueued");
        }

        @Override
        public void buffered() {
            DebugCounters.count("outbound.reader.buffered");
        }

        @Override
        public void heldFlushed(boolean byReader) {
            DebugCounters.count(byReader ? "outbound.reader.flushedHeld" : "outbound.reader.wokeWriterToFlush");
        }

        @Override
        public void writerHeldFlush() {
            DebugCounters.count("outbound.writer.heldFlush");
        }
    }
}
