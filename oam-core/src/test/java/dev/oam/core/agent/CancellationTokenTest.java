package dev.oam.core.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class CancellationTokenTest {
    private final CancellationToken token = CancellationToken.create();

    @Test
    void cancelRunsEveryListenerExactlyOnce() {
        List<String> ran = new ArrayList<>();
        token.onCancel(() -> ran.add("a"));
        token.onCancel(() -> ran.add("b"));

        token.cancel();
        token.cancel();

        assertThat(ran).containsExactly("a", "b");
        assertThat(token.isCancelled()).isTrue();
    }

    @Test
    void listenerAddedAfterCancellationRunsAtOnce() {
        List<String> ran = new ArrayList<>();
        token.cancel();

        token.onCancel(() -> ran.add("late"));

        assertThat(ran).containsExactly("late");
    }

    @Test
    void removedListenerDoesNotRun() {
        List<String> ran = new ArrayList<>();
        Runnable listener = () -> ran.add("removed");
        token.onCancel(listener);

        token.removeListener(listener);
        token.cancel();

        assertThat(ran).isEmpty();
    }

    @Test
    void checkThrowsCancelledOnlyAfterCancellation() throws Exception {
        assertThatCode(token::check).doesNotThrowAnyException();

        token.cancel();

        AgentException error = catchThrowableOfType(AgentException.class, token::check);
        assertThat(error.code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(error.getMessage()).isEqualTo("The request was cancelled.");
    }

    @Test
    void sleepWaitsAtLeastTheGivenTime() throws Exception {
        long start = System.nanoTime();

        token.sleep(50);

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(50));
    }

    @Test
    void sleepOnACancelledTokenThrowsAtOnce() {
        token.cancel();

        AgentException error = catchThrowableOfType(AgentException.class, () -> token.sleep(60_000));

        assertThat(error.code()).isEqualTo(ErrorCode.CANCELLED);
    }

    @Test
    void cancelFromAnotherThreadWakesALongSleep() throws Exception {
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                token.sleep(60_000);
                outcome.complete(null);
            } catch (Throwable e) {
                outcome.complete(e);
            }
        });

        token.cancel();

        assertThat(outcome.get(5, TimeUnit.SECONDS))
                .isInstanceOfSatisfying(
                        AgentException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CANCELLED));
    }

    @Test
    void interruptedSleepFailsAsCancelledAndKeepsTheInterrupt() throws Exception {
        CompletableFuture<String> outcome = new CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            Thread.currentThread().interrupt();
            try {
                token.sleep(60_000);
                outcome.complete("slept");
            } catch (AgentException e) {
                outcome.complete(e.code().dataCode() + ", interrupted="
                        + Thread.currentThread().isInterrupted());
            }
        });

        assertThat(outcome.get(5, TimeUnit.SECONDS)).isEqualTo("cancelled, interrupted=true");
    }
}
