package dev.oam.server;

import static dev.oam.server.ChatFields.requiredString;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The {@code messages} of a Chat Completions request as the model sees them.
 *
 * @param instructions the system and developer messages joined, or {@code null} when there are none
 * @param entries the conversation, ending with the user's prompt or with tool outputs
 */
record ChatMessages(@Nullable String instructions, List<TranscriptEntry> entries) {

    /**
     * Turns the message history into transcript entries: system and developer messages become the instructions,
     * consecutive user messages are merged, and each assistant tool call must be answered by exactly one {@code tool}
     * message right after it (outputs are put in call order).
     */
    static ChatMessages parse(@Nullable JsonNode node) throws ApiError {
        if (node == null || node.isNull()) {
            throw ApiError.invalid("messages", "missing_required_parameter", "Missing required parameter: 'messages'.");
        }
        if (!node.isArray() || node.isEmpty()) {
            throw ApiError.invalid("messages", "invalid_value", "'messages' must be a non-empty array of messages.");
        }
        List<String> instructions = new ArrayList<>();
        List<TranscriptEntry> entries = new ArrayList<>();
        StringBuilder user = null;
        Set<String> seenCallIds = new HashSet<>();
        // The tool calls of the last assistant message, by id, waiting for their tool messages.
        LinkedHashMap<String, ToolCall> open = null;
        Map<String, String> outputs = new LinkedHashMap<>();
        int openedAt = -1;
        String lastRole = null;
        for (int i = 0; i < node.size(); i++) {
            String path = "messages[" + i + "]";
            JsonNode message = node.get(i);
            if (!message.isObject()) {
                throw ApiError.invalid(path, "invalid_type", "'" + path + "' must be an object.");
            }
            String role = requiredString(message, "role", path + ".role");
            if (open != null && !role.equals("tool")) {
                closeToolBlock(open, outputs, entries, path, openedAt);
                open = null;
            }
            if (user != null && !role.equals("user") && !role.equals("system") && !role.equals("developer")) {
                entries.add(TranscriptEntry.Prompt.of(user.toString(), null));
                user = null;
            }
            switch (role) {
                case "system", "developer" -> {
                    String text = text(message.get("content"), path + ".content", false);
                    if (!text.isBlank()) {
                        instructions.add(text.strip());
                    }
                }
                case "user" -> {
                    String text = text(message.get("content"), path + ".content", false);
                    user = user == null
                            ? new StringBuilder(text)
                            : user.append("\n\n").append(text);
                }
                case "assistant" -> {
                    JsonNode calls = message.get("tool_calls");
                    JsonNode content = message.get("content");
                    String text = content == null || content.isNull() ? "" : text(content, path + ".content", true);
                    if (text.isEmpty() && message.path("refusal").isTextual()) {
                        text = message.get("refusal").textValue();
                    }
                    if (calls != null && !calls.isNull() && !(calls.isArray() && calls.isEmpty())) {
                        if (!calls.isArray()) {
                            throw ApiError.invalid(
                                    path + ".tool_calls",
                                    "invalid_type",
                                    "'" + path + ".tool_calls' must be an array.");
                        }
                        if (!text.isBlank()) {
                            entries.add(TranscriptEntry.Response.text(text));
                        }
                        open = new LinkedHashMap<>();
                        outputs = new LinkedHashMap<>();
                        openedAt = i;
                        for (int j = 0; j < calls.size(); j++) {
                            ToolCall call = historyCall(calls.get(j), path + ".tool_calls[" + j + "]");
                            if (!seenCallIds.add(call.id())) {
                                throw ApiError.invalid(
                                        path + ".tool_calls[" + j + "].id",
                                        "duplicate_tool_call_id",
                                        "The tool call id '" + call.id()
                                                + "' appears more than once in the conversation.");
                            }
                            open.put(call.id(), call);
                        }
                        entries.add(TranscriptEntry.ToolCalls.of(List.copyOf(open.values())));
                    } else {
                        if (content == null || content.isNull()) {
                            if (!message.path("refusal").isTextual()) {
                                throw ApiError.invalid(
                                        path + ".content",
                                        "missing_required_parameter",
                                        "An assistant message needs 'content' or 'tool_calls'.");
                            }
                        }
                        entries.add(TranscriptEntry.Response.text(text));
                    }
                }
                case "tool" -> {
                    String id = requiredString(message, "tool_call_id", path + ".tool_call_id");
                    if (open == null) {
                        throw ApiError.invalid(
                                path + ".tool_call_id",
                                "unknown_tool_call_id",
                                "The tool message for '" + id
                                        + "' does not follow an assistant message with that tool call: "
                                        + "every tool message must come "
                                        + "right after the assistant message whose call it answers.");
                    }
                    if (!open.containsKey(id)) {
                        throw ApiError.invalid(
                                path + ".tool_call_id",
                                "unknown_tool_call_id",
                                "The tool message answers '" + id + "', which the assistant message at messages["
                                        + openedAt + "] did not call.");
                    }
                    if (outputs.containsKey(id)) {
                        throw ApiError.invalid(
                                path + ".tool_call_id",
                                "duplicate_tool_output",
                                "The tool call '" + id + "' has more than one tool message.");
                    }
                    outputs.put(id, text(message.get("content"), path + ".content", false));
                }
                case "function" ->
                    throw ApiError.invalid(
                            path + ".role",
                            "unsupported_value",
                            "The legacy 'function' role is not supported; answer tool calls with 'tool' messages.");
                default ->
                    throw ApiError.invalidValue(
                            path + ".role",
                            "'" + path + ".role' must be system, developer, user, " + "assistant or tool, not \"" + role
                                    + "\".");
            }
            if (!role.equals("system") && !role.equals("developer")) {
                lastRole = role;
            }
        }
        if (open != null) {
            closeToolBlock(open, outputs, entries, "messages", openedAt);
        }
        if (user != null) {
            entries.add(TranscriptEntry.Prompt.of(user.toString(), null));
        }
        if ("assistant".equals(lastRole)) {
            throw ApiError.invalid(
                    "messages",
                    "invalid_last_message",
                    "The last message is an assistant message; this "
                            + "server does not continue a prefilled answer. End with a user message or with "
                            + "tool messages.");
        }
        if (lastRole == null) {
            throw ApiError.invalid(
                    "messages",
                    "invalid_last_message",
                    "'messages' needs a user message (or tool messages) " + "after the system and developer messages.");
        }
        return new ChatMessages(instructions.isEmpty() ? null : String.join("\n\n", instructions), entries);
    }

    /** Every call of the assistant message must have its output; the outputs go into call order. */
    private static void closeToolBlock(
            LinkedHashMap<String, ToolCall> open,
            Map<String, String> outputs,
            List<TranscriptEntry> entries,
            String at,
            int openedAt)
            throws ApiError {
        for (ToolCall call : open.values()) {
            if (!outputs.containsKey(call.id())) {
                throw ApiError.invalid(
                        at,
                        "missing_tool_output",
                        "The tool call '" + call.id() + "' (" + call.name()
                                + ") of the assistant message at messages[" + openedAt
                                + "] has no tool message; send one tool "
                                + "message per call right after that assistant message.");
            }
        }
        for (ToolCall call : open.values()) {
            entries.add(TranscriptEntry.ToolOutput.of(call.name(), call.id(), outputs.get(call.id())));
        }
    }

    private static ToolCall historyCall(JsonNode call, String path) throws ApiError {
        if (!call.isObject()) {
            throw ApiError.invalid(path, "invalid_type", "'" + path + "' must be an object.");
        }
        String id = requiredString(call, "id", path + ".id");
        JsonNode type = call.get("type");
        if (type != null && !type.isNull() && !"function".equals(type.asText())) {
            throw ApiError.invalidValue(path + ".type", "Only tool calls of type \"function\" are supported.");
        }
        JsonNode function = call.get("function");
        if (function == null || !function.isObject()) {
            throw ApiError.invalid(
                    path + ".function", "missing_required_parameter", "'" + path + ".function' must be an object.");
        }
        String name = requiredString(function, "name", path + ".function.name");
        JsonNode args = function.get("arguments");
        ObjectNode arguments;
        if (args == null
                || args.isNull()
                || (args.isTextual() && args.textValue().isBlank())) {
            arguments = Json.object();
        } else if (args.isTextual()) {
            try {
                JsonNode parsed = Json.parse(args.textValue());
                if (!parsed.isObject()) {
                    throw ApiError.invalidValue(
                            path + ".function.arguments", "Tool call arguments must encode a JSON object.");
                }
                arguments = (ObjectNode) parsed;
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw ApiError.invalidValue(
                        path + ".function.arguments",
                        "Tool call arguments are not valid JSON: " + e.getOriginalMessage());
            }
        } else if (args.isObject()) {
            arguments = (ObjectNode) args;
        } else {
            throw ApiError.invalid(
                    path + ".function.arguments", "invalid_type", "Tool call arguments must be a JSON string.");
        }
        return new ToolCall(id, name, arguments);
    }

    /** A message's text: a string, or an array of {@code text} parts joined together. */
    private static String text(@Nullable JsonNode content, String path, boolean allowRefusalParts) throws ApiError {
        if (content == null || content.isNull()) {
            throw ApiError.invalid(path, "missing_required_parameter", "Missing '" + path + "'.");
        }
        if (content.isTextual()) {
            return content.textValue();
        }
        if (!content.isArray()) {
            throw ApiError.invalid(
                    path, "invalid_type", "'" + path + "' must be a string or an array of content parts.");
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < content.size(); i++) {
            JsonNode part = content.get(i);
            String type = part.path("type").asText("");
            switch (type) {
                case "text" -> out.append(requiredString(part, "text", path + "[" + i + "].text"));
                case "refusal" -> {
                    if (!allowRefusalParts) {
                        throw ApiError.invalidValue(
                                path + "[" + i + "].type", "Refusal parts belong to assistant messages.");
                    }
                    out.append(requiredString(part, "refusal", path + "[" + i + "].refusal"));
                }
                case "image_url" ->
                    throw ApiError.invalid(
                            path + "[" + i + "]",
                            "unsupported_content",
                            "Images are not supported: the models of this edition take text only (docs/SERVER.md).");
                default ->
                    throw ApiError.invalid(
                            path + "[" + i + "].type",
                            "unsupported_content",
                            "Content parts of type \"" + type + "\" are not supported; send text.");
            }
        }
        return out.toString();
    }
}
