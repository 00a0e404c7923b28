package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.context;
import static dev.oam.core.testing.Fixtures.scripted;
import static dev.oam.core.testing.Fixtures.tool;
import static dev.oam.core.testing.TestOptions.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.testing.RecordingListener;
import dev.oam.core.testing.RecordingModel;
import dev.oam.core.testing.RecordingToolChannel;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link Agent#resume}: a turn whose tool outputs came later continues as the same turn, with its spent budgets. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AgentResumeTest {
    private static final List<ToolDefinition> TOOLS = List.of(tool("open_gate"), tool("ring_bell"));

    private final RecordingListener listener = new RecordingListener();
    private final RecordingToolChannel channel =
            RecordingToolChannel.answeringWith(ToolReply.output(TextNode.valueOf("rung")));

    /** The turn so far: its prompt, one round with the open_gate call and its output. */
    private static List<TranscriptEntry> turnSoFar() {
        ToolCall call = new ToolCall("c1", "open_gate", Json.object().put("gate", "north"));
        return List.of(
                TranscriptEntry.Prompt.of("Open the north gate.", null),
                TranscriptEntry.ToolCalls.of(List.of(call)),
                TranscriptEntry.ToolOutput.of("open_gate", "c1", "opened"));
    }

    @Test
    void theTurnGoesOnWithoutANewPromptAndIsCommittedWhole() throws Exception {
        RecordingModel model = new RecordingModel(scripted("{\"steps\": [{\"text\": \"The gate is open.\"}]}"));
        Agent agent = new Agent(model, null, TOOLS, options().build(), List.of());
        TurnResult result = agent.resume(TurnRequest.of(""), turnSoFar(), 1, 1, context(listener, channel));

        assertThat(result.text()).isEqualTo("The gate is open.");
        assertThat(result.steps())
                .containsExactly(new Step(0, 1, ToolCallingMode.ALLOWED, List.of("open_gate", "ring_bell"), 0));
        assertThat(model.requests().get(0).entries()).hasSize(3); // no empty prompt was added
        assertThat(agent.history()).hasSize(4);
        assertThat(agent.history().get(0)).isInstanceOf(TranscriptEntry.Prompt.class);
        assertThat(agent.history().get(3)).isInstanceOf(TranscriptEntry.Response.class);
    }

    @Test
    void spentRoundsCountAgainstTheBudget() throws Exception {
        RecordingModel model = new RecordingModel(scripted("{\"steps\": [{\"text\": \"Done.\"}]}"));
        Agent agent = new Agent(model, null, TOOLS, options().maxToolRounds(1).build(), List.of());
        TurnResult result = agent.resume(TurnRequest.of(""), turnSoFar(), 1, 1, context(listener, channel));

        assertThat(result.steps().get(0).mode()).isEqualTo(ToolCallingMode.DISALLOWED);
    }

    @Test
    void aToolChoiceGivenAgainForcesTheContinuationsFirstStep() throws Exception {
        RecordingModel model = new RecordingModel(
                scripted("{\"steps\": [{\"toolCalls\": [{\"name\": \"ring_bell\", \"arguments\": {}}]},"
                        + "{\"text\": \"Rung.\"}]}"));
        Agent agent = new Agent(model, null, TOOLS, options().build(), List.of());
        TurnResult result = agent.resume(
                TurnRequest.of("").withToolChoice(ToolChoice.REQUIRED), turnSoFar(), 1, 1, context(listener, channel));

        assertThat(result.steps())
                .extracting(Step::mode)
                .containsExactly(ToolCallingMode.REQUIRED, ToolCallingMode.ALLOWED);
        assertThat(result.steps()).extracting(Step::completedToolRounds).containsExactly(1, 2);
        assertThat(result.toolCalls()).hasSize(1); // the records of this call only; the caller keeps the earlier ones
    }
}
