package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.awaitFailure;
import static dev.oam.core.testing.Fixtures.context;
import static dev.oam.core.testing.Fixtures.scripted;
import static dev.oam.core.testing.Fixtures.startTurn;
import static dev.oam.core.testing.Fixtures.tool;
import static dev.oam.core.testing.TestOptions.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.ScriptedModel;
import dev.oam.core.testing.RecordingListener;
import dev.oam.core.testing.RecordingModel;
import dev.oam.core.testing.RecordingToolChannel;
import dev.oam.core.testing.RecordingToolChannel.Abandon;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Cancellation and the commit point: a cancelled or uncommitted turn leaves no trace. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AgentCancellationTest {
    private static final Duration PROMPTLY = Duration.ofSeconds(5);

    private final RecordingListener listener = new RecordingListener();
    private final CancellationToken token = CancellationToken.create();

    /** An agent that has already had one successful turn, so "unchanged" is not just "empty". */
    private static Agent agentWithOneTurn(String script, Duration toolTimeout) throws AgentException {
        Agent agent = new Agent(
                scripted(script),
                "You are a guard.",
                List.of(tool("open_gate"), tool("ring_bell")),
                options().toolTimeout(toolTimeout).build(),
                List.of());
        agent.respond(TurnRequest.of("Hello."), context(TurnListener.NONE, RecordingToolChannel.manual()));
        return agent;
    }

    @ParameterizedTest
    @ValueSource(longs = {0, 120_000})
    void cancellingWhileToolCallsAreOutstandingFailsPromptlyAndAbandonsThem(long timeoutMillis) throws Exception {
        Agent agent = agentWithOneTurn("""
                {"steps": [{"text": "Halt."},
                           {"toolCalls": [{"name": "open_gate", "id": "c1"}, {"name": "ring_bell", "id": "c2"}]},
                           {"text": "Never."}]}""", Duration.ofMillis(timeoutMillis));
        List<TranscriptEntry> before = agent.history();
        RecordingToolChannel channel = RecordingToolChannel.manual();
        CompletableFuture<TurnResult> turn =
                startTurn(agent, TurnRequest.of("Open up."), context(token, listener, channel));
        channel.awaitSent(2);

        long start = System.nanoTime();
        token.cancel();
        AgentException error = awaitFailure(turn, PROMPTLY);

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(PROMPTLY);
        assertThat(error.code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(channel.abandons())
                .containsExactlyInAnyOrder(
                        new Abandon("c1", "The request was cancelled."),
                        new Abandon("c2", "The request was cancelled."));
        assertThat(agent.history()).isEqualTo(before);
        assertThat(agent.historyWithTurnInProgress()).isEqualTo(before);
    }

    @Test
    void cancellingOneAnsweredAndOneOutstandingCallAbandonsOnlyTheOutstandingOne() throws Exception {
        Agent agent = agentWithOneTurn("""
                {"steps": [{"text": "Halt."},
                           {"toolCalls": [{"name": "open_gate", "id": "c1"}, {"name": "ring_bell", "id": "c2"}]}]}""", Duration.ZERO);
        RecordingToolChannel channel = RecordingToolChannel.manual();
        CompletableFuture<TurnResult> turn =
                startTurn(agent, TurnRequest.of("Open up."), context(token, listener, channel));
        channel.awaitSent(2);
        channel.answer("c1", ToolReply.output(TextNode.valueOf("opened")));
        listener.await(TurnEvent.ToolCallCompleted.class);

        token.cancel();

        assertThat(awaitFailure(turn, PROMPTLY).code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(channel.abandons()).containsExactly(new Abandon("c2", "The request was cancelled."));
    }

    @Test
    void cancellingDuringAScriptedDelayFinishesPromptly() throws Exception {
        Agent agent = agentWithOneTurn("""
                {"steps": [{"text": "Halt."}, {"text": "Much later.", "delayMs": 60000}]}""", Duration.ZERO);
        List<TranscriptEntry> before = agent.history();
        CompletableFuture<TurnResult> turn =
                startTurn(agent, TurnRequest.of("Well?"), context(token, listener, RecordingToolChannel.manual()));
        listener.await(TurnEvent.ModelStep.class);

        long start = System.nanoTime();
        token.cancel();
        AgentException error = awaitFailure(turn, PROMPTLY);

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(PROMPTLY);
        assertThat(error.code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(agent.history()).isEqualTo(before);
        assertThat(listener.texts()).isEmpty();
    }

    @Test
    void turnWithAnAlreadyCancelledTokenNeverRunsTheModel() {
        ScriptedModel model = scripted("{\"steps\": [{\"text\": \"Hi.\"}]}");
        Agent agent = new Agent(model, null, List.of(), options().build(), List.of());
        token.cancel();

        AgentException error = catchThrowableOfType(
                AgentException.class,
                () -> agent.respond(TurnRequest.of("Hi"), context(token, listener, RecordingToolChannel.manual())));

        assertThat(error.code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(model.remainingSteps()).isEqualTo(1);
        assertThat(listener.events()).isEmpty();
        assertThat(agent.history()).isEmpty();
    }

    @Test
    void cancellingDuringTheRetryBackoffFailsAsCancelled() throws Exception {
        RecordingModel model = new RecordingModel(scripted("""
                {"steps": [{"error": "generation_failed"}, {"text": "ok"}]}"""));
        Agent agent = new Agent(model, null, List.of(), options().maxAttempts(5).build(), List.of());
        CompletableFuture<TurnResult> turn =
                startTurn(agent, TurnRequest.of("Hi"), context(token, listener, RecordingToolChannel.manual()));
        model.awaitFailures(1);

        token.cancel();

        assertThat(awaitFailure(turn, PROMPTLY).code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(agent.history()).isEmpty();
    }

    @Test
    void commitPointThrowingPreventsHistoryChanges() throws Exception {
        Agent agent = agentWithOneTurn("""
                {"steps": [{"text": "Halt."}, {"toolCalls": [{"name": "open_gate", "id": "c1"}]}, {"text": "Opened."}]}""", Duration.ZERO);
        List<TranscriptEntry> before = agent.history();
        TurnContext context = new TurnContext(
                token, listener, RecordingToolChannel.answeringWith(ToolReply.output(TextNode.valueOf("ok"))), () -> {
                    throw AgentException.cancelled();
                });

        AgentException error =
                catchThrowableOfType(AgentException.class, () -> agent.respond(TurnRequest.of("Open."), context));

        assertThat(error.code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(agent.history()).isEqualTo(before);
        assertThat(agent.historyWithTurnInProgress()).isEqualTo(before);
    }

    @Test
    void commitPointRunsOnceRightBeforeTheHistoryChanges() throws Exception {
        Agent agent = new Agent(
                scripted("{\"steps\": [{\"text\": \"Hi.\"}]}"),
                null,
                List.of(),
                options().build(),
                List.of());
        List<Integer> historySizesAtCommit = new ArrayList<>();
        TurnContext context = new TurnContext(
                token,
                listener,
                RecordingToolChannel.manual(),
                () -> historySizesAtCommit.add(agent.history().size()));

        agent.respond(TurnRequest.of("Hello."), context);

        assertThat(historySizesAtCommit).containsExactly(0);
        assertThat(agent.history()).hasSize(2);
    }

    @Test
    void failedTurnNeverReachesTheCommitPoint() {
        Agent agent = new Agent(
                scripted("{\"steps\": [{\"error\": \"refusal\"}]}"),
                null,
                List.of(),
                options().build(),
                List.of());
        List<String> commits = new ArrayList<>();
        TurnContext context =
                new TurnContext(token, listener, RecordingToolChannel.manual(), () -> commits.add("commit"));

        AgentException error =
                catchThrowableOfType(AgentException.class, () -> agent.respond(TurnRequest.of("Hi"), context));

        assertThat(error.code()).isEqualTo(ErrorCode.REFUSAL);
        assertThat(commits).isEmpty();
    }
}
