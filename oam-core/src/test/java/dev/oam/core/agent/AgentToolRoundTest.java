package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.awaitResult;
import static dev.oam.core.testing.Fixtures.context;
import static dev.oam.core.testing.Fixtures.json;
import static dev.oam.core.testing.Fixtures.scripted;
import static dev.oam.core.testing.Fixtures.startTurn;
import static dev.oam.core.testing.Fixtures.tool;
import static dev.oam.core.testing.TestOptions.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.testing.RecordingListener;
import dev.oam.core.testing.RecordingToolChannel;
import dev.oam.core.testing.RecordingToolChannel.Abandon;
import dev.oam.core.testing.TestOptions;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Client tool rounds: parallel sends, completion order, outputs as the model sees them, timeouts. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AgentToolRoundTest {
    private static final String TWO_CALLS = """
            {"steps": [{"toolCalls": [{"name": "open_gate", "arguments": {"gate": "north"}, "id": "c1"},
                                      {"name": "ring_bell", "id": "c2"}]},
                       {"template": "{toolOutputs}"}]}""";
    private static final String ONE_CALL = """
            {"steps": [{"toolCalls": [{"name": "open_gate", "arguments": {"gate": "north"}, "id": "c1"}]},
                       {"template": "Gate: {toolOutput}"}]}""";

    private final RecordingListener listener = new RecordingListener();

    private static Agent agent(String script, List<ToolDefinition> tools, TestOptions options) {
        return new Agent(scripted(script), "You are a guard.", tools, options.build(), List.of());
    }

    private static Agent agent(String script) {
        return agent(script, List.of(tool("open_gate"), tool("ring_bell")), options());
    }

    @Test
    void everyCallOfAStepIsSentBeforeAnyAnswerIsAwaited() throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.manual();
        CompletableFuture<TurnResult> turn =
                startTurn(agent(TWO_CALLS), TurnRequest.of("Open up."), context(listener, channel));

        List<ToolCall> sent = channel.awaitSent(2);

        assertThat(sent).extracting(ToolCall::id).containsExactly("c1", "c2");
        assertThat(sent.get(0).arguments()).isEqualTo(json("{\"gate\": \"north\"}"));
        assertThat(turn).isNotDone();
        channel.answer("c1", ToolReply.output(TextNode.valueOf("one")));
        channel.answer("c2", ToolReply.output(TextNode.valueOf("two")));
        awaitResult(turn);
    }

    @Test
    void recordsAreInCompletionOrder() throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.manual();
        Agent agent = agent(TWO_CALLS);
        CompletableFuture<TurnResult> turn = startTurn(agent, TurnRequest.of("Open up."), context(listener, channel));
        channel.awaitSent(2);

        channel.answer("c2", ToolReply.output(TextNode.valueOf("bell rung")));
        listener.await(
                TurnEvent.ToolCallCompleted.class,
                event -> event.record().call().id().equals("c2"));
        channel.answer("c1", ToolReply.output(TextNode.valueOf("gate opened")));
        TurnResult result = awaitResult(turn);

        assertThat(result.toolCalls()).extracting(record -> record.call().id()).containsExactly("c2", "c1");
        assertThat(listener.completedTools()).isEqualTo(result.toolCalls());
        assertThat(result.text()).isEqualTo("bell rung\ngate opened");
        List<TranscriptEntry> history = agent.history();
        assertThat(history.get(1))
                .isInstanceOfSatisfying(
                        TranscriptEntry.ToolCalls.class,
                        entry -> assertThat(entry.calls())
                                .extracting(ToolCall::id)
                                .containsExactly("c1", "c2"));
        assertThat(history.subList(2, 4))
                .extracting(entry -> ((TranscriptEntry.ToolOutput) entry).callId())
                .containsExactly("c2", "c1");
        assertThat(channel.abandons()).isEmpty();
    }

    @Test
    void eventsOfAToolRoundComeInTurnOrder() throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.answeringWith(ToolReply.output(TextNode.valueOf("opened")));

        agent(ONE_CALL).respond(TurnRequest.of("Open up."), context(listener, channel));

        List<TurnEvent> events = listener.events();
        assertThat(events).hasSize(5);
        assertThat(events.get(0)).isInstanceOf(TurnEvent.ModelStep.class);
        assertThat(events.get(1)).isInstanceOfSatisfying(TurnEvent.ToolCallStarted.class, started -> {
            assertThat(started.call().id()).isEqualTo("c1");
            assertThat(started.execution()).isEqualTo("client");
        });
        assertThat(events.get(2))
                .isInstanceOfSatisfying(
                        TurnEvent.ToolCallCompleted.class,
                        completed -> assertThat(completed.record().output()).isEqualTo(TextNode.valueOf("opened")));
        assertThat(events.get(3)).isInstanceOf(TurnEvent.ModelStep.class);
        assertThat(events.get(4)).isEqualTo(new TurnEvent.Text("Gate: opened", "Gate: opened", false));
    }

    @Test
    void toolOutputEntriesHoldWhatTheModelSawWhileRecordsKeepTheRawOutput() throws Exception {
        String script = """
                {"steps": [{"toolCalls": [{"name": "say", "id": "c1"}, {"name": "open_gate", "id": "c2"},
                                          {"name": "ring_bell", "id": "c3"}]},
                           {"text": "Done."}]}""";
        RecordingToolChannel channel = RecordingToolChannel.answering(call -> switch (call.name()) {
            case "say" -> ToolReply.output(TextNode.valueOf("The gate opened."));
            case "open_gate" -> ToolReply.output(json("{\"opened\": true, \"gate\": \"north\"}"));
            default -> ToolReply.error("Chain jammed.");
        });
        Agent agent = agent(script, List.of(tool("say"), tool("open_gate"), tool("ring_bell")), options());

        TurnResult result = agent.respond(TurnRequest.of("Open up."), context(listener, channel));

        assertThat(agent.history())
                .filteredOn(TranscriptEntry.ToolOutput.class::isInstance)
                .map(entry -> (TranscriptEntry.ToolOutput) entry)
                .extracting(TranscriptEntry.ToolOutput::toolName, TranscriptEntry.ToolOutput::text)
                .containsExactly(
                        tuple("say", "The gate opened."),
                        tuple("open_gate", "{\"opened\":true,\"gate\":\"north\"}"),
                        tuple("ring_bell", "Error: Chain jammed."));
        assertThat(result.toolCalls())
                .extracting(ToolRecord::output, ToolRecord::isError)
                .containsExactly(
                        tuple(TextNode.valueOf("The gate opened."), false),
                        tuple(json("{\"opened\": true, \"gate\": \"north\"}"), false),
                        tuple(TextNode.valueOf("Chain jammed."), true));
    }

    @Test
    void timedOutCallGetsAnErrorOutputAndIsAbandoned() throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.manual();
        Agent agent = agent(ONE_CALL, List.of(tool("open_gate")), options().toolTimeout(Duration.ofMillis(100)));

        TurnResult result = agent.respond(TurnRequest.of("Open up."), context(listener, channel));

        ToolRecord record = result.toolCalls().get(0);
        assertThat(record.isError()).isTrue();
        assertThat(record.output()).isEqualTo(TextNode.valueOf("Tool 'open_gate' timed out after 0.1s."));
        assertThat(record.durationSeconds()).isGreaterThanOrEqualTo(0.1);
        assertThat(channel.abandons())
                .containsExactly(new Abandon("c1", "Error: Tool 'open_gate' timed out after 0.1s."));
        assertThat(result.text()).isEqualTo("Gate: Error: Tool 'open_gate' timed out after 0.1s.");
        assertThat(agent.history().get(2))
                .isInstanceOfSatisfying(
                        TranscriptEntry.ToolOutput.class,
                        output -> assertThat(output.text()).isEqualTo("Error: Tool 'open_gate' timed out after 0.1s."));
    }

    @Test
    void lateReplyAfterATimeoutIsIgnored() throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.manual();
        Agent agent = agent(ONE_CALL, List.of(tool("open_gate")), options().toolTimeout(Duration.ofMillis(50)));
        TurnResult result = agent.respond(TurnRequest.of("Open up."), context(listener, channel));
        List<TranscriptEntry> before = agent.history();

        channel.answer("c1", ToolReply.output(TextNode.valueOf("opened at last")));

        assertThat(agent.history()).isEqualTo(before);
        assertThat(result.toolCalls().get(0).isError()).isTrue();
        assertThat(listener.completedTools()).hasSize(1);
    }

    @Test
    void toolsOwnTimeoutOverridesTheSessionTimeout() throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.manual();
        Agent agent = agent(ONE_CALL, List.of(tool("open_gate", Duration.ofMillis(50))), options());

        TurnResult result = agent.respond(TurnRequest.of("Open up."), context(listener, channel));

        assertThat(result.toolCalls().get(0).output())
                .isEqualTo(TextNode.valueOf("Tool 'open_gate' timed out after 0.05s."));
        assertThat(channel.abandons())
                .extracting(Abandon::reason)
                .containsExactly("Error: Tool 'open_gate' timed out after 0.05s.");
    }

    @Test
    void zeroTimeoutWaitsUntilTheCallIsAnswered() throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.manual();
        Agent agent = agent(
                TWO_CALLS,
                List.of(tool("open_gate"), tool("ring_bell", Duration.ofMillis(50))),
                options().toolTimeout(Duration.ZERO));
        CompletableFuture<TurnResult> turn = startTurn(agent, TurnRequest.of("Open up."), context(listener, channel));

        assertThat(channel.awaitAbandoned("c2")).isEqualTo("Error: Tool 'ring_bell' timed out after 0.05s.");
        assertThatThrownBy(() -> turn.get(300, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
        assertThat(channel.abandons()).extracting(Abandon::callId).containsExactly("c2");
        channel.answer("c1", ToolReply.output(TextNode.valueOf("opened")));
        TurnResult result = awaitResult(turn);

        assertThat(result.toolCalls())
                .extracting(record -> record.call().id(), ToolRecord::isError)
                .containsExactly(tuple("c2", true), tuple("c1", false));
        assertThat(result.text()).isEqualTo("Error: Tool 'ring_bell' timed out after 0.05s.\nopened");
    }

    @Test
    void channelWithoutAnEngineAnswersEveryCallWithAnError() throws Exception {
        TurnResult result = agent(ONE_CALL).respond(TurnRequest.of("Open up."), context(listener, ToolChannel.NONE));

        assertThat(result.toolCalls().get(0).isError()).isTrue();
        assertThat(result.text()).isEqualTo("Gate: Error: No engine is connected to run 'open_gate'.");
    }

    @Test
    void runningTurnShowsItsFinishedRoundsButHistoryOnlyChangesAtTheEnd() throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.manual();
        Agent agent = agent("""
                {"steps": [{"toolCalls": [{"name": "open_gate", "id": "c1"}]}, {"toolCalls": [{"name": "ring_bell", "id": "c2"}]},
                           {"text": "Done."}]}""");
        CompletableFuture<TurnResult> turn = startTurn(agent, TurnRequest.of("Open up."), context(listener, channel));

        channel.awaitSent(1);
        assertThat(agent.historyWithTurnInProgress()).singleElement().isInstanceOf(TranscriptEntry.Prompt.class);
        channel.answer("c1", ToolReply.output(TextNode.valueOf("opened")));
        channel.awaitSent(2);
        assertThat(agent.historyWithTurnInProgress())
                .extracting(Object::getClass)
                .containsExactly(
                        TranscriptEntry.Prompt.class,
                        TranscriptEntry.ToolCalls.class,
                        TranscriptEntry.ToolOutput.class);
        assertThat(agent.history()).isEmpty();
        channel.answer("c2", ToolReply.output(TextNode.valueOf("rung")));
        awaitResult(turn);

        assertThat(agent.history()).hasSize(6);
        assertThat(agent.historyWithTurnInProgress()).isEqualTo(agent.history());
    }
}
