package dev.oam.model.llama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;
import org.jspecify.annotations.Nullable;

public final class Fixtures {
    public static final ToolDefinition OPEN_GATE = tool("open_gate", "Opens a named gate.", """
            {"type":"object","properties":{"gate":{"type":"string","enum":["north","south"]},"force":{"type":"boolean"}},
             "required":["gate"]}""");
    public static final ToolDefinition CHECK_INVENTORY =
            tool("check_inventory", "Lists what the player carries.", "{\"type\":\"object\",\"properties\":{}}");
    public static final String DECISION = """
            {"type":"object","properties":{"reasoning":{"type":"string"},"choice":{"type":"string","enum":["fight","flee"]},
             "confidence":{"type":"integer","minimum":0,"maximum":100}},"required":["reasoning","choice","confidence"]}""";

    private Fixtures() {}

    public static JsonNode json(String text) {
        try {
            return Json.parse(text);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    public static ToolDefinition tool(String name, String description, String parameters) {
        return new ToolDefinition(name, description, (ObjectNode) json(parameters), null);
    }

    public static GenerationSchema schema(String text) {
        try {
            return GenerationSchema.convert(json(text), "Response");
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    public static ModelRequest request(
            List<TranscriptEntry> entries,
            List<ToolDefinition> tools,
            ToolCallingMode mode,
            boolean respondDirectly,
            @Nullable GenerationSchema schema) {
        return request(entries, tools, mode, respondDirectly, schema, GenerationOptions.DEFAULT);
    }

    public static ModelRequest request(
            List<TranscriptEntry> entries,
            List<ToolDefinition> tools,
            ToolCallingMode mode,
            boolean respondDirectly,
            @Nullable GenerationSchema schema,
            GenerationOptions options) {
        return new ModelRequest(
                "You are the gate guard.",
                "The north gate is jammed.",
                entries,
                mode == ToolCallingMode.DISALLOWED ? List.of() : tools,
                mode,
                respondDirectly,
                schema,
                options);
    }

    /** A step of a turn whose tools are {@code listed}, of which the step may call {@code tools}. */
    public static ModelRequest step(
            List<TranscriptEntry> entries,
            List<ToolDefinition> tools,
            ToolCallingMode mode,
            boolean respondDirectly,
            @Nullable GenerationSchema schema,
            List<ToolDefinition> listed) {
        return new ModelRequest(
                "You are the gate guard.",
                "The north gate is jammed.",
                entries,
                mode == ToolCallingMode.DISALLOWED ? List.of() : tools,
                mode,
                respondDirectly,
                schema,
                GenerationOptions.DEFAULT,
                -1,
                1,
                listed);
    }

    public static List<TranscriptEntry> prompt(String text) {
        return List.of(TranscriptEntry.Prompt.of(text, null));
    }
}
