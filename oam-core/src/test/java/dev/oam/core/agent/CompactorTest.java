package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.object;
import static dev.oam.core.testing.TestOptions.options;
import static dev.oam.core.testing.TinyContextModel.answer;
import static dev.oam.core.testing.TinyContextModel.calls;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.testing.TinyContextModel;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.core.transcript.TranscriptEntry.Prompt;
import dev.oam.core.transcript.TranscriptEntry.Response;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** The compactor on its own: cutting a history, the session format, and the one summary call with any format. */
class CompactorTest {
    private static final List<TranscriptEntry> HISTORY = List.of(
            Response.text("Welcome."), // before the first prompt: a turn of its own
            Prompt.of("Open the gate.", null),
            TranscriptEntry.ToolCalls.of(List.of(new ToolCall("c1", "open_gate", object("{\"gate\": \"north\"}")))),
            TranscriptEntry.ToolOutput.of("open_gate", "c1", "opened"),
            Response.text("Done."),
            Prompt.of("Thanks.", null),
            Response.text("Any time."));

    private final TinyContextModel model = TinyContextModel.withContext(1000);

    @Test
    void splitKeepsTheMostRecentWholeTurns() {
        Compactor.Split split = Compactor.split(HISTORY, 1);

        assertThat(split).isNotNull();
        assertThat(split.older()).containsExactlyElementsOf(HISTORY.subList(0, 5));
        assertThat(split.kept()).containsExactlyElementsOf(HISTORY.subList(5, 7));
        assertThat(Compactor.split(HISTORY, 0).kept()).isEmpty();
    }

    @Test
    void splitFindsNothingToCompactWithinTheKeptTurns() {
        assertThat(Compactor.split(HISTORY, 3)).isNull();
        assertThat(Compactor.split(List.of(), 0)).isNull();
        assertThatThrownBy(() -> Compactor.split(HISTORY, -1))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("keepRecentTurns");
    }

    @Test
    void theTranscriptFormatWritesOneLinePerEntry() {
        Compactor.Format format = Compactor.transcript(null);

        assertThat(format.instructions()).isEqualTo(Compactor.DEFAULT_INSTRUCTIONS);
        assertThat(Compactor.transcript("Be brief.").instructions()).isEqualTo("Be brief.");
        assertThat(format.prompt(HISTORY.subList(0, 5), "ignored")).isEqualTo("""
                Assistant: Welcome.
                User: Open the gate.
                Assistant called open_gate{"gate":"north"}
                Tool open_gate returned: opened
                Assistant: Done.""");
    }

    @Test
    void summarizeAsksOnceWithTheFormatsInstructionsAndPromptAndNoTools() throws AgentException {
        model.then(answer("  The gate is open.\n"));

        String summary = new Compactor(model, options().build())
                .summarize(HISTORY.subList(1, 5), null, Compactor.transcript("Sum up."), CancellationToken.create());

        assertThat(summary).isEqualTo("The gate is open.");
        ModelRequest request = model.lastRequest();
        assertThat(model.requests()).hasSize(1);
        assertThat(request.instructions()).isEqualTo("Sum up.");
        assertThat(request.contextNote()).isNull();
        assertThat(request.entries()).hasSize(1);
        assertThat(request.prompt()).startsWith("User: Open the gate.\nAssistant called open_gate");
        assertThat(request.tools()).isEmpty();
        assertThat(request.mode()).isEqualTo(ToolCallingMode.DISALLOWED);
        assertThat(request.schema()).isNull();
    }

    @Test
    void aFormatOfItsOwnSeesTheEntriesAndTheSummarySoFar() throws AgentException {
        List<Object> seen = new ArrayList<>();
        Compactor.Format memory = new Compactor.Format() {
            @Override
            public String instructions() {
                return "Keep the innkeeper's memory.";
            }

            @Override
            public String prompt(List<TranscriptEntry> entries, @Nullable String summarySoFar) {
                seen.add(entries);
                seen.add(summarySoFar);
                return "Summary so far: " + summarySoFar + "\n" + entries.size() + " entries";
            }
        };
        model.then(answer("Met the player."));

        String summary = new Compactor(model, options().build())
                .summarize(HISTORY.subList(5, 7), "Knows the player.", memory, CancellationToken.create());

        assertThat(summary).isEqualTo("Met the player.");
        assertThat(seen).containsExactly(HISTORY.subList(5, 7), "Knows the player.");
        assertThat(model.lastRequest().instructions()).isEqualTo("Keep the innkeeper's memory.");
        assertThat(model.lastRequest().prompt()).isEqualTo("Summary so far: Knows the player.\n2 entries");
    }

    @Test
    void aToolCallInsteadOfASummaryFails() {
        model.then(calls(new ToolCall("c9", "open_gate", object("{}"))));

        AgentException error = catchThrowableOfType(
                AgentException.class,
                () -> new Compactor(model, options().build())
                        .summarize(HISTORY, null, Compactor.transcript(null), CancellationToken.create()));

        assertThat(error.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(error.getMessage()).isEqualTo("The model called a tool instead of writing the summary.");
    }

    @Test
    void aCancelledTokenStopsTheSummary() {
        CancellationToken token = CancellationToken.create();
        token.cancel();

        AgentException error = catchThrowableOfType(
                AgentException.class,
                () -> new Compactor(model, options().build())
                        .summarize(HISTORY, null, Compactor.transcript(null), token));

        assertThat(error.code()).isEqualTo(ErrorCode.CANCELLED);
    }
}
