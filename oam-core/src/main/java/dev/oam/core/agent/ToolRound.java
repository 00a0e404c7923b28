package dev.oam.core.agent;

import dev.oam.core.json.Durations;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.tool.ToolReply;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Runs the client tool calls of one step. Calls over the turn's {@code maxToolCalls}, calls of tools the step did not
 * enable and calls whose arguments do not fit the tool's parameters are answered at once with an error the model can
 * act on, and never sent. The others are all sent through the turn's {@link ToolChannel} before any answer is awaited;
 * each has its tool's timeout (the options' {@code toolTimeout} unless the tool sets one; zero: none). Records come
 * back in completion order (the calls answered at once first), each announced with {@code toolCallCompleted}; every
 * call is announced with {@code toolCallStarted} before any is sent.
 *
 * <p>Tool failures and timeouts are values for the model, never exceptions. Cancellation (and an interrupt) abandons
 * the calls still outstanding and throws {@code cancelled}; any other failure abandons them too. Runs on the turn's
 * thread; the channel's replies complete on other threads and wake it. When the turn's listener
 * {@linkplain TurnListener#acceptsReplyThread() accepts it}, the thread completing a reply also records and announces
 * it, under the round's lock, so records and events keep one order whichever thread made them.
 */
final class ToolRound {
    private ToolRound() {}

    /**
     * One call of the round. {@code refusal}: the error it was answered with at once, so it is never sent; otherwise it
     * is sent with {@code timeout} (zero: none). {@code pending} is set by the turn's thread when it is sent and only
     * read there; {@code finished} (recorded, timed out or abandoned) is guarded by the round's lock.
     */
    private static final class Slot {
        final ToolCall call;
        final @Nullable ToolReply refusal;
        final Duration timeout;
        ToolChannel.@Nullable PendingCall pending;
        boolean finished;

        Slot(ToolCall call, @Nullable ToolReply refusal, Duration timeout) {
            this.call = call;
            this.refusal = refusal;
            this.timeout = timeout;
        }
    }

    /** {@code callsBefore}: the calls the turn made in earlier rounds (they count against {@code maxToolCalls}). */
    static List<ToolRecord> run(
            List<ToolCall> calls,
            List<ToolDefinition> enabled,
            int callsBefore,
            int maxToolCalls,
            AgentOptions opts,
            TurnContext context)
            throws AgentException {
        int n = calls.size();
        List<Slot> slots = new ArrayList<>(n);
        for (ToolCall call : calls) {
            slots.add(check(call, enabled, callsBefore + slots.size(), maxToolCalls, opts));
        }
        for (ToolCall call : calls) {
            context.listener()
                    .onEvent(new TurnEvent.ToolCallStarted(call, context.tools().execution(call.name())));
        }
        BlockingQueue<Integer> done = new LinkedBlockingQueue<>();
        // Orders the records and their toolCallCompleted events. Held by the turn's thread while it records, and by
        // a thread completing a reply when the turn's listener accepts that thread (acceptsReplyThread).
        ReentrantLock lock = new ReentrantLock();
        List<ToolRecord> records = new ArrayList<>(); // guarded by lock
        boolean[] open = {false}; // guarded by lock: the calls answered at once are recorded, replies may be announced
        boolean announce = context.listener().acceptsReplyThread();
        long started; // when the calls were sent, all at once
        lock.lock();
        try {
            // Calls that were never sent completed at once, so they come first in completion order. Recorded before
            // any call is sent, so a reply that comes back at once can be announced by the thread completing it.
            for (Slot slot : slots) {
                if (slot.refusal != null) {
                    slot.finished = true;
                    record(records, slot.call, slot.refusal, 0, context);
                }
            }
            started = System.nanoTime();
            open[0] = true;
        } finally {
            lock.unlock();
        }
        for (int i = 0; i < n; i++) {
            Slot slot = slots.get(i);
            if (slot.refusal == null) {
                int index = i;
                // Attached before the call can reach the engine, so a reply that comes back while this thread is still
                // descheduled after sending is announced by the thread completing it, not later on this one.
                slot.pending = context.tools()
                        .send(
                                slot.call,
                                call -> call.reply().whenComplete((reply, error) -> {
                                    // On the completing thread: record the reply and announce it at once, one thread
                                    // wake-up before the turn's thread would. Only when the lock is free: that thread
                                    // must not wait for the turn's, which may be in its listener; the turn's thread
                                    // records it then.
                                    if (!announce) {
                                        done.offer(index);
                                        return;
                                    }
                                    if (error == null && lock.tryLock()) {
                                        try {
                                            if (open[0] && !slot.finished) {
                                                slot.finished = true;
                                                record(records, slot.call, reply, System.nanoTime() - started, context);
                                            }
                                        } finally {
                                            lock.unlock();
                                        }
                                    }
                                    done.offer(index);
                                }));
            }
        }
        Runnable wake = () -> done.offer(-1);
        CancellationToken token = context.token();
        token.onCancel(wake);
        lock.lock();
        try {
            while (records.size() < n) {
                if (token.isCancelled()) {
                    abandonAll(slots, "The request was cancelled.");
                    throw AgentException.cancelled();
                }
                long now = System.nanoTime();
                long wait = Long.MAX_VALUE;
                for (Slot slot : slots) {
                    if (!slot.finished && slot.refusal == null && !slot.timeout.isZero()) {
                        long deadline = started + nanos(slot.timeout);
                        if (deadline - now <= 0) {
                            slot.finished = true;
                            String message = "Tool '" + slot.call.name() + "' timed out after "
                                    + Durations.seconds(slot.timeout) + "s.";
                            sent(slot).abandon("Error: " + message);
                            record(records, slot.call, ToolReply.error(message), now - started, context);
                        } else {
                            wait = Math.min(wait, deadline - now);
                        }
                    }
                }
                if (records.size() == n) {
                    break;
                }
                Integer index;
                lock.unlock();
                try {
                    index = wait == Long.MAX_VALUE ? done.take() : done.poll(wait, TimeUnit.NANOSECONDS);
                } finally {
                    lock.lock();
                }
                if (index == null || index < 0 || slots.get(index).finished) {
                    continue;
                }
                Slot slot = slots.get(index);
                slot.finished = true;
                ToolReply reply = sent(slot).reply().join();
                record(records, slot.call, reply, System.nanoTime() - started, context);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abandonAll(slots, "The request was cancelled.");
            throw AgentException.cancelled();
        } catch (RuntimeException | Error e) {
            abandonAll(slots, "The request failed.");
            throw e;
        } finally {
            lock.unlock();
            token.removeListener(wake);
        }
        return List.copyOf(records);
    }

    /**
     * Call number {@code number} of the turn (counting earlier rounds): refused at once when over the budget, of a tool
     * the step did not enable, or with arguments that do not fit the tool's parameters; else sent with its tool's
     * timeout.
     */
    private static Slot check(
            ToolCall call, List<ToolDefinition> enabled, int number, int maxToolCalls, AgentOptions opts) {
        ToolDefinition definition = enabled.stream()
                .filter(t -> t.name().equals(call.name()))
                .findFirst()
                .orElse(null);
        if (number >= maxToolCalls) {
            return refused(
                    call,
                    "Tool call limit reached (maxToolCalls is " + maxToolCalls + "); '" + call.name()
                            + "' was not run. Answer with what you have.");
        }
        if (definition == null) {
            return refused(
                    call,
                    "Tool '" + call.name() + "' is not available. Available tools: "
                            + String.join(
                                    ", ",
                                    enabled.stream().map(ToolDefinition::name).toList()) + ".");
        }
        Optional<String> violation = definition.schema().firstViolation(call.arguments());
        if (violation.isPresent()) {
            return refused(
                    call,
                    "Invalid arguments for '" + call.name() + "': " + violation.get()
                            + ". Call it again with arguments that match its parameters.");
        }
        return new Slot(call, null, definition.effectiveTimeout(opts.toolTimeout()));
    }

    private static Slot refused(ToolCall call, String message) {
        return new Slot(call, ToolReply.error(message), Duration.ZERO);
    }

    /** The pending call of a slot that was sent. */
    private static ToolChannel.PendingCall sent(Slot slot) {
        return Objects.requireNonNull(slot.pending, "a sent call");
    }

    private static void record(
            List<ToolRecord> records, ToolCall call, ToolReply reply, long nanos, TurnContext context) {
        ToolRecord record = ToolRecord.of(call, reply, nanos);
        records.add(record);
        context.listener().onEvent(new TurnEvent.ToolCallCompleted(record));
    }

    private static void abandonAll(List<Slot> slots, String reason) {
        for (Slot slot : slots) {
            if (slot.pending != null && !slot.finished) {
                slot.finished = true;
                slot.pending.abandon(reason);
            }
        }
    }

    private static long nanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }
}
