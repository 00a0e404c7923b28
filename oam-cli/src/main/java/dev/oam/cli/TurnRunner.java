package dev.oam.cli;

import dev.oam.core.agent.Agent;
import dev.oam.core.agent.Step;
import dev.oam.core.agent.TurnContext;
import dev.oam.core.agent.TurnEvent;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.agent.TurnRequest;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Runs one turn of an agent for a command: command tools run as child processes, and once a tool round's command tools
 * are done, the round's external calls go to an {@link External} handler, which answers them (chat,
 * {@code --ask-tools}) or stops the turn so the caller can save it and exit 10.
 */
final class TurnRunner implements ToolChannel {
    /** Supplies the outputs of external calls, or returns {@code null} to stop the turn (exit 10). */
    interface External {
        External SUSPEND = calls -> null;

        @Nullable
        Map<String, ToolReply> answer(List<ToolCall> calls) throws AgentException;
    }

    /** How a turn ended: answered, or stopped for external tool outputs. */
    sealed interface Outcome {
        record Completed(TurnResult result) implements Outcome {}

        /** {@code turn}: the turn's entries so far (prompt, rounds, this round's command outputs). */
        record Suspended(List<TranscriptEntry> turn, SavedConversation.Pending pending) implements Outcome {}
    }

    private final Agent agent;
    private final CliTools tools;
    private final TurnListener listener;
    private final External external;
    private final CancellationToken token;

    // The current round, touched on the turn's thread only (events and sends both happen there).
    private final List<ToolCall> round = new ArrayList<>();
    private final List<ToolRecord> roundRecords = new ArrayList<>();
    private final Map<String, CompletableFuture<ToolReply>> waiting = new LinkedHashMap<>();
    private final List<ToolRecord> records = new ArrayList<>();
    private final List<Step> steps = new ArrayList<>();
    private int callsBefore;
    private int roundsDone;
    private int callsDone;
    private @Nullable List<TranscriptEntry> turnAtSuspension;
    private volatile boolean suspended;

    TurnRunner(Agent agent, CliTools tools, TurnListener listener, External external, CancellationToken token) {
        this.agent = agent;
        this.tools = tools;
        this.listener = listener;
        this.external = external;
        this.token = token;
    }

    /** A new turn. */
    Outcome run(TurnRequest request) throws AgentException {
        return finish(
                () -> agent.respond(request, context()),
                List.of(),
                Usage.ZERO,
                List.of(),
                request.maxToolRounds(),
                request.maxToolCalls());
    }

    /** A turn that had stopped for outputs: {@code turnSoFar} ends with every output of the round. */
    Outcome resume(TurnRequest request, List<TranscriptEntry> turnSoFar, SavedConversation.Pending pending)
            throws AgentException {
        callsBefore = pending.callsUsed();
        return finish(
                () -> agent.resume(request, turnSoFar, pending.roundsUsed(), pending.callsUsed(), context()),
                pending.records(),
                pending.usage(),
                pending.steps(),
                request.maxToolRounds(),
                request.maxToolCalls());
    }

    private interface Body {
        TurnResult run() throws AgentException;
    }

    private Outcome finish(
            Body body,
            List<ToolRecord> before,
            Usage usageBefore,
            List<Step> stepsBefore,
            @Nullable Integer maxRounds,
            @Nullable Integer maxCalls)
            throws AgentException {
        int stepOffset = stepsBefore.size();
        try {
            TurnResult result = body.run();
            List<ToolRecord> all = new ArrayList<>(before);
            all.addAll(result.toolCalls());
            List<Step> allSteps = new ArrayList<>(stepsBefore);
            for (Step step : result.steps()) {
                allSteps.add(renumber(step, stepOffset));
            }
            return new Outcome.Completed(new TurnResult(
                    result.text(), result.structured(), all, usageBefore.plus(result.usage()), allSteps));
        } catch (AgentException e) {
            if (!suspended) {
                throw e;
            }
            List<ToolRecord> all = new ArrayList<>(before);
            all.addAll(records);
            List<Step> allSteps = new ArrayList<>(stepsBefore);
            for (Step step : steps) {
                allSteps.add(renumber(step, stepOffset));
            }
            int maxR = maxRounds != null ? maxRounds : agent.options().maxToolRounds();
            int maxC = maxCalls != null ? maxCalls : agent.options().maxToolCalls();
            return new Outcome.Suspended(
                    turnAtSuspension,
                    new SavedConversation.Pending(
                            List.copyOf(waitingCalls),
                            roundsDone,
                            callsDone,
                            maxR,
                            maxC,
                            all,
                            usageBefore.plus(e.usage()),
                            allSteps));
        }
    }

    private static Step renumber(Step step, int offset) {
        return offset == 0
                ? step
                : new Step(
                        step.index() + offset,
                        step.completedToolRounds(),
                        step.mode(),
                        step.enabledTools(),
                        step.trimmedEntries());
    }

    private TurnContext context() {
        return new TurnContext(token, this::onEvent, this, TurnContext.CommitPoint.NONE);
    }

    private final List<ToolCall> waitingCalls = new ArrayList<>();

    private void onEvent(TurnEvent event) {
        switch (event) {
            case TurnEvent.ModelStep step -> {
                steps.add(step.step());
                round.clear();
                roundRecords.clear();
                waiting.clear();
                waitingCalls.clear();
            }
            case TurnEvent.ToolCallStarted started -> round.add(started.call());
            case TurnEvent.ToolCallCompleted completed -> {
                roundRecords.add(completed.record());
                records.add(completed.record());
            }
            default -> {}
        }
        listener.onEvent(event);
        if (event instanceof TurnEvent.ToolCallCompleted) {
            check();
        }
    }

    @Override
    public String execution(String toolName) {
        CliTools.Tool tool = tools.find(toolName);
        return tool != null && tool.command() != null ? "local" : "client";
    }

    @Override
    public PendingCall send(ToolCall call) {
        CliTools.Tool tool = tools.find(call.name());
        if (tool != null && tool.command() != null) {
            CommandRunner runner = new CommandRunner(tool.command(), call);
            CompletableFuture<ToolReply> reply = new CompletableFuture<>();
            Thread.ofVirtual().name("oam-tool-" + call.name()).start(() -> {
                try {
                    reply.complete(runner.run());
                } catch (RuntimeException e) {
                    reply.complete(ToolReply.error("Tool '" + call.name() + "' failed: " + e));
                }
            });
            return pending(reply, runner::abandon);
        }
        CompletableFuture<ToolReply> reply = new CompletableFuture<>();
        waiting.put(call.id(), reply);
        waitingCalls.add(call);
        check();
        return pending(reply, () -> {});
    }

    private static PendingCall pending(CompletableFuture<ToolReply> reply, Runnable onAbandon) {
        return new PendingCall() {
            @Override
            public CompletableFuture<ToolReply> reply() {
                return reply;
            }

            @Override
            public void abandon(String reason) {
                onAbandon.run();
            }
        };
    }

    /** When only external calls of the round are left, ask the handler for their outputs (or stop the turn). */
    private void check() {
        if (waiting.isEmpty()
                || roundRecords.size() + waiting.size() != round.size()
                || waiting.values().stream().anyMatch(CompletableFuture::isDone)) {
            return;
        }
        Map<String, ToolReply> answers;
        try {
            answers = external.answer(List.copyOf(waitingCalls));
        } catch (AgentException e) {
            token.cancel();
            return;
        }
        if (answers == null) {
            List<TranscriptEntry> all = agent.historyWithTurnInProgress();
            List<TranscriptEntry> turn =
                    new ArrayList<>(all.subList(agent.history().size(), all.size()));
            turn.add(TranscriptEntry.ToolCalls.of(List.copyOf(round)));
            for (ToolRecord record : roundRecords) {
                turn.add(TranscriptEntry.ToolOutput.of(
                        record.call().name(), record.call().id(), record.reply().modelText()));
            }
            turnAtSuspension = turn;
            roundsDone = steps.get(steps.size() - 1).completedToolRounds() + 1;
            callsDone = callsBefore + records.size() - roundRecords.size() + round.size();
            suspended = true;
            token.cancel();
            return;
        }
        for (ToolCall call : waitingCalls) {
            ToolReply reply = answers.get(call.id());
            waiting.get(call.id())
                    .complete(reply != null ? reply : ToolReply.error("No output was given for this call."));
        }
    }

    /** Whether the turn stopped for external outputs (as opposed to being cancelled). */
    boolean suspended() {
        return suspended;
    }
}
