package dev.oam.core.transcript;

import static dev.oam.core.testing.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class TranscriptEntryTest {
    @Test
    void idsAreFreshUppercaseUuids() {
        String first = TranscriptEntry.newId();
        String second = TranscriptEntry.newId();

        assertThat(first).isEqualTo(first.toUpperCase(Locale.ROOT)).isNotEqualTo(second);
        assertThat(UUID.fromString(first).toString()).isEqualToIgnoringCase(first);
    }

    @Test
    void promptNamesItsSchemaResponseOnlyWhenItHasOne() {
        TranscriptEntry.Prompt plain = TranscriptEntry.Prompt.of("Hi", null);
        TranscriptEntry.Prompt structured = TranscriptEntry.Prompt.of("Decide", json("{\"type\": \"object\"}"));

        assertThat(plain.schemaName()).isNull();
        assertThat(plain.schema()).isNull();
        assertThat(structured.schemaName()).isEqualTo("Response");
        assertThat(plain.id()).isNotEqualTo(plain.contentId());
    }

    @Test
    void responsesAreTextOrStructured() {
        TranscriptEntry.Response text = TranscriptEntry.Response.text("Halt!");
        TranscriptEntry.Response structured =
                TranscriptEntry.Response.structured("{\"a\":1}", json("{\"a\": 1}"), "Response");

        assertThat(text.structured()).isNull();
        assertThat(text.schemaName()).isNull();
        assertThat(structured.structured()).isEqualTo(json("{\"a\": 1}"));
        assertThat(structured.schemaName()).isEqualTo("Response");
    }

    @Test
    void toolCallsEntryCopiesItsCalls() {
        List<ToolCall> calls = new ArrayList<>(List.of(new ToolCall("c1", "open_gate", Json.object())));
        TranscriptEntry.ToolCalls entry = TranscriptEntry.ToolCalls.of(calls);

        calls.clear();

        assertThat(entry.calls()).hasSize(1);
    }
}
