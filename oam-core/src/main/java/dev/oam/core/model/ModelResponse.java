package dev.oam.core.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.tool.ToolCall;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** What one model step produced: tool calls, or an answer. */
public sealed interface ModelResponse {
    Usage usage();

    record ToolCalls(List<ToolCall> calls, Usage usage) implements ModelResponse {
        public ToolCalls {
            calls = List.copyOf(calls);
            if (calls.isEmpty()) {
                throw new IllegalArgumentException("a tool-call step needs at least one call");
            }
        }
    }

    /** An answer; {@code structured} is the parsed value when the model produced JSON. */
    record Answer(String text, @Nullable JsonNode structured, Usage usage) implements ModelResponse {}
}
