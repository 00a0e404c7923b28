package dev.oam.bridge.spi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import dev.oam.core.tool.ToolDefinition;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** Reads tool definitions (docs/PROTOCOL.md, "Options and tools"), with the warnings they deserve. */
public final class ToolDefinitions {
    /** More tools than this per request are warned about. */
    public static final int RECOMMENDED_MAX_TOOLS = 5;

    private ToolDefinitions() {}

    public record Parsed(List<ToolDefinition> tools, List<String> warnings) {
        public Parsed {
            tools = List.copyOf(tools);
            warnings = List.copyOf(warnings);
        }
    }

    /**
     * @param value the {@code tools} array
     * @param path its parameter path, e.g. {@code tools}
     */
    public static Parsed parse(JsonNode value, String path) throws BridgeException {
        if (!value.isArray()) {
            throw BridgeException.invalidParameter(path, " must be an array of tool definitions.");
        }
        List<ToolDefinition> tools = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < value.size(); i++) {
            String at = path + "[" + i + "]";
            JsonNode node = value.get(i);
            if (node.isObject()
                    && node.has("function")
                    && node.path("type").asText("").equals("function")) {
                node = node.get("function");
                at = at + ".function";
            }
            if (!node.isObject()) {
                throw BridgeException.invalidParameter(at, " must be a tool definition object.");
            }
            JsonNode nameNode = node.get("name");
            if (nameNode == null || nameNode.isNull()) {
                throw BridgeException.missingParameter(at + ".name");
            }
            if (!nameNode.isTextual() || !ToolDefinition.isValidName(nameNode.textValue())) {
                throw BridgeException.invalidParameter(
                        at + ".name", " must be 1–64 characters of A–Z, a–z, 0–9, " + "'_', '-' and '.'.");
            }
            String name = nameNode.textValue();
            if (name.equals(ToolDefinition.RESPOND_DIRECTLY)) {
                throw BridgeException.invalidParameter(
                        at + ".name", ": '" + name + "' is reserved for the bridge's built-in tool.");
            }
            if (!names.add(name)) {
                throw BridgeException.invalidParameter(
                        at + ".name", ": the tool name '" + name + "' is used twice; tool names must be unique.");
            }
            JsonNode description = node.get("description");
            String text = null;
            if (description != null && !description.isNull()) {
                if (!description.isTextual()) {
                    throw BridgeException.invalidParameter(at + ".description", " must be a string.");
                }
                text = description.textValue();
            }
            if (text == null || text.isBlank()) {
                warnings.add(name + ": the tool has no description; the model decides from the description when "
                        + "to call a tool, so say what it does and what it returns.");
            }
            JsonNode parameters = node.get("parameters");
            ObjectNode schema;
            if (parameters == null || parameters.isNull()) {
                schema = Json.object();
                schema.put("type", "object");
                schema.putObject("properties");
            } else if (parameters.isObject()) {
                schema = (ObjectNode) parameters;
            } else {
                throw BridgeException.invalidParameter(at + ".parameters", " must be a JSON Schema object.");
            }
            JsonNode execution = node.get("execution");
            if (execution != null
                    && !execution.isNull()
                    && !(execution.isTextual() && execution.textValue().equals("client"))) {
                throw BridgeException.invalidParameter(
                        at + ".execution",
                        " must be \"client\": over the " + "bridge, the engine executes every tool through tool/call.");
            }
            Duration timeout = null;
            JsonNode timeoutNode = node.get("timeoutSeconds");
            if (timeoutNode != null && !timeoutNode.isNull()) {
                timeout = Params.seconds(timeoutNode, at + ".timeoutSeconds");
            }
            GenerationSchema generation;
            try {
                generation = GenerationSchema.convertParameters(schema, name);
            } catch (SchemaException e) {
                throw invalidSchema(e, at + ".parameters");
            }
            warnings.addAll(generation.warnings());
            tools.add(new ToolDefinition(name, text, schema, timeout, generation));
        }
        return new Parsed(tools, warnings);
    }

    /**
     * {@code -32007 invalid_schema} with {@code data.path} (the parameter) and {@code data.schemaPath} (inside the
     * schema).
     */
    public static BridgeException invalidSchema(SchemaException e, String path) {
        ObjectNode data = Json.object();
        data.put("path", path);
        data.put("schemaPath", e.schemaPath());
        return new BridgeException(
                dev.oam.core.ErrorCode.INVALID_SCHEMA,
                "Invalid schema in '" + path + "' at " + e.schemaPath() + ": " + e.getMessage(),
                data);
    }

    /** Reads an optional {@code tools} value (absent: no tools) with its warnings, the tool-count warning included. */
    public static Parsed parseCounted(@org.jspecify.annotations.Nullable JsonNode value, String path)
            throws BridgeException {
        Parsed parsed = value == null ? new Parsed(List.of(), List.of()) : parse(value, path);
        List<String> warnings = new ArrayList<>(parsed.warnings());
        countWarning(parsed.tools().size()).ifPresent(warnings::add);
        return new Parsed(parsed.tools(), warnings);
    }

    /** The warning for more than {@link #RECOMMENDED_MAX_TOOLS} tools, if any. */
    public static Optional<String> countWarning(int count) {
        if (count <= RECOMMENDED_MAX_TOOLS) {
            return Optional.empty();
        }
        return Optional.of(count + " tools: small on-device models choose reliably from 3–5 tools per request; "
                + "consider fewer tools or options.enabledTools.");
    }
}
