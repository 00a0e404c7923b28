package dev.oam.core.testing;

import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolReply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A {@link ToolChannel} that records every call sent and every abandon reason. Calls are answered by the test
 * ({@link #answer}) or at once by an auto-answer function.
 *
 * <p>Thread-safe: the turn sends and abandons on its own thread while the test awaits and answers.
 */
public final class RecordingToolChannel implements ToolChannel {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final Object lock = new Object();
    private final List<RecordingCall> calls = new ArrayList<>(); // guarded by lock
    private final List<Abandon> abandons = new ArrayList<>(); // guarded by lock
    private final @Nullable Function<ToolCall, ToolReply> autoAnswer;

    /** One {@code tool/cancel}: the call that is no longer needed and why. */
    public record Abandon(String callId, String reason) {}

    private RecordingToolChannel(@Nullable Function<ToolCall, ToolReply> autoAnswer) {
        this.autoAnswer = autoAnswer;
    }

    /** Calls stay outstanding until the test answers them. */
    public static RecordingToolChannel manual() {
        return new RecordingToolChannel(null);
    }

    /** Every call is answered while it is sent. */
    public static RecordingToolChannel answering(Function<ToolCall, ToolReply> answer) {
        return new RecordingToolChannel(answer);
    }

    /** Every call is answered with the same reply. */
    public static RecordingToolChannel answeringWith(ToolReply reply) {
        return new RecordingToolChannel(call -> reply);
    }

    @Override
    public PendingCall send(ToolCall call) {
        RecordingCall pending = new RecordingCall(call);
        synchronized (lock) {
            calls.add(pending);
            lock.notifyAll();
        }
        if (autoAnswer != null) {
            pending.reply.complete(autoAnswer.apply(call));
        }
        return pending;
    }

    /** The calls sent so far, in sending order. */
    public List<ToolCall> sent() {
        synchronized (lock) {
            return calls.stream().map(RecordingCall::call).toList();
        }
    }

    public List<Abandon> abandons() {
        synchronized (lock) {
            return List.copyOf(abandons);
        }
    }

    /** Waits until at least {@code count} calls were sent and returns the first {@code count}. */
    public List<ToolCall> awaitSent(int count) {
        return await(
                () -> calls.size() >= count ? sent().subList(0, count) : null,
                () -> "expected " + count + " sent calls, got " + calls.size());
    }

    /** Waits until the call with {@code callId} was abandoned and returns its reason. */
    public String awaitAbandoned(String callId) {
        return await(
                () -> abandons.stream()
                        .filter(a -> a.callId().equals(callId))
                        .map(Abandon::reason)
                        .findFirst()
                        .orElse(null),
                () -> "expected call " + callId + " to be abandoned; abandons: " + abandons);
    }

    /** Completes the outstanding call with {@code callId}. */
    public void answer(String callId, ToolReply reply) {
        RecordingCall call;
        synchronized (lock) {
            call = calls.stream()
                    .filter(c -> c.call().id().equals(callId))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no call with id " + callId + " was sent"));
        }
        call.reply.complete(reply);
    }

    private <T> T await(Supplier<@Nullable T> probe, Supplier<String> failure) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        synchronized (lock) {
            while (true) {
                T value = probe.get();
                if (value != null) {
                    return value;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError(failure.get());
                }
                try {
                    lock.wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("interrupted", e);
                }
            }
        }
    }

    private final class RecordingCall implements PendingCall {
        private final ToolCall call;
        private final CompletableFuture<ToolReply> reply = new CompletableFuture<>();

        RecordingCall(ToolCall call) {
            this.call = call;
        }

        ToolCall call() {
            return call;
        }

        @Override
        public CompletableFuture<ToolReply> reply() {
            return reply;
        }

        @Override
        public void abandon(String reason) {
            synchronized (lock) {
                abandons.add(new Abandon(call.id(), reason));
                lock.notifyAll();
            }
        }
    }
}
