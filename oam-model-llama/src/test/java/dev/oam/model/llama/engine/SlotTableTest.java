package dev.oam.model.llama.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class SlotTableTest {
    private static final int[] SYSTEM = {-1, 10, 11, 12, 13, 14, 15, 16, 17};

    private static int[] extend(int[] base, int... more) {
        int[] out = java.util.Arrays.copyOf(base, base.length + more.length);
        System.arraycopy(more, 0, out, base.length, more.length);
        return out;
    }

    @Test
    void aSessionReturnsToItsSlotAndReportsTheCommonPrefix() throws Exception {
        SlotTable table = new SlotTable(2);
        int[] first = extend(SYSTEM, 20, 21);
        SlotTable.Lease a = table.acquire(first, "a", CancellationToken.create());
        assertThat(a.cached()).isZero();
        table.release(a, extend(first, 30, 31));
        SlotTable.Lease again = table.acquire(extend(first, 30, 31, 32), "a", CancellationToken.create());
        assertThat(again.id()).isEqualTo(a.id());
        assertThat(again.cached()).isEqualTo(first.length + 2);
        table.release(again, extend(first, 30, 31, 32));
        SlotTable.Lease same = table.acquire(extend(first, 30, 31, 32), "a", CancellationToken.create());
        assertThat(same.cached())
                .as("at least one prompt token is always evaluated")
                .isEqualTo(first.length + 2);
    }

    @Test
    void anotherSessionTakesTheEmptySlotInsteadOfEvictingACachedConversation() throws Exception {
        SlotTable table = new SlotTable(2);
        SlotTable.Lease a = table.acquire(extend(SYSTEM, 20), "a", CancellationToken.create());
        table.release(a, extend(SYSTEM, 20, 21, 22, 23, 24, 25));
        SlotTable.Lease b = table.acquire(new int[] {-1, 99, 98}, "b", CancellationToken.create());
        assertThat(b.id()).isNotEqualTo(a.id());
        table.release(b, new int[] {-1, 99, 98});
        SlotTable.Lease c = table.acquire(extend(SYSTEM, 40), "c", CancellationToken.create());
        assertThat(c.id()).as("shares the long system prompt").isEqualTo(a.id());
        assertThat(c.cached()).isEqualTo(SYSTEM.length);
    }

    @Test
    void waitersAreServedInArrivalOrderAndACancelledWaiterLeavesAtOnce() throws Exception {
        SlotTable table = new SlotTable(1);
        SlotTable.Lease running = table.acquire(SYSTEM, "a", CancellationToken.create());
        CancellationToken token = CancellationToken.create();
        CompletableFuture<SlotTable.Lease> cancelled = CompletableFuture.supplyAsync(() -> acquire(table, "b", token));
        assertThat(table.await(t -> t.waiting() == 1, 10_000)).isTrue();
        CompletableFuture<SlotTable.Lease> second =
                CompletableFuture.supplyAsync(() -> acquire(table, "c", CancellationToken.create()));
        assertThat(table.await(t -> t.waiting() == 2, 10_000)).isTrue();
        token.cancel();
        assertThatThrownBy(() -> cancelled.get(10, TimeUnit.SECONDS))
                .hasCauseInstanceOf(AgentException.class)
                .cause()
                .extracting(e -> ((AgentException) e).code())
                .isEqualTo(ErrorCode.CANCELLED);
        assertThat(table.await(t -> t.waiting() == 1, 10_000)).isTrue();
        assertThat(second).isNotDone();
        table.release(running, SYSTEM);
        SlotTable.Lease next = second.get(10, TimeUnit.SECONDS);
        assertThat(table.busySlots()).isEqualTo(1);
        table.release(next, SYSTEM);
        assertThat(table.busySlots()).isZero();
    }

    @Test
    void closingFailsWaiters() throws Exception {
        SlotTable table = new SlotTable(1);
        table.acquire(SYSTEM, "a", CancellationToken.create());
        CompletableFuture<SlotTable.Lease> waiter =
                CompletableFuture.supplyAsync(() -> acquire(table, "b", CancellationToken.create()));
        assertThat(table.await(t -> t.waiting() == 1, 10_000)).isTrue();
        table.close();
        assertThatThrownBy(() -> waiter.get(10, TimeUnit.SECONDS))
                .cause()
                .extracting(e -> ((AgentException) e).code())
                .isEqualTo(ErrorCode.MODEL_UNAVAILABLE);
    }

    private static SlotTable.Lease acquire(SlotTable table, String session, CancellationToken token) {
        try {
            return table.acquire(SYSTEM, session, token);
        } catch (AgentException e) {
            throw new java.util.concurrent.CompletionException(e);
        }
    }
}
