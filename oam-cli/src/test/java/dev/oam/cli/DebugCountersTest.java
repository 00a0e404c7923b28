package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.bridge.transport.DeliveryListener.Producer;
import dev.oam.bridge.transport.DeliveryListener.Queued;
import dev.oam.bridge.transport.DeliveryListener.Refused;
import dev.oam.bridge.transport.DeliveryListener.ReplyPath;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The counters {@code -Doam.debug.counters=true} prints: the names bench/README.md reads. */
class DebugCountersTest {
    @Test
    void eachPathIsCountedUnderItsNameAndPrintedInNameOrder() {
        DebugCounters counters = new DebugCounters();
        counters.toolReply(ReplyPath.REPLY_THREAD);
        counters.toolReply(ReplyPath.REPLY_THREAD);
        counters.toolReply(ReplyPath.NO_CALL_WAITING);
        counters.toolReply(ReplyPath.TURN_THREAD);
        counters.queued(Producer.READER, Queued.OTHER_DELIVERING, 50_000);
        counters.wroteOwn(Producer.WORKER);
        counters.buffered();
        counters.heldFlushed(false);
        counters.writerHeldFlush();
        counters.sinkRefused(Refused.UNREAD);

        assertThat(counters.snapshot())
                .containsExactlyInAnyOrderEntriesOf(Map.of(
                        "toolReply.replyThread.announced", 2L,
                        "toolReply.noCallWaiting", 1L,
                        "toolReply.turnThread.announced", 1L,
                        "outbound.reader.queued.otherDelivering", 1L,
                        "outbound.reader.queued.otherDelivering.for<100us", 1L,
                        "outbound.worker.direct", 1L,
                        "outbound.reader.buffered", 1L,
                        "outbound.reader.wokeWriterToFlush", 1L,
                        "outbound.writer.heldFlush", 1L,
                        "stdout.refused.unread", 1L));
        assertThat(counters.line())
                .startsWith("oam debug counters: outbound.reader.buffered=1 outbound.reader.queued.otherDelivering=1 ")
                .endsWith(" toolReply.turnThread.announced=1");
    }

    @Test
    void offUnlessThePropertyIsSet() {
        assertThat(Boolean.getBoolean("oam.debug.counters")).isFalse();
        assertThat(DebugCounters.fromProperty(dev.oam.core.Environment.of(java.util.Map.of())))
                .isSameAs(dev.oam.bridge.transport.DeliveryListener.NONE);
    }
}
