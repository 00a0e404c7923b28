package dev.oam.core.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolRecord;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** The outcome of a successful turn. {@code structured} is set for schema turns only. */
public record TurnResult(
        String text, @Nullable JsonNode structured, List<ToolRecord> toolCalls, Usage usage, List<Step> steps) {
    public TurnResult {
        toolCalls = List.copyOf(toolCalls);
        steps = List.copyOf(steps);
    }
}
