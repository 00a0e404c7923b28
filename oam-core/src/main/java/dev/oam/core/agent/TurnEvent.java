package dev.oam.core.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolRecord;

/** What happens during a turn, in order (the {@code session/event} types). */
public sealed interface TurnEvent {
    record ModelStep(Step step) implements TurnEvent {}

    /** New answer text; {@code text} is the whole answer so far. */
    record Text(String delta, String text, boolean isReset) implements TurnEvent {}

    record Partial(JsonNode value) implements TurnEvent {}

    record ToolCallStarted(ToolCall call, String execution) implements TurnEvent {}

    record ToolCallCompleted(ToolRecord record) implements TurnEvent {}
}
