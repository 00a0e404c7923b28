package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.context;
import static dev.oam.core.testing.Fixtures.object;
import static dev.oam.core.testing.TestOptions.options;
import static dev.oam.core.testing.TinyContextModel.answer;
import static dev.oam.core.testing.TinyContextModel.calls;
import static dev.oam.core.testing.TinyContextModel.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.testing.RecordingToolChannel;
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
 * The history index: per-turn token totals kept incrementally across turns, and rebuilt when the history is replaced,
 * reset or compacted. Checked against a brute-force recount of what each step saw.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AgentHistoryIndexTest {
    private static final int CONTEXT = 200;
    private static final int RESERVED = 20;
    private static final ToolDefinition TOOL = new ToolDefinition("g", null, object("{\"type\": \"object\"}"), null);
    private static final int TOOL_TOKENS = 20;

    private final TinyContextModel model = TinyContextModel.withContext(CONTEXT);

    private static String chars(char c, int count) {
        return String.valueOf(c).repeat(count);
    }

    private static int tokens(List<TranscriptEntry> entries) {
        return entries.stream().mapToInt(TinyContextModel::tokens).sum();
    }

    /** What a correct trimmer hides: the fewest oldest whole turns that make the step fit. */
    private static int expectedTrimmed(List<TranscriptEntry> base, List<TranscriptEntry> turn, int fixed, int budget) {
        List<List<TranscriptEntry>> turns = Compactor.splitTurns(base);
        int total = fixed + tokens(base) + tokens(turn);
        int hidden = 0;
        int hiddenEntries = 0;
        while (total > budget && hidden < turns.size()) {
            total -= tokens(turns.get(hidden));
            hiddenEntries += turns.get(hidden).size();
            hidden++;
        }
        return hiddenEntries;
    }

    @Test
    void totalsStayExactOverManyTurnsWithAndWithoutToolRounds() throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.answering(call -> ToolReply.output(
                TextNode.valueOf(chars('o', call.arguments().get("n").intValue()))));
        Agent agent = new Agent(
                model,
                null,
                List.of(TOOL),
                options().reservedResponseTokens(RESERVED).build(),
                List.of());
        int budget = CONTEXT - RESERVED;
        for (int i = 0; i < 40; i++) {
            List<TranscriptEntry> base = agent.history();
            int promptTokens = (i * 7) % 40 + 1;
            if (i % 3 == 0) {
                model.then(calls(new ToolCall("c" + i, "g", Json.object().put("n", (i * 11) % 30))));
            }
            model.then(answer(chars('r', (i * 5) % 25 + 1)));
            int before = model.requests().size();

            TurnResult result =
                    agent.respond(TurnRequest.of(chars('q', promptTokens)), context(TurnListener.NONE, channel));

            List<ModelRequest> requests =
                    model.requests().subList(before, model.requests().size());
            assertThat(requests).hasSameSizeAs(result.steps());
            for (int s = 0; s < requests.size(); s++) {
                ModelRequest request = requests.get(s);
                int trimmed = result.steps().get(s).trimmedEntries();
                List<TranscriptEntry> turnSoFar = request.entries()
                        .subList(base.size() - trimmed, request.entries().size());
                assertThat(request.entries().subList(0, base.size() - trimmed))
                        .as("turn %d step %d", i, s)
                        .isEqualTo(base.subList(trimmed, base.size()));
                assertThat(trimmed)
                        .as("turn %d step %d", i, s)
                        .isEqualTo(expectedTrimmed(base, turnSoFar, TOOL_TOKENS, budget));
                assertThat(request.inputTokens())
                        .as("turn %d step %d", i, s)
                        .isEqualTo(TOOL_TOKENS + tokens(request.entries()))
                        .isLessThanOrEqualTo(budget);
            }
        }
        assertThat(agent.history().size()).isGreaterThan(64);
    }

    @Test
    void everyEntryIsCountedOnceHoweverManyTurnsFollow() throws Exception {
        Agent agent = new Agent(
                model, null, List.of(), options().reservedResponseTokens(0).build(), List.of());

        for (int i = 0; i < 40; i++) {
            agent.respond(TurnRequest.of("prompt " + i), context(TurnListener.NONE, RecordingToolChannel.manual()));
        }

        // the last answer has not been part of any step yet
        List<TranscriptEntry> seen = agent.history().subList(0, 79);
        assertThat(seen)
                .allSatisfy(entry -> assertThat(model.timesCounted(entry)).isEqualTo(1));
        assertThat(model.timesCounted(agent.history().get(79))).isZero();
    }

    @Test
    void failedTurnDoesNotDisturbTheTotals() throws Exception {
        Agent agent = new Agent(
                model,
                null,
                List.of(),
                options().reservedResponseTokens(RESERVED).build(),
                List.of());
        model.then(answer(chars('r', 30)), failure(ErrorCode.REFUSAL, "no"), answer(chars('r', 10)));
        agent.respond(TurnRequest.of(chars('q', 20)), context(TurnListener.NONE, RecordingToolChannel.manual()));

        catchThrowableOfType(
                AgentException.class,
                () -> agent.respond(
                        TurnRequest.of(chars('q', 60)), context(TurnListener.NONE, RecordingToolChannel.manual())));
        agent.respond(TurnRequest.of(chars('q', 5)), context(TurnListener.NONE, RecordingToolChannel.manual()));

        assertThat(model.requests()).extracting(ModelRequest::inputTokens).containsExactly(20, 50 + 60, 50 + 5);
    }

    @Test
    void resetStartsTheTotalsAfresh() throws Exception {
        Agent agent = new Agent(
                model,
                null,
                List.of(),
                options().reservedResponseTokens(RESERVED).build(),
                List.of());
        agent.respond(TurnRequest.of(chars('q', 50)), context(TurnListener.NONE, RecordingToolChannel.manual()));

        agent.reset();
        agent.respond(TurnRequest.of(chars('q', 7)), context(TurnListener.NONE, RecordingToolChannel.manual()));
        agent.respond(TurnRequest.of(chars('q', 3)), context(TurnListener.NONE, RecordingToolChannel.manual()));

        // answers are "ok" (2 tokens)
        assertThat(model.requests()).extracting(ModelRequest::inputTokens).containsExactly(50, 7, 7 + 2 + 3);
    }

    @Test
    void replacedHistoryIsCountedAfresh() throws Exception {
        Agent agent = new Agent(
                model,
                null,
                List.of(),
                options().reservedResponseTokens(RESERVED).build(),
                List.of());
        agent.respond(TurnRequest.of(chars('q', 50)), context(TurnListener.NONE, RecordingToolChannel.manual()));
        List<TranscriptEntry> replacement = List.of(
                Prompt.of(chars('p', 3), null),
                Response.text(chars('r', 4)),
                Prompt.of(chars('p', 5), null),
                Response.text(chars('r', 6)));

        agent.replaceHistory(replacement);
        agent.respond(TurnRequest.of(chars('q', 1)), context(TurnListener.NONE, RecordingToolChannel.manual()));

        assertThat(model.lastRequest().entries().subList(0, 4)).isEqualTo(replacement);
        assertThat(model.lastRequest().inputTokens()).isEqualTo(3 + 4 + 5 + 6 + 1);
    }

    @Test
    void replacedHistoryOfTheSameLengthIsCountedAfresh() throws Exception {
        Agent agent = new Agent(
                model,
                null,
                List.of(),
                options().reservedResponseTokens(RESERVED).build(),
                List.of());
        agent.respond(TurnRequest.of(chars('q', 50)), context(TurnListener.NONE, RecordingToolChannel.manual()));
        agent.respond(TurnRequest.of(chars('q', 1)), context(TurnListener.NONE, RecordingToolChannel.manual()));

        agent.replaceHistory(List.of(Prompt.of(chars('p', 3), null), Response.text(chars('r', 4))));
        agent.respond(TurnRequest.of(chars('q', 1)), context(TurnListener.NONE, RecordingToolChannel.manual()));

        assertThat(model.lastRequest().inputTokens()).isEqualTo(3 + 4 + 1);
    }

    @Test
    void replacedHistoryThatSharesItsLastEntryWithTheOldOneIsStillCountedAfresh() throws Exception {
        Prompt shortPrompt = Prompt.of(chars('p', 5), null);
        Response answer = Response.text(chars('r', 5));
        Agent agent = new Agent(
                model,
                null,
                List.of(),
                options().reservedResponseTokens(RESERVED).build(),
                List.of(shortPrompt, answer));
        model.then(failure(ErrorCode.REFUSAL, "no")); // indexes [shortPrompt, answer] and changes nothing
        catchThrowableOfType(
                AgentException.class,
                () -> agent.respond(TurnRequest.of("x"), context(TurnListener.NONE, RecordingToolChannel.manual())));
        List<TranscriptEntry> edited = new ArrayList<>(List.of(Prompt.of(chars('p', 100), null), answer));
        edited.add(Prompt.of(chars('p', 2), null));
        edited.add(Response.text(chars('r', 2)));

        agent.replaceHistory(edited);
        agent.respond(TurnRequest.of(chars('q', 1)), context(TurnListener.NONE, RecordingToolChannel.manual()));

        assertThat(model.lastRequest().inputTokens()).isEqualTo(100 + 5 + 2 + 2 + 1);
    }
}
