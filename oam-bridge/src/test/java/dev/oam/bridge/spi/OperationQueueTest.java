package dev.oam.bridge.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** What session/list and npc/list report of a queue: an operation not yet done is always running or waiting. */
@Timeout(120)
class OperationQueueTest {

    @Test
    void theLoadCountsTheRunningAndTheWaitingOperations() throws Exception {
        OperationQueue queue = new OperationQueue("load");
        assertThat(queue.load()).isEqualTo(new OperationQueue.Load(false, 0));
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(2);
        queue.submitBackground(op -> {
            started.countDown();
            release.await();
            done.countDown();
        });
        assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
        queue.submitBackground(op -> done.countDown());
        assertThat(queue.load()).isEqualTo(new OperationQueue.Load(true, 1));
        release.countDown();
        assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void anOperationMovingFromWaitingToRunningIsNeverMissed() throws Exception {
        // The worker ends the first operation, then takes the second off the queue and marks it running; a reading of
        // the two counts meanwhile must see the second in one or the other. Busy and pending read one after the other
        // (as session/list did) missed it now and then: neither busy nor pending.
        OperationQueue queue = new OperationQueue("handover");
        AtomicReference<OperationQueue.Load> missed = new AtomicReference<>();
        for (int round = 0; round < 500 && missed.get() == null; round++) {
            CountDownLatch started = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            CountDownLatch second = new CountDownLatch(1);
            CountDownLatch secondDone = new CountDownLatch(1);
            queue.submitBackground(op -> {
                started.countDown();
                release.await();
            });
            assertThat(started.await(30, TimeUnit.SECONDS)).isTrue();
            queue.submitBackground(op -> {
                second.await(); // outstanding until the test lets it go
                secondDone.countDown();
            });
            CountDownLatch reading = new CountDownLatch(1);
            Thread reader = Thread.ofPlatform().start(() -> {
                reading.countDown();
                while (second.getCount() > 0) {
                    OperationQueue.Load load = queue.load();
                    if (!load.busy() && load.pending() == 0 && second.getCount() > 0) {
                        missed.compareAndSet(null, load);
                        return;
                    }
                }
            });
            assertThat(reading.await(30, TimeUnit.SECONDS)).isTrue();
            release.countDown(); // the handover happens while the reader reads
            while (!queue.load().equals(new OperationQueue.Load(true, 0)) && missed.get() == null) {
                Thread.onSpinWait();
            }
            second.countDown();
            assertThat(secondDone.await(30, TimeUnit.SECONDS)).isTrue();
            reader.join();
        }
        assertThat(missed.get())
                .as("a reading while an operation was outstanding")
                .isNull();
    }
}
