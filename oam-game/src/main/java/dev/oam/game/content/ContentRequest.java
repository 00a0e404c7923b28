package dev.oam.game.content;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.tool.ToolDefinition;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One piece of content to generate (docs/PROTOCOL.md, "Decisions and content").
 *
 * @param prompt what to write
 * @param schema the JSON Schema the content must match; keys come back in its order
 * @param instructions replaces {@link Content#DEFAULT_INSTRUCTIONS}
 * @param context facts for the prompt ({@code Facts: …}); {@code null} for none
 * @param tools client tools the model may call first (tool choice auto; none without tools)
 * @param toolTimeout time the engine has to answer a tool call; {@link Duration#ZERO} waits forever
 */
public record ContentRequest(
        String prompt,
        JsonNode schema,
        @Nullable String instructions,
        @Nullable JsonNode context,
        List<ToolDefinition> tools,
        @Nullable Double temperature,
        Duration toolTimeout) {

    public ContentRequest {
        Objects.requireNonNull(prompt, "prompt");
        schema = Objects.requireNonNull(schema, "schema").deepCopy();
        context = context == null ? null : context.deepCopy();
        tools = List.copyOf(tools);
        Objects.requireNonNull(toolTimeout, "toolTimeout");
        if (temperature != null && !(temperature >= 0 && Double.isFinite(temperature))) {
            throw new IllegalArgumentException("temperature must be a finite number ≥ 0");
        }
    }

    /** Content with the default instructions, no facts, no tools and the default 120 s tool timeout. */
    public static ContentRequest of(String prompt, JsonNode schema) {
        return new ContentRequest(prompt, schema, null, null, List.of(), null, AgentOptions.DEFAULT_TOOL_TIMEOUT);
    }
}
