package dev.oam.bridge.game;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeRequest;
import dev.oam.bridge.spi.MethodRegistry;
import dev.oam.bridge.spi.Params;
import dev.oam.bridge.spi.Reply;
import dev.oam.bridge.spi.ToolDefinitions;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.game.content.Content;
import dev.oam.game.content.ContentRequest;
import dev.oam.game.content.GeneratedContent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code content/generate} (docs/GAMES.md, "Content"): schema-shaped content from a one-off agent. Params and the
 * schema are checked on the dispatcher; the generation runs as deferred work.
 */
final class ContentMethods {
    static final String GENERATE = "content/generate";

    /** The subject schema warnings name: {@code Content: #/properties/code: pattern …}. */
    static final String SCHEMA_NAME = "Content";

    private ContentMethods() {}

    static void register(MethodRegistry.Builder registry, GameExtension game) {
        registry.register(GENERATE, ContentMethods::generate);
    }

    private static Reply generate(BridgeRequest request) throws BridgeException {
        Params params = request.params();
        String prompt = params.string("prompt");
        JsonNode schema = params.require("schema");
        if (!schema.isObject()) {
            throw params.mistyped("schema", "a JSON Schema object");
        }
        List<String> schemaWarnings;
        try {
            schemaWarnings = GenerationSchema.convert(schema, SCHEMA_NAME).warnings();
        } catch (SchemaException e) {
            throw ToolDefinitions.invalidSchema(e, params.path("schema"));
        }
        String instructions = params.optionalString("instructions");
        JsonNode context = params.get("context");
        ToolDefinitions.Parsed parsedTools = ToolDefinitions.parseCounted(params.get("tools"), params.path("tools"));
        List<ToolDefinition> tools = parsedTools.tools();
        List<String> toolWarnings = new ArrayList<>(parsedTools.warnings());
        Duration timeout = params.optionalSeconds("toolTimeoutSeconds");
        Double temperature = params.optionalNumber("temperature", 0);
        LanguageModel model = request.context().makeModel(params.get("model"), params.path("model"));
        List<String> warnings = new ArrayList<>(params.unknownWarnings());
        warnings.addAll(toolWarnings);
        warnings.addAll(schemaWarnings);
        ContentRequest content = new ContentRequest(
                prompt,
                schema,
                instructions,
                context,
                tools,
                temperature,
                timeout != null ? timeout : request.context().defaultToolTimeout());
        ToolChannel channel = request.toolChannel(Json.object());
        return Reply.deferred(token -> {
            GeneratedContent generated = Content.generate(content, model, channel, token);
            ObjectNode result = Json.object();
            result.set("content", generated.content());
            if (!warnings.isEmpty()) { // left out when there are none (docs/COMPATIBILITY.md, "Result shapes")
                result.set("warnings", Json.strings(warnings));
            }
            return result;
        });
    }
}
