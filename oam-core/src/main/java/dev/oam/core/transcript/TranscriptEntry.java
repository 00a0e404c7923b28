package dev.oam.core.transcript;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.tool.ToolCall;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * One entry of a conversation after its instructions. The shapes follow the FoundationModels transcript
 * (docs/PROTOCOL.md, "The transcript format") so that export and restore are a direct mapping; {@code contentId}s are
 * kept so a round trip reproduces the same entries.
 */
public sealed interface TranscriptEntry {
    String id();

    static String newId() {
        return UUID.randomUUID().toString().toUpperCase(java.util.Locale.ROOT);
    }

    /** A user prompt; {@code schema} is set when the turn asked for structured output. */
    record Prompt(
            String id,
            String contentId,
            String text,
            @Nullable JsonNode schema,
            @Nullable String schemaName) implements TranscriptEntry {
        public static Prompt of(String text, @Nullable JsonNode schema) {
            return new Prompt(newId(), newId(), text, schema, schema == null ? null : "Response");
        }
    }

    /** A model step that called tools. */
    record ToolCalls(String id, List<ToolCall> calls) implements TranscriptEntry {
        public ToolCalls {
            calls = List.copyOf(calls);
        }

        public static ToolCalls of(List<ToolCall> calls) {
            return new ToolCalls(newId(), calls);
        }
    }

    /** One tool output, as the model saw it (text, compact JSON or {@code Error: …}). */
    record ToolOutput(String id, String contentId, String toolName, String callId, String text)
            implements TranscriptEntry {
        public static ToolOutput of(String toolName, String callId, String text) {
            return new ToolOutput(newId(), newId(), toolName, callId, text);
        }
    }

    /** An answer: text, or a structured value with its schema name. */
    record Response(
            String id,
            String contentId,
            String text,
            @Nullable JsonNode structured,
            @Nullable String schemaName) implements TranscriptEntry {
        public static Response text(String text) {
            return new Response(newId(), newId(), text, null, null);
        }

        public static Response structured(String text, JsonNode value, String schemaName) {
            return new Response(newId(), newId(), text, value, schemaName);
        }
    }
}
