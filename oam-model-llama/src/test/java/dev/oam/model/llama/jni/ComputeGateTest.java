package dev.oam.model.llama.jni;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class ComputeGateTest {
    private final ComputeGate gate = new ComputeGate();
    private final Object a = "engine a";
    private final Object b = "engine b";

    @Test
    void oneEngineMayEnterManyTimesButAnotherWaitsUntilAllLeft() throws Exception {
        gate.enter(a, CancellationToken.create());
        gate.enter(a, CancellationToken.create());
        CountDownLatch entered = new CountDownLatch(1);
        CompletableFuture<Void> other = CompletableFuture.runAsync(() -> {
            enter(b, CancellationToken.create());
            entered.countDown();
        });
        assertThat(entered.await(200, TimeUnit.MILLISECONDS)).isFalse();
        gate.exit(a);
        assertThat(entered.await(200, TimeUnit.MILLISECONDS)).isFalse();
        gate.exit(a);
        other.get(10, TimeUnit.SECONDS);
        assertThat(gate.inside()).isEqualTo(1);
        gate.exit(b);
        assertThat(gate.inside()).isZero();
    }

    @Test
    void aWaitingEngineIsNotOvertakenAndItsWaitCanBeCancelled() throws Exception {
        gate.enter(a, CancellationToken.create());
        CancellationToken token = CancellationToken.create();
        CompletableFuture<Void> waiting = CompletableFuture.runAsync(() -> enter(b, token));
        CompletableFuture<Void> later = new CompletableFuture<>();
        Thread.ofPlatform().start(() -> {
            try {
                // b is queued (or about to be): a's later arrival must queue behind it or enter before it queued
                gate.enter(a, CancellationToken.create());
                later.complete(null);
            } catch (AgentException e) {
                later.completeExceptionally(e);
            }
        });
        token.cancel();
        assertThatThrownBy(() -> waiting.get(10, TimeUnit.SECONDS)).hasCauseInstanceOf(AgentException.class);
        later.get(10, TimeUnit.SECONDS);
        gate.exit(a);
        gate.exit(a);
        assertThat(gate.inside()).isZero();
    }

    private void enter(Object engine, CancellationToken token) {
        try {
            gate.enter(engine, token);
        } catch (AgentException e) {
            throw new CompletionException(e);
        }
    }
}
