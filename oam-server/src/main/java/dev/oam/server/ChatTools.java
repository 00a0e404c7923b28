package dev.oam.server;

import static dev.oam.server.ChatFields.requiredString;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolDefinition;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** The {@code tools} and {@code tool_choice} of a Chat Completions request. */
final class ChatTools {
    private ChatTools() {}

    /**
     * What {@code tool_choice} asks for.
     *
     * @param enabled the {@code allowed_tools} subset, or {@code null} for every tool
     */
    record Choice(ToolChoice toolChoice, @Nullable List<String> enabled) {}

    /** The request's {@code tools}: functions with unique valid names and object parameter schemas. */
    static List<ToolDefinition> parse(@Nullable JsonNode node) throws ApiError {
        if (node == null || node.isNull()) {
            return List.of();
        }
        if (!node.isArray()) {
            throw ApiError.invalid("tools", "invalid_type", "'tools' must be an array.");
        }
        List<ToolDefinition> tools = new ArrayList<>();
        Set<String> names = new HashSet<>();
        for (int i = 0; i < node.size(); i++) {
            String path = "tools[" + i + "]";
            JsonNode tool = node.get(i);
            if (!tool.isObject() || !"function".equals(tool.path("type").asText())) {
                throw ApiError.invalidValue(path + ".type", "Only tools of type \"function\" are supported.");
            }
            JsonNode function = tool.get("function");
            if (function == null || !function.isObject()) {
                throw ApiError.invalid(
                        path + ".function", "missing_required_parameter", "'" + path + ".function' must be an object.");
            }
            String name = requiredString(function, "name", path + ".function.name");
            if (!ToolDefinition.isValidName(name)) {
                throw ApiError.invalidValue(
                        path + ".function.name",
                        "Invalid function name '" + name
                                + "': use 1 to 64 letters, digits, underscores, dots or dashes.");
            }
            if (!names.add(name)) {
                throw ApiError.invalidValue(
                        path + ".function.name", "The function name '" + name + "' appears twice in 'tools'.");
            }
            JsonNode description = function.get("description");
            JsonNode parameters = function.get("parameters");
            ObjectNode schema;
            if (parameters == null || parameters.isNull()) {
                schema = Json.object();
                schema.put("type", "object");
                schema.set("properties", Json.object());
            } else if (parameters.isObject()) {
                schema = (ObjectNode) parameters;
            } else {
                throw ApiError.invalid(
                        path + ".function.parameters", "invalid_type", "'parameters' must be a JSON Schema object.");
            }
            try {
                tools.add(new ToolDefinition(
                        name,
                        description != null && description.isTextual() ? description.textValue() : null,
                        schema,
                        null));
            } catch (IllegalArgumentException e) {
                throw ApiError.invalid(
                        path + ".function.parameters",
                        "invalid_schema",
                        "Invalid parameters schema for '" + name + "': " + e.getMessage());
            }
        }
        return tools;
    }

    /**
     * The request's {@code tool_choice}: a mode, a named function or an {@code allowed_tools} subset, each of which
     * must name only functions among {@code tools}.
     */
    static Choice choice(JsonNode root, List<ToolDefinition> tools) throws ApiError {
        Set<String> toolNames = new HashSet<>();
        tools.forEach(tool -> toolNames.add(tool.name()));
        ToolChoice toolChoice = ToolChoice.AUTO;
        List<String> enabled = null;
        JsonNode choice = root.get("tool_choice");
        if (choice != null && !choice.isNull()) {
            if (choice.isTextual()) {
                toolChoice = switch (choice.textValue()) {
                    case "auto" -> ToolChoice.AUTO;
                    case "none" -> ToolChoice.NONE;
                    case "required" -> ToolChoice.REQUIRED;
                    default ->
                        throw ApiError.invalidValue(
                                "tool_choice",
                                "'tool_choice' must be \"auto\", \"none\", \"required\", a function or "
                                        + "allowed_tools, not \"" + choice.textValue() + "\".");
                };
            } else if (choice.isObject()
                    && "function".equals(choice.path("type").asText())) {
                String name = choice.path("function").path("name").asText("");
                if (!toolNames.contains(name)) {
                    throw ApiError.invalidValue(
                            "tool_choice",
                            "'tool_choice' names the function '" + name + "', which is not among the request's tools.");
                }
                toolChoice = new ToolChoice.Named(name);
            } else if (choice.isObject()
                    && "allowed_tools".equals(choice.path("type").asText())) {
                JsonNode allowed = choice.path("allowed_tools");
                String mode = allowed.path("mode").asText("auto");
                toolChoice = switch (mode) {
                    case "auto" -> ToolChoice.AUTO;
                    case "required" -> ToolChoice.REQUIRED;
                    default ->
                        throw ApiError.invalidValue(
                                "tool_choice.allowed_tools.mode",
                                "'allowed_tools.mode' must be \"auto\" or \"required\".");
                };
                JsonNode list = allowed.path("tools");
                if (!list.isArray()) {
                    throw ApiError.invalidValue(
                            "tool_choice.allowed_tools.tools", "'allowed_tools.tools' must be an array of functions.");
                }
                enabled = new ArrayList<>();
                for (JsonNode item : list) {
                    String name = item.path("function")
                            .path("name")
                            .asText(item.path("name").asText(""));
                    if (!toolNames.contains(name)) {
                        throw ApiError.invalidValue(
                                "tool_choice.allowed_tools.tools",
                                "'allowed_tools' names the function '" + name
                                        + "', which is not among the request's tools.");
                    }
                    enabled.add(name);
                }
            } else {
                throw ApiError.invalidValue(
                        "tool_choice",
                        "'tool_choice' must be \"auto\", \"none\", \"required\", "
                                + "{\"type\":\"function\",\"function\":{\"name\":…}} or "
                                + "{\"type\":\"allowed_tools\",…}.");
            }
            if (toolChoice instanceof ToolChoice.Required && tools.isEmpty()) {
                throw ApiError.invalidValue(
                        "tool_choice", "'tool_choice' is \"required\" but the request has no tools.");
            }
        }
        return new Choice(toolChoice, enabled);
    }
}
