package dev.oam.model.llama;

import static dev.oam.model.llama.Fixtures.prompt;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import java.util.List;
import org.junit.jupiter.api.Test;

/** An answer never hands the game the session's instructions read back (a base model continues its prompt). */
class StepOutputEchoTest {
    private static final String INSTRUCTIONS =
            "You help the player in a fantasy town. When one of your tools fits the player's "
                    + "request, call it.\nWhen none fits, answer in one short sentence.";
    private static final ModelRequest REQUEST = new ModelRequest(
            INSTRUCTIONS,
            "The north gate is jammed for today.",
            prompt("Open the east gate."),
            List.of(),
            ToolCallingMode.DISALLOWED,
            false,
            null,
            GenerationOptions.DEFAULT);

    @Test
    void instructionsReadBackAreTakenOutOfTheAnswer() throws Exception {
        ModelResponse response = StepOutput.parse(
                "The east gate is open. You help the player in a fantasy town. When one of "
                        + "your tools fits the player's request, call it.",
                REQUEST,
                new Usage(1, 0, 1));
        assertThat(((ModelResponse.Answer) response).text()).isEqualTo("The east gate is open.");
        ModelResponse asked =
                StepOutput.parse("Open the east gate. Tools you can call:\nIt opens.", REQUEST, new Usage(1, 0, 1));
        assertThat(((ModelResponse.Answer) asked).text())
                .as("the prompt itself")
                .isEqualTo("Open the east gate. Tools you can call:\nIt opens.");
        ModelResponse shared = StepOutput.parse("I help the player in a fantasy town.", REQUEST, new Usage(1, 0, 1));
        assertThat(((ModelResponse.Answer) shared).text())
                .as("shared words are no echo")
                .isEqualTo("I help the player in a fantasy town.");
    }

    @Test
    void anAnswerThatIsOnlyItsInstructionsIsNoAnswer() throws Exception {
        AgentException e = catchThrowableOfType(
                AgentException.class,
                () -> StepOutput.parse(
                        "You help the player in a fantasy "
                                + "town. When one of your tools fits the player's request, call it.\nWhen none fits, answer in one short sentence. "
                                + "The north gate is jammed for today.",
                        REQUEST,
                        new Usage(1, 0, 1)));
        assertThat(e).isNotNull();
        assertThat(e.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(e.isRetryable()).as("asked again with another draw").isTrue();
        List<dev.oam.core.transcript.TranscriptEntry> afterTool =
                new java.util.ArrayList<>(prompt("Open the east gate."));
        afterTool.add(
                dev.oam.core.transcript.TranscriptEntry.ToolOutput.of("open_gate", "call_1", "{\"opened\":true}"));
        ModelRequest answerStep = new ModelRequest(
                INSTRUCTIONS,
                null,
                afterTool,
                List.of(),
                ToolCallingMode.DISALLOWED,
                false,
                null,
                GenerationOptions.DEFAULT);
        ModelResponse empty = StepOutput.parse(
                "You help the player in a fantasy town. When one of your tools fits the player's "
                        + "request, call it.",
                answerStep,
                new Usage(1, 0, 1));
        assertThat(((ModelResponse.Answer) empty).text())
                .as("after a tool ran: no answer rather than the prompt")
                .isEmpty();
    }

    @Test
    void theStepNoteAndTheQuestionReadBackAreTakenOut() throws Exception {
        ModelRequest allowed = new ModelRequest(
                INSTRUCTIONS,
                null,
                prompt("How many iron swords do we have left?"),
                List.of(Fixtures.OPEN_GATE),
                ToolCallingMode.ALLOWED,
                false,
                null,
                GenerationOptions.DEFAULT);
        ModelResponse response = StepOutput.parse(
                "How many iron swords do we have left? Tools you can call:\nSeven are left.",
                allowed,
                new Usage(1, 0, 1));
        assertThat(((ModelResponse.Answer) response).text()).isEqualTo("Seven are left.");
    }
}
