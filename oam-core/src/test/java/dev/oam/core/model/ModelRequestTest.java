package dev.oam.core.model;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;
import org.junit.jupiter.api.Test;

class ModelRequestTest {
    private static ModelRequest request(TranscriptEntry... entries) {
        return new ModelRequest(
                null,
                null,
                List.of(entries),
                List.of(),
                ToolCallingMode.ALLOWED,
                false,
                null,
                GenerationOptions.DEFAULT);
    }

    @Test
    void promptIsTheLatestPromptsText() {
        assertThat(request(
                                TranscriptEntry.Prompt.of("old", null),
                                TranscriptEntry.Response.text("ok"),
                                TranscriptEntry.Prompt.of("new", null))
                        .prompt())
                .isEqualTo("new");
        assertThat(request().prompt()).isEmpty();
    }

    @Test
    void turnToolOutputsAreOnlyThoseAfterTheLatestPromptOldestFirst() {
        ModelRequest request = request(
                TranscriptEntry.Prompt.of("old", null),
                TranscriptEntry.ToolCalls.of(List.of(new ToolCall("c0", "look", Json.object()))),
                TranscriptEntry.ToolOutput.of("look", "c0", "earlier turn"),
                TranscriptEntry.Response.text("ok"),
                TranscriptEntry.Prompt.of("new", null),
                TranscriptEntry.ToolCalls.of(List.of(new ToolCall("c1", "look", Json.object()))),
                TranscriptEntry.ToolOutput.of("look", "c1", "first"),
                TranscriptEntry.ToolCalls.of(List.of(new ToolCall("c2", "look", Json.object()))),
                TranscriptEntry.ToolOutput.of("look", "c2", "second"));

        assertThat(request.turnToolOutputs()).containsExactly("first", "second");
    }
}
