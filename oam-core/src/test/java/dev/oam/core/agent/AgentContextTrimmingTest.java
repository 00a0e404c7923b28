package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.context;
import static dev.oam.core.testing.Fixtures.json;
import static dev.oam.core.testing.Fixtures.object;
import static dev.oam.core.testing.TestOptions.options;
import static dev.oam.core.testing.TinyContextModel.answer;
import static dev.oam.core.testing.TinyContextModel.calls;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.testing.RecordingListener;
import dev.oam.core.testing.RecordingToolChannel;
import dev.oam.core.testing.TestOptions;
import dev.oam.core.testing.TinyContextModel;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.core.transcript.TranscriptEntry.Prompt;
import dev.oam.core.transcript.TranscriptEntry.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Context trimming ({@code trimHistory}, {@code reservedResponseTokens}): with a 200-token context, 20 tokens reserved
 * for the answer and one token per character, a step may use 180 tokens.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AgentContextTrimmingTest {
    private static final int CONTEXT = 200;
    private static final int RESERVED = 20;
    private static final String INSTRUCTIONS = "i".repeat(10);
    /** A tool whose definition costs {@code "g" + " " + "" + " " + {"type":"object"}} = 20 tokens. */
    private static final ToolDefinition TOOL = new ToolDefinition("g", null, object("{\"type\": \"object\"}"), null);

    private static final int TOOL_TOKENS = 20;

    private final TinyContextModel model = TinyContextModel.withContext(CONTEXT);
    private final RecordingListener listener = new RecordingListener();
    private RecordingToolChannel channel =
            RecordingToolChannel.answeringWith(ToolReply.output(TextNode.valueOf("done")));

    private static String chars(char c, int count) {
        return String.valueOf(c).repeat(count);
    }

    /** A committed turn of {@code promptTokens} + {@code answerTokens}. */
    private static List<TranscriptEntry> turn(int promptTokens, int answerTokens) {
        return List.of(Prompt.of(chars('p', promptTokens), null), Response.text(chars('r', answerTokens)));
    }

    @SafeVarargs
    private static List<TranscriptEntry> history(List<TranscriptEntry>... turns) {
        List<TranscriptEntry> all = new ArrayList<>();
        for (List<TranscriptEntry> turn : turns) {
            all.addAll(turn);
        }
        return List.copyOf(all);
    }

    private Agent agent(List<TranscriptEntry> history, TestOptions options) {
        return agent(history, List.of(), options);
    }

    private Agent agent(List<TranscriptEntry> history, List<ToolDefinition> tools, TestOptions options) {
        return new Agent(
                model,
                INSTRUCTIONS,
                tools,
                options.reservedResponseTokens(RESERVED).build(),
                history);
    }

    private TurnResult respond(Agent agent, int promptTokens) throws AgentException {
        return agent.respond(TurnRequest.of(chars('q', promptTokens)), context(listener, channel));
    }

    @Test
    void historyThatFitsIsSentWholeAndNothingIsTrimmed() throws Exception {
        List<TranscriptEntry> history = history(turn(20, 30), turn(20, 30));
        Agent agent = agent(history, options());

        TurnResult result = respond(agent, 40);

        ModelRequest request = model.lastRequest();
        assertThat(request.entries().subList(0, 4)).isEqualTo(history);
        assertThat(request.entries()).hasSize(5);
        assertThat(request.inputTokens()).isEqualTo(10 + 100 + 40);
        assertThat(result.steps()).extracting(Step::trimmedEntries).containsExactly(0);
    }

    @Test
    void conversationThatFillsTheBudgetExactlyIsNotTrimmed() throws Exception {
        Agent agent = agent(history(turn(20, 30), turn(20, 30)), options());

        TurnResult result = respond(agent, 70);

        assertThat(model.lastRequest().inputTokens()).isEqualTo(CONTEXT - RESERVED);
        assertThat(model.lastRequest().entries()).hasSize(5);
        assertThat(result.steps().get(0).trimmedEntries()).isZero();
    }

    @Test
    void oneTokenOverTheBudgetHidesTheOldestTurn() throws Exception {
        List<TranscriptEntry> history = history(turn(20, 30), turn(20, 30));
        Agent agent = agent(history, options());

        TurnResult result = respond(agent, 71);

        ModelRequest request = model.lastRequest();
        assertThat(request.entries().subList(0, 2)).isEqualTo(history.subList(2, 4));
        assertThat(request.entries()).hasSize(3);
        assertThat(request.inputTokens()).isEqualTo(10 + 50 + 71);
        assertThat(result.steps().get(0).trimmedEntries()).isEqualTo(2);
    }

    @Test
    void asManyOldestTurnsAreHiddenAsNeededAndNoMore() throws Exception {
        List<TranscriptEntry> history = history(turn(20, 30), turn(10, 10), turn(20, 30), turn(5, 5));
        Agent agent = agent(history, options());

        // 10 + (50 + 20 + 50 + 10) + 100 = 240: hiding 50 is not enough, hiding 50 + 20 is (170).
        TurnResult result = respond(agent, 100);

        ModelRequest request = model.lastRequest();
        assertThat(request.entries().subList(0, 4)).isEqualTo(history.subList(4, 8));
        assertThat(request.inputTokens()).isEqualTo(170);
        assertThat(result.steps().get(0).trimmedEntries()).isEqualTo(4);
    }

    @Test
    void turnWithAToolRoundIsHiddenWhole() throws Exception {
        ToolCall call = new ToolCall("c1", "open_gate", object("{\"gate\": \"n\"}"));
        List<TranscriptEntry> toolTurn = List.of(
                Prompt.of(chars('p', 20), null),
                TranscriptEntry.ToolCalls.of(List.of(call)),
                TranscriptEntry.ToolOutput.of("open_gate", "c1", chars('o', 10)),
                Response.text(chars('r', 10)));
        assertThat(toolTurn).extracting(TinyContextModel::tokens).containsExactly(20, 9 + 12, 10, 10);
        List<TranscriptEntry> history = history(toolTurn, turn(20, 30));
        Agent agent = agent(history, options());

        // 10 + 61 + 50 + 70 = 191 > 180: the whole first turn (4 entries, 61 tokens) goes.
        TurnResult result = respond(agent, 70);

        assertThat(result.steps().get(0).trimmedEntries()).isEqualTo(4);
        assertThat(model.lastRequest().entries().subList(0, 2)).isEqualTo(history.subList(4, 6));
        assertThat(model.lastRequest().inputTokens()).isEqualTo(130);
    }

    @Test
    void historyBeforeTheFirstPromptIsATurnOfItsOwnAndIsHiddenFirst() throws Exception {
        Response orphan = Response.text(chars('r', 30));
        List<TranscriptEntry> history = history(List.of(orphan), turn(20, 30));
        Agent agent = agent(history, options());

        // 10 + 30 + 50 + 91 = 181
        TurnResult result = respond(agent, 91);

        assertThat(result.steps().get(0).trimmedEntries()).isEqualTo(1);
        assertThat(model.lastRequest().entries().subList(0, 2)).isEqualTo(history.subList(1, 3));
        assertThat(model.lastRequest().inputTokens()).isEqualTo(151);
    }

    @Test
    void hiddenTurnsStayInTheHistory() throws Exception {
        List<TranscriptEntry> history = history(turn(20, 30), turn(20, 30));
        Agent agent = agent(history, options());
        model.then(answer("done"));

        respond(agent, 100);

        assertThat(agent.history()).hasSize(6);
        assertThat(agent.history().subList(0, 4)).isEqualTo(history);
        assertThat(((Prompt) agent.history().get(4)).text()).isEqualTo(chars('q', 100));
        assertThat(((Response) agent.history().get(5)).text()).isEqualTo("done");
    }

    @Test
    void reservedResponseTokensAreKeptFreeForTheAnswer() throws Exception {
        List<TranscriptEntry> history = history(turn(20, 30), turn(20, 30));
        Agent roomy = new Agent(
                model,
                INSTRUCTIONS,
                List.of(),
                options().reservedResponseTokens(50).build(),
                history);
        Agent tight = new Agent(
                model,
                INSTRUCTIONS,
                List.of(),
                options().reservedResponseTokens(51).build(),
                history);

        // 10 + 100 + 40 = 150 = 200 - 50
        TurnResult fits = roomy.respond(TurnRequest.of(chars('q', 40)), context(listener, channel));
        TurnResult trimmed = tight.respond(TurnRequest.of(chars('q', 40)), context(listener, channel));

        assertThat(fits.steps().get(0).trimmedEntries()).isZero();
        assertThat(trimmed.steps().get(0).trimmedEntries()).isEqualTo(2);
        assertThat(model.requests()).extracting(ModelRequest::inputTokens).containsExactly(150, 100);
    }

    @Test
    void instructionsContextNoteToolsAndSchemaCountTowardsTheContext() throws Exception {
        JsonNode schema = json("{\"type\": \"string\"}");
        int schemaTokens =
                Json.write(GenerationSchema.convert(schema, "Response").json()).length();
        assertThat(schemaTokens).isEqualTo("{\"type\":\"string\"}".length());
        Agent agent = agent(List.of(), List.of(TOOL), options());
        agent.setContextNote(chars('n', 7));
        model.then(answer("\"fine\""));

        agent.respond(TurnRequest.of(chars('q', 5)).withSchema(schema), context(listener, channel));

        assertThat(model.lastRequest().inputTokens()).isEqualTo(10 + 7 + TOOL_TOKENS + schemaTokens + 5);
    }

    @Test
    void onlyTheToolsOfferedInTheStepCount() throws Exception {
        Agent agent = agent(List.of(), List.of(TOOL), options());

        agent.respond(TurnRequest.of(chars('q', 5)).withToolChoice(ToolChoice.NONE), context(listener, channel));

        assertThat(model.lastRequest().tools()).isEmpty();
        assertThat(model.lastRequest().inputTokens()).isEqualTo(10 + 5);
    }

    @Test
    void toolRoundsOfTheRunningTurnCanHideMoreHistoryInLaterSteps() throws Exception {
        List<TranscriptEntry> history = history(turn(20, 30));
        Agent agent = new Agent(
                model,
                null,
                List.of(TOOL),
                options().reservedResponseTokens(RESERVED).build(),
                history);
        channel = RecordingToolChannel.answeringWith(ToolReply.output(TextNode.valueOf(chars('o', 70))));
        model.then(calls(new ToolCall("c1", "g", Json.object())), answer("done"));

        // step 0: 20 + 50 + 40 = 110; step 1 adds "g{}" (3) and the output (70): 183 > 180.
        TurnResult result = respond(agent, 40);

        assertThat(result.steps()).extracting(Step::trimmedEntries).containsExactly(0, 2);
        assertThat(listener.steps()).isEqualTo(result.steps());
        assertThat(model.requests()).extracting(ModelRequest::inputTokens).containsExactly(110, 133);
        assertThat(model.requests().get(1).entries()).hasSize(3).first().isInstanceOf(Prompt.class);
        assertThat(agent.history()).hasSize(2 + 4);
    }

    @Test
    void withoutTrimHistoryAnOverflowFailsAndTheModelIsNeverAsked() {
        List<TranscriptEntry> history = history(turn(20, 30), turn(20, 30));
        Agent agent = agent(history, options().trimHistory(false));

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent, 71));

        assertThat(error.code()).isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED);
        assertThat(error.getMessage())
                .isEqualTo("The conversation needs 181 tokens plus 20 reserved for the answer, but the "
                        + "context holds 200 (trimHistory is off). Shorten the prompt or instructions, use session/compact, or start "
                        + "a new session.");
        assertThat(model.requests()).isEmpty();
        assertThat(listener.events()).isEmpty();
        assertThat(agent.history()).isEqualTo(history);
        assertThat(agent.historyWithTurnInProgress()).isEqualTo(history);
    }

    @Test
    void withoutTrimHistoryAConversationThatFitsRunsNormally() throws Exception {
        Agent agent = agent(history(turn(20, 30), turn(20, 30)), options().trimHistory(false));

        TurnResult result = respond(agent, 70);

        assertThat(result.steps().get(0).trimmedEntries()).isZero();
        assertThat(model.lastRequest().inputTokens()).isEqualTo(180);
    }

    @Test
    void currentTurnThatDoesNotFitEvenAloneFailsAfterHidingEveryEarlierTurn() {
        List<TranscriptEntry> history = history(turn(20, 30), turn(20, 30));
        Agent agent = agent(history, options());

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent, 171));

        assertThat(error.code()).isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED);
        assertThat(error.getMessage())
                .isEqualTo("The conversation needs 181 tokens plus 20 reserved for the answer, but the "
                        + "context holds 200 even with every earlier turn hidden. Shorten the prompt or instructions, use "
                        + "session/compact, or start a new session.");
        assertThat(model.requests()).isEmpty();
        assertThat(agent.history()).isEqualTo(history);
    }

    @Test
    void promptThatFitsOnlyWithEveryEarlierTurnHiddenStillRuns() throws Exception {
        List<TranscriptEntry> history = history(turn(20, 30), turn(20, 30));
        Agent agent = agent(history, options());

        TurnResult result = respond(agent, 170);

        assertThat(result.steps().get(0).trimmedEntries()).isEqualTo(4);
        assertThat(model.lastRequest().entries()).hasSize(1);
        assertThat(model.lastRequest().inputTokens()).isEqualTo(180);
    }

    @Test
    void reservationLargerThanTheContextFailsEveryTurn() {
        Agent agent = new Agent(
                model,
                null,
                List.of(),
                options().reservedResponseTokens(CONTEXT + 1).build(),
                List.of());

        AgentException error = catchThrowableOfType(
                AgentException.class, () -> agent.respond(TurnRequest.of(""), context(listener, channel)));

        assertThat(error.code()).isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED);
        assertThat(error.getMessage()).startsWith("The conversation needs 0 tokens plus 201 reserved for the answer");
    }

    @Test
    void overflowCausedByAToolRoundFailsTheTurnAndLeavesNoTrace() {
        List<TranscriptEntry> history = history(turn(20, 30));
        Agent agent = new Agent(
                model,
                null,
                List.of(TOOL),
                options().reservedResponseTokens(RESERVED).build(),
                history);
        channel = RecordingToolChannel.answeringWith(ToolReply.output(TextNode.valueOf(chars('o', 120))));
        model.then(calls(new ToolCall("c1", "g", Json.object())), answer("never"));

        // step 1 needs 20 + 40 + 3 + 120 = 183 even without the earlier turn
        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent, 40));

        assertThat(error.code()).isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED);
        assertThat(error.getMessage()).startsWith("The conversation needs 183 tokens plus 20 reserved");
        assertThat(channel.sent()).extracting(ToolCall::id).containsExactly("c1");
        assertThat(model.requests()).hasSize(1);
        assertThat(listener.steps()).hasSize(1);
        assertThat(agent.history()).isEqualTo(history);
    }
}
