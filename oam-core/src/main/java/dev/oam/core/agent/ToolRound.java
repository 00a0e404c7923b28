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
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

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
        ToolChannel.PendingCall[] pending = new ToolChannel.PendingCall[n];
        ToolReply[] immediate = new ToolReply[n];
        Duration[] timeouts = new Duration[n];
        for (int i = 0; i < n; i++) {
            ToolCall call = calls.get(i);
            ToolDefinition definition = enabled.stream()
                    .filter(t -> t.name().equals(call.name()))
                    .findFirst()
                    .orElse(null);
            if (callsBefore + i >= maxToolCalls) {
                immediate[i] = ToolReply.error("Tool call limit reached (maxToolCalls is " + maxToolCalls + "); '"
                        + call.name() + "' was not run. Answer with what you have.");
            } else if (definition == null) {
                immediate[i] = ToolReply.error("Tool '" + call.name() + "' is not available. Available tools: "
                        + String.join(
                                ", ", enabled.stream().map(ToolDefinition::name).toList()) + ".");
            } else if (definition.schema().firstViolation(call.arguments()).isPresent()) {
                immediate[i] = ToolReply.error("Invalid arguments for '" + call.name() + "': "
                        + definition.schema().firstViolation(call.arguments()).get()
                        + ". Call it again with arguments that match its parameters.");
            } else {
                timeouts[i] = definition.effectiveTimeout(opts.toolTimeout());
            }
        }
        for (ToolCall call : calls) {
            context.listener()
                    .onEvent(new TurnEvent.ToolCallStarted(call, context.tools().execution(call.name())));
        }
        long[] started = new long[n];
        BlockingQueue<Integer> done = new LinkedBlockingQueue<>();
        // Orders the records and their toolCallCompleted events. Held by the turn's thread while it records, and by
        // a thread completing a reply when the turn's listener accepts that thread (acceptsReplyThread).
        ReentrantLock lock = new ReentrantLock();
        List<ToolRecord> records = new ArrayList<>(); // guarded by lock
        boolean[] finished = new boolean[n]; // guarded by lock
        boolean[] open = {false}; // guarded by lock: the calls answered at once are recorded, replies may be announced
        boolean announce = context.listener().acceptsReplyThread();
        lock.lock();
        try {
            // Calls that were never sent completed at once, so they come first in completion order. Recorded before
            // any call is sent, so a reply that comes back at once can be announced by the thread completing it.
            for (int i = 0; i < n; i++) {
                if (immediate[i] != null) {
                    finished[i] = true;
                    record(records, calls.get(i), immediate[i], 0, context);
                }
            }
            for (int i = 0; i < n; i++) {
                started[i] = System.nanoTime();
            }
            open[0] = true;
        } finally {
            lock.unlock();
        }
        for (int i = 0; i < n; i++) {
            if (immediate[i] == null) {
                int index = i;
                // Attached before the call can reach the engine, so a reply that comes back while this thread is still
                // descheduled after sending is announced by the thread completing it, not later on this one.
                pending[i] = context.tools()
                        .send(
                                calls.get(i),
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
                                            if (open[0] && !finished[index]) {
                                                finished[index] = true;
                                                record(
                                                        records,
                                                        calls.get(index),
                                                        reply,
                                                        System.nanoTime() - started[index],
                                                        context);
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
                    abandonAll(pending, finished, "The request was cancelled.");
                    throw AgentException.cancelled();
                }
                long now = System.nanoTime();
                long wait = Long.MAX_VALUE;
                for (int i = 0; i < n; i++) {
                    if (!finished[i] && immediate[i] == null && !timeouts[i].isZero()) {
                        long deadline = started[i] + nanos(timeouts[i]);
                        if (deadline - now <= 0) {
                            finished[i] = true;
                            String message = "Tool '" + calls.get(i).name() + "' timed out after "
                                    + Durations.seconds(timeouts[i]) + "s.";
                            pending[i].abandon("Error: " + message);
                            record(records, calls.get(i), ToolReply.error(message), now - started[i], context);
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
                if (index == null || index < 0 || finished[index]) {
                    continue;
                }
                finished[index] = true;
                ToolReply reply = pending[index].reply().join();
                record(records, calls.get(index), reply, System.nanoTime() - started[index], context);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abandonAll(pending, finished, "The request was cancelled.");
            throw AgentException.cancelled();
        } catch (RuntimeException | Error e) {
            abandonAll(pending, finished, "The request failed.");
            throw e;
        } finally {
            lock.unlock();
            token.removeListener(wake);
        }
        return List.copyOf(records);
    }

    private static void record(
            List<ToolRecord> records, ToolCall call, ToolReply reply, long nanos, TurnContext context) {
        ToolRecord record = ToolRecord.of(call, reply, nanos);
        records.add(record);
        context.listener().onEvent(new TurnEvent.ToolCallCompleted(record));
    }

    private static void abandonAll(ToolChannel.PendingCall[] pending, boolean[] finished, String reason) {
        for (int i = 0; i < pending.length; i++) {
            if (pending[i] != null && !finished[i]) {
                finished[i] = true;
                pending[i].abandon(reason);
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
