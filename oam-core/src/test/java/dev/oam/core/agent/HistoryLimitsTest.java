package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.context;
import static dev.oam.core.testing.Fixtures.json;
import static dev.oam.core.testing.Fixtures.scripted;
import static dev.oam.core.testing.Fixtures.tool;
import static dev.oam.core.testing.TestOptions.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.testing.RecordingListener;
import dev.oam.core.testing.RecordingToolChannel;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptCodec;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The history caps (docs/RELIABILITY.md, Limits): per conversation and across all attached conversations. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class HistoryLimitsTest {
    private final RecordingListener listener = new RecordingListener();

    private static Agent agent(String script) {
        return new Agent(
                scripted(script), null, List.of(tool("look")), options().build(), List.of());
    }

    private TurnResult respond(Agent agent, String prompt) throws AgentException {
        return agent.respond(
                TurnRequest.of(prompt),
                context(
                        listener,
                        RecordingToolChannel.answeringWith(
                                ToolReply.output(json("{\"seen\": \"" + "x".repeat(400) + "\"}")))));
    }

    @Test
    void theHistorySizeIsKeptUpToDateThroughTurnsResetsAndReplacements() throws Exception {
        Agent agent =
                agent("{\"steps\": [{\"text\": \"Halt!\"}, {\"toolCalls\": [{\"name\": \"look\", \"id\": \"c1\"}]}, "
                        + "{\"text\": \"A wall.\"}]}");
        respond(agent, "Hello.");
        respond(agent, "Look around.");

        assertThat(agent.historySize()).isPositive().isEqualTo(TranscriptCodec.size(agent.history()));
        List<TranscriptEntry> kept = agent.history().subList(0, 2);
        agent.replaceHistory(kept);
        assertThat(agent.historySize()).isEqualTo(TranscriptCodec.size(kept));
        agent.reset();
        assertThat(agent.historySize()).isZero();
    }

    @Test
    void aTurnThatWouldPassTheConversationCapFailsWithContextSizeExceededAndChangesNothing() throws Exception {
        HistoryLimits limits = new HistoryLimits(400, 1_000_000);
        Agent agent = agent("{\"steps\": [{\"text\": \"Halt!\"}, {\"text\": \"Never said.\"}]}");
        limits.attach(agent);
        respond(agent, "Hello.");
        List<TranscriptEntry> before = agent.history();

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent, "p".repeat(400)));

        assertThat(error.code()).isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED);
        assertThat(error.data().path("scope").asText()).isEqualTo("conversation");
        assertThat(error.data().path("limit").asLong()).isEqualTo(400);
        assertThat(error.data().path("size").asLong()).isGreaterThan(400);
        assertThat(error.getMessage())
                .contains("more than the cap of 400 per conversation")
                .contains("session/compact");
        assertThat(agent.history()).isSameAs(before);
        assertThat(listener.steps())
                .as("no model step ran for the refused turn")
                .hasSize(1);
    }

    @Test
    void toolOutputsThatWouldPassTheCapStopTheTurnBeforeTheNextStep() throws Exception {
        HistoryLimits limits = new HistoryLimits(600, 1_000_000);
        Agent agent = agent("{\"steps\": [{\"toolCalls\": [{\"name\": \"look\", \"id\": \"c1\"}]}, "
                + "{\"toolCalls\": [{\"name\": \"look\", \"id\": \"c2\"}]}, {\"text\": \"Never said.\"}]}");
        limits.attach(agent);

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent, "Look twice."));

        assertThat(error.code()).isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED);
        assertThat(agent.history()).isEmpty();
    }

    @Test
    void theTotalCapCountsEveryAttachedConversationAndADetachedOneNoLonger() throws Exception {
        HistoryLimits limits = new HistoryLimits(10_000, 700);
        Agent first = agent("{\"steps\": [{\"text\": \"" + "a".repeat(300) + "\"}]}");
        Agent second = agent("{\"steps\": [{\"text\": \"" + "b".repeat(300) + "\"}, {\"text\": \"fits now\"}]}");
        limits.attach(first);
        limits.attach(second);
        respond(first, "One.");
        assertThat(limits.used()).isEqualTo(first.historySize());

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(second, "Two."));
        assertThat(error.code()).isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED);
        assertThat(error.data().path("scope").asText()).isEqualTo("total");
        assertThat(error.data().path("limit").asLong()).isEqualTo(700);
        assertThat(error.getMessage()).contains("All conversations together");

        limits.detach(first);
        assertThat(limits.used()).isZero();
        assertThat(respond(second, "Two.").text()).isEqualTo("b".repeat(300));
    }

    @Test
    void checkRefusesARestoredHistoryThatIsTooBig() {
        HistoryLimits limits = new HistoryLimits(100, 150);
        AgentException tooBig = catchThrowableOfType(AgentException.class, () -> limits.check(null, 101));
        assertThat(tooBig.code()).isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED);
        assertThat(tooBig.data().path("scope").asText()).isEqualTo("conversation");
    }
}
