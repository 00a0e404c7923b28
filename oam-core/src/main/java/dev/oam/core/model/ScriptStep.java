package dev.oam.core.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** One step of a scripted model (docs/PROTOCOL.md, "Scripted model"). Every kind may wait {@code delayMs} first. */
public sealed interface ScriptStep {
    long delayMs();

    record Text(String text, int chunks, long delayMs) implements ScriptStep {}

    record Template(String template, int chunks, long delayMs) implements ScriptStep {}

    record Json(JsonNode value, int chunks, long delayMs) implements ScriptStep {}

    record ToolCalls(List<Call> calls, long delayMs) implements ScriptStep {
        public ToolCalls {
            calls = List.copyOf(calls);
        }
    }

    record Error(ErrorCode code, @Nullable String message, long delayMs) implements ScriptStep {}

    record Call(String name, ObjectNode arguments, @Nullable String id) {}
}
