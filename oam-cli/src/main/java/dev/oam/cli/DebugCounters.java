package dev.oam.cli;

import dev.oam.bridge.transport.DeliveryListener;
import dev.oam.core.Environment;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts which path each outgoing line and tool reply of the stdio bridge took, by name, when the JVM runs with
 * {@code -Doam.debug.counters=true} (bench/README.md); the counts are printed to standard error when the JVM exits, one
 * line: {@code oam debug counters: name=count ...}. Not a metrics API. Any thread, lock-free.
 */
final class DebugCounters implements DeliveryListener {
    private final Map<String, LongAdder> counts = new ConcurrentHashMap<>();

    /**
     * Counters printed at exit when {@code environment}'s {@code oam.debug.counters} is true, else
     * {@link DeliveryListener#NONE}.
     */
    static DeliveryListener fromProperty(Environment environment) {
        if (!"true".equalsIgnoreCase(environment.property("oam.debug.counters"))) {
            return NONE;
        }
        DebugCounters counters = new DebugCounters();
        Runtime.getRuntime()
                .addShutdownHook(new Thread(() -> System.err.println(counters.line()), "oam-debug-counters"));
        return counters;
    }

    private void count(String name) {
        counts.computeIfAbsent(name, k -> new LongAdder()).increment();
    }

    /** The counts so far, by name. */
    Map<String, Long> snapshot() {
        Map<String, Long> out = new TreeMap<>();
        counts.forEach((name, count) -> out.put(name, count.sum()));
        return out;
    }

    String line() {
        StringBuilder out = new StringBuilder("oam debug counters:");
        snapshot()
                .forEach((name, count) ->
                        out.append(' ').append(name).append('=').append(count));
        return out.toString();
    }

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
        count(prefix + reason);
        if (otherDeliveringNanos >= 0) {
            // A few µs is the other producer's write; much more, it lost its CPU.
            long micros = otherDeliveringNanos / 1000;
            count(prefix + "otherDelivering.for"
                    + (micros < 10 ? "<10us" : micros < 100 ? "<100us" : micros < 1000 ? "<1ms" : ">=1ms"));
        }
    }

    @Override
    public void wroteOwn(Producer producer) {
        count("outbound." + name(producer) + ".direct");
    }

    @Override
    public void workerWroteQueued() {
        count("outbound.worker.deliveredQueued");
    }

    @Override
    public void buffered() {
        count("outbound.reader.buffered");
    }

    @Override
    public void heldFlushed(boolean byReader) {
        count(byReader ? "outbound.reader.flushedHeld" : "outbound.reader.wokeWriterToFlush");
    }

    @Override
    public void writerHeldFlush() {
        count("outbound.writer.heldFlush");
    }

    @Override
    public void sinkRefused(Refused why) {
        count(
                switch (why) {
                    case NOT_A_PIPE -> "stdout.refused.notAPipe";
                    case TOO_LONG -> "stdout.refused.tooLong";
                    case UNREAD -> "stdout.refused.unread";
                });
    }

    @Override
    public void toolReply(DeliveryListener.ReplyPath path) {
        count(
                switch (path) {
                    case REPLY_THREAD -> "toolReply.replyThread.announced";
                    case TURN_THREAD -> "toolReply.turnThread.announced";
                    case NO_CALL_WAITING -> "toolReply.noCallWaiting";
                });
    }
}
