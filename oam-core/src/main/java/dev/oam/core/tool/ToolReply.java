package dev.oam.core.tool;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.json.Json;

/** The engine's answer to a tool call: the raw output and whether it is an error. */
public record ToolReply(JsonNode output, boolean isError) {
    public static ToolReply output(JsonNode output) {
        return new ToolReply(output, false);
    }

    public static ToolReply error(String message) {
        return new ToolReply(TextNode.valueOf(message), true);
    }

    /** What the model sees: the text, compact JSON, or {@code Error: …}. */
    public String modelText() {
        String text = Json.text(output);
        return isError ? "Error: " + text : text;
    }
}
