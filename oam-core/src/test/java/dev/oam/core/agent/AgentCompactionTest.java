package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.object;
import static dev.oam.core.testing.TestOptions.options;
import static dev.oam.core.testing.TinyContextModel.answer;
import static dev.oam.core.testing.TinyContextModel.calls;
import static dev.oam.core.testing.TinyContextModel.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.testing.RecordingToolChannel;
import dev.oam.core.testing.TinyContextModel;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.core.transcript.TranscriptEntry.Prompt;
import dev.oam.core.transcript.TranscriptEntry.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code session/compact}: older turns become a summary in the context note; the recent ones stay. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AgentCompactionTest {
    private final TinyContextModel model = TinyContextModel.withContext(8192);

    /** Three turns; the first one called a tool. */
    private static final List<TranscriptEntry> HISTORY = List.of(
            Prompt.of("Open the gate.", null),
            TranscriptEntry.ToolCalls.of(List.of(new ToolCall("c1", "open_gate", object("{\"gate\": \"north\"}")))),
            TranscriptEntry.ToolOutput.of("open_gate", "c1", "{\"opened\":false}"),
            Response.text("It is jammed."),
            Prompt.of("Why?", null),
            Response.text("Rust."),
            Prompt.of("Fix it.", null),
            Response.text("Later."));

    private Agent agent(List<TranscriptEntry> history) {
        return new Agent(model, "You are a guard.", List.of(), options().build(), history);
    }

    private static TurnContext context() {
        return new TurnContext(
                CancellationToken.create(), TurnListener.NONE, ToolChannel.NONE, TurnContext.CommitPoint.NONE);
    }

    @Test
    void olderTurnsAreSummarizedIntoTheContextNoteAndDropped() throws Exception {
        Agent agent = agent(HISTORY);
        model.then(answer("  The gate is jammed by rust.\n"));

        String summary = agent.compact(1, null, context());

        assertThat(summary).isEqualTo("The gate is jammed by rust.");
        assertThat(agent.contextNote()).isEqualTo("The gate is jammed by rust.");
        assertThat(agent.history()).containsExactlyElementsOf(HISTORY.subList(6, 8));
        assertThat(agent.history().get(0)).isSameAs(HISTORY.get(6));
        assertThat(agent.instructions()).isEqualTo("You are a guard.");
    }

    @Test
    void summaryRequestShowsTheOlderTurnsAsPlainTextWithoutTools() throws Exception {
        Agent agent = agent(HISTORY);
        agent.setContextNote("It is night.");

        agent.compact(1, null, context());

        ModelRequest request = model.lastRequest();
        assertThat(request.instructions()).isEqualTo(Agent.DEFAULT_SUMMARY_INSTRUCTIONS);
        assertThat(request.contextNote()).isNull();
        assertThat(request.tools()).isEmpty();
        assertThat(request.mode()).isEqualTo(ToolCallingMode.DISALLOWED);
        assertThat(request.offerRespondDirectly()).isFalse();
        assertThat(request.schema()).isNull();
        assertThat(request.options()).isEqualTo(options().build().generationOptions());
        assertThat(request.entries()).singleElement().isInstanceOfSatisfying(Prompt.class, prompt -> {
            assertThat(prompt.schema()).isNull();
            assertThat(prompt.text()).isEqualTo("""
                    User: Open the gate.
                    Assistant called open_gate{"gate":"north"}
                    Tool open_gate returned: {"opened":false}
                    Assistant: It is jammed.
                    User: Why?
                    Assistant: Rust.""");
        });
    }

    @Test
    void summaryInstructionsOfTheCallerReplaceTheDefault() throws Exception {
        agent(HISTORY).compact(2, "Summarize in one word.", context());

        assertThat(model.lastRequest().instructions()).isEqualTo("Summarize in one word.");
    }

    @Test
    void summaryIsAppendedToAnExistingContextNote() throws Exception {
        Agent agent = agent(HISTORY);
        agent.setContextNote("  It is night.  \n");
        model.then(answer("Rusty gate."));

        agent.compact(1, null, context());

        assertThat(agent.contextNote()).isEqualTo("It is night.\n\nRusty gate.");
    }

    @Test
    void blankContextNoteIsReplacedBySummary() throws Exception {
        Agent agent = agent(HISTORY);
        agent.setContextNote("   ");
        model.then(answer("Rusty gate."));

        agent.compact(1, null, context());

        assertThat(agent.contextNote()).isEqualTo("Rusty gate.");
    }

    @Test
    void keepingNoTurnsSummarizesTheWholeConversation() throws Exception {
        Agent agent = agent(HISTORY);

        agent.compact(0, null, context());

        assertThat(agent.history()).isEmpty();
        assertThat(((Prompt) model.lastRequest().entries().get(0)).text()).endsWith("User: Fix it.\nAssistant: Later.");
    }

    @Test
    void nothingToCompactReturnsNullWithoutAskingTheModel() throws Exception {
        Agent agent = agent(HISTORY);
        agent.setContextNote("It is night.");

        assertThat(agent.compact(3, null, context())).isNull();
        assertThat(agent.compact(10, null, context())).isNull();
        assertThat(agent(List.of()).compact(0, null, context())).isNull();

        assertThat(model.requests()).isEmpty();
        assertThat(agent.history()).isEqualTo(HISTORY);
        assertThat(agent.contextNote()).isEqualTo("It is night.");
    }

    @Test
    void entriesBeforeTheFirstPromptAreATurnOfTheirOwn() throws Exception {
        List<TranscriptEntry> history = new ArrayList<>();
        history.add(Response.text("Welcome, traveller."));
        history.addAll(HISTORY.subList(4, 8));
        Agent agent = agent(history);

        agent.compact(2, null, context());

        assertThat(((Prompt) model.lastRequest().entries().get(0)).text()).isEqualTo("Assistant: Welcome, traveller.");
        assertThat(agent.history()).isEqualTo(history.subList(1, 5));
    }

    @Test
    void modelThatCallsAToolInsteadOfSummarizingFailsAndChangesNothing() {
        Agent agent = agent(HISTORY);
        agent.setContextNote("It is night.");
        model.then(calls(new ToolCall("c9", "open_gate", object("{}"))));

        AgentException error = catchThrowableOfType(AgentException.class, () -> agent.compact(1, null, context()));

        assertThat(error.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(error.getMessage()).isEqualTo("The model called a tool instead of writing the summary.");
        assertThat(agent.history()).isEqualTo(HISTORY);
        assertThat(agent.contextNote()).isEqualTo("It is night.");
    }

    @Test
    void failedSummaryChangesNothing() {
        Agent agent = agent(HISTORY);
        model.then(failure(ErrorCode.GUARDRAIL_VIOLATION, "No."));

        AgentException error = catchThrowableOfType(AgentException.class, () -> agent.compact(1, null, context()));

        assertThat(error.code()).isEqualTo(ErrorCode.GUARDRAIL_VIOLATION);
        assertThat(agent.history()).isEqualTo(HISTORY);
        assertThat(agent.contextNote()).isNull();
    }

    @Test
    void cancelledCompactionFailsAndChangesNothing() {
        Agent agent = agent(HISTORY);
        CancellationToken token = CancellationToken.create();
        token.cancel();

        AgentException error = catchThrowableOfType(
                AgentException.class,
                () -> agent.compact(
                        1,
                        null,
                        new TurnContext(token, TurnListener.NONE, ToolChannel.NONE, TurnContext.CommitPoint.NONE)));

        assertThat(error.code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(agent.history()).isEqualTo(HISTORY);
        assertThat(agent.contextNote()).isNull();
    }

    @Test
    void commitPointRefusingLeavesHistoryAndNoteUnchanged() {
        Agent agent = agent(HISTORY);
        AtomicInteger commits = new AtomicInteger();
        TurnContext context = new TurnContext(CancellationToken.create(), TurnListener.NONE, ToolChannel.NONE, () -> {
            commits.incrementAndGet();
            throw AgentException.cancelled();
        });

        AgentException error = catchThrowableOfType(AgentException.class, () -> agent.compact(1, null, context));

        assertThat(error.code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(commits).hasValue(1);
        assertThat(model.requests()).hasSize(1);
        assertThat(agent.history()).isEqualTo(HISTORY);
        assertThat(agent.contextNote()).isNull();
    }

    @Test
    void nextTurnSeesTheSummaryAndOnlyTheKeptTurnsWithExactTokenCounts() throws Exception {
        Agent agent = agent(HISTORY);
        agent.respond(
                TurnRequest.of("Before."),
                new TurnContext(
                        CancellationToken.create(),
                        TurnListener.NONE,
                        RecordingToolChannel.manual(),
                        TurnContext.CommitPoint.NONE)); // indexes the longer history first
        model.then(answer("Summary."));
        agent.compact(1, null, context());

        agent.respond(
                TurnRequest.of("And now?"),
                new TurnContext(
                        CancellationToken.create(),
                        TurnListener.NONE,
                        RecordingToolChannel.manual(),
                        TurnContext.CommitPoint.NONE));

        ModelRequest request = model.lastRequest();
        assertThat(request.contextNote()).isEqualTo("Summary.");
        assertThat(request.entries()).hasSize(3);
        assertThat(request.entries().subList(0, 2)).isEqualTo(agent.history().subList(0, 2));
        assertThat(((Response) request.entries().get(1)).text()).isEqualTo("ok");
        int expected = "You are a guard.".length()
                + "Summary.".length()
                + "Before.".length()
                + "ok".length()
                + "And now?".length();
        assertThat(request.inputTokens()).isEqualTo(expected);
    }
}
