package dev.oam.game.content;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolRecord;
import java.util.List;
import java.util.Objects;

/**
 * Generated content.
 *
 * @param content the JSON value, valid for the request's schema, object keys in schema order
 * @param toolCalls tool calls the model made first, in completion order
 */
public record GeneratedContent(JsonNode content, List<ToolRecord> toolCalls, Usage usage) {
    public GeneratedContent {
        Objects.requireNonNull(content, "content");
        Objects.requireNonNull(usage, "usage");
        toolCalls = List.copyOf(toolCalls);
    }
}
