package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.Coding;
import dev.oam.bridge.spi.MethodRegistry;
import dev.oam.bridge.spi.Methods;
import dev.oam.bridge.spi.Params;
import dev.oam.bridge.spi.Reply;
import dev.oam.bridge.spi.ToolDefinitions;
import dev.oam.core.json.Json;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import dev.oam.core.tool.ToolDefinition;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

/**
 * {@code initialize} (with the capabilities it reports), {@code ping}, {@code model/availability}, the validators and
 * {@code shutdown}.
 */
final class CoreMethods {
    private CoreMethods() {}

    static void register(MethodRegistry.Builder registry, BridgeEngine engine) {
        registry.register(Methods.INITIALIZE, request -> {
            Params params = request.params();
            String version = params.optionalString("protocolVersion");
            if (version != null && !majorOf(version).equals(majorOf(BridgeEngine.PROTOCOL_VERSION))) {
                throw BridgeException.invalidParams("Parameter 'protocolVersion' asks for protocol " + version
                        + ", but this bridge speaks " + BridgeEngine.PROTOCOL_VERSION + ".");
            }
            if (params.get("client") != null && !params.get("client").isObject()) {
                throw params.mistyped("client", "an object");
            }
            ObjectNode result = Json.object();
            result.put("protocolVersion", BridgeEngine.PROTOCOL_VERSION);
            ObjectNode server = result.putObject("server");
            server.put("name", BridgeEngine.SERVER_NAME);
            server.put("version", BridgeEngine.VERSION);
            result.set("capabilities", capabilities(engine));
            result.set("model", Coding.availability(engine.systemAvailability()));
            return Reply.result(result);
        });
        registry.register(Methods.PING, request -> Reply.result(Json.object()));
        registry.register(
                Methods.MODEL_AVAILABILITY, request -> Reply.result(Coding.availability(engine.systemAvailability())));
        registry.register(Methods.SCHEMA_VALIDATE, request -> {
            Params params = request.params();
            JsonNode schema = params.require("schema");
            String name = params.optionalString("name");
            if (!schema.isObject() && !schema.isBoolean()) {
                throw params.mistyped("schema", "a JSON Schema object");
            }
            GenerationSchema generation;
            try {
                generation = GenerationSchema.convert(schema, name == null ? "Response" : name);
            } catch (SchemaException e) {
                throw ToolDefinitions.invalidSchema(e, "schema");
            }
            ObjectNode result = Json.object();
            result.set("warnings", Json.strings(generation.warnings()));
            result.set("generationSchema", generation.json());
            return Reply.result(result);
        });
        registry.register(Methods.TOOLS_VALIDATE, request -> {
            Params params = request.params();
            ToolDefinitions.Parsed parsed = ToolDefinitions.parse(params.require("tools"), "tools");
            ArrayNode tools = Json.array();
            for (ToolDefinition tool : parsed.tools()) {
                ObjectNode item = tools.addObject();
                item.put("name", tool.name());
                List<String> own = new ArrayList<>();
                for (String warning : parsed.warnings()) {
                    if (warning.startsWith(tool.name() + ":")) {
                        own.add(warning);
                    }
                }
                item.set("warnings", Json.strings(own));
                item.set("generationSchema", tool.schema().json());
            }
            ObjectNode result = Json.object();
            result.set("tools", tools);
            List<String> overall = new ArrayList<>();
            ToolDefinitions.countWarning(parsed.tools().size()).ifPresent(overall::add);
            result.set("warnings", Json.strings(overall));
            return Reply.result(result);
        });
        registry.register(Methods.SHUTDOWN, request -> {
            engine.beginShutdown(request);
            return Reply.pending();
        });
    }

    /** What {@code initialize} says the engine can do: its methods and notifications as registered, and its models. */
    static ObjectNode capabilities(BridgeEngine engine) {
        MethodRegistry registry = engine.registry();
        BridgeConfiguration configuration = engine.configuration();
        ObjectNode caps = Json.object();
        caps.set("methods", Json.strings(registry.methods()));
        caps.set("notifications", Json.strings(engine.notificationMethods()));
        caps.set("clientRequests", Json.strings(List.of(Methods.TOOL_CALL)));
        caps.put("streaming", true);
        caps.put("clientTools", true);
        caps.put("structuredOutput", registry.handler(Methods.SCHEMA_VALIDATE) != null);
        ArrayNode models = Json.array();
        models.add("system");
        if (configuration.allowsScriptedModels()) {
            models.add("scripted");
        }
        configuration.modelProviders().keySet().forEach(models::add);
        caps.set("models", models);
        caps.put("maxSessions", configuration.maxSessions());
        caps.put("batch", false);
        return caps;
    }

    /** The product version from {@code version.properties} (written by the build), without {@code -SNAPSHOT}. */
    static String readVersion() {
        Properties properties = new Properties();
        try (InputStream in = BridgeEngine.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                properties.load(new InputStreamReader(in, StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            // fall through to the default
        }
        String version = properties.getProperty("version", "0.0.0");
        return version.endsWith("-SNAPSHOT") ? version.substring(0, version.length() - "-SNAPSHOT".length()) : version;
    }

    private static String majorOf(String version) {
        int dot = version.indexOf('.');
        return (dot < 0 ? version : version.substring(0, dot)).strip();
    }
}
