package dev.oam.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.Sampling;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.json.Json;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A validated Chat Completions request. {@link #parse} checks every field before any model runs and
 * turns the stateless message history into transcript entries: system and developer messages become
 * the instructions, consecutive user messages are merged, and each assistant tool call must be
 * answered by exactly one {@code tool} message right after it (outputs are put in call order).
 *
 * @param entries the conversation for the model, ending with the user's prompt or with tool outputs
 * @param enabledTools the {@code allowed_tools} subset, or {@code null} for every tool
 * @param maxTokens {@code max_completion_tokens} (or the older {@code max_tokens}), or {@code null}
 */
record ChatRequest(
        String model,
        @Nullable String instructions,
        List<TranscriptEntry> entries,
        List<ToolDefinition> tools,
        ToolChoice toolChoice,
        @Nullable List<String> enabledTools,
        boolean parallelToolCalls,
        @Nullable Double temperature,
        @Nullable Sampling sampling,
        @Nullable Integer maxTokens,
        List<String> stop,
        Format format,
        boolean stream,
        boolean includeUsage) {

    /** What {@code response_format} asks for. */
    sealed interface Format {
        Format TEXT = new Text();

        record Text() implements Format {}

        /** Best effort: the model is told to answer with one JSON object, which is then extracted and checked. */
        record JsonObject() implements Format {}

        /** Constrained: the model generates from the converted schema; the answer is validated against it. */
        record JsonSchema(String name, ObjectNode schema, GenerationSchema generationSchema) implements Format {}
    }

    /** Top-level fields this server reads. */
    private static final Set<String> KNOWN = Set.of(
            "model",
            "messages",
            "tools",
            "tool_choice",
            "parallel_tool_calls",
            "temperature",
            "top_p",
            "seed",
            "max_tokens",
            "max_completion_tokens",
            "stop",
            "response_format",
            "stream",
            "stream_options",
            "n");
    /** Fields accepted and ignored, as OpenAI clients send them routinely (docs/SERVER.md). */
    private static final Set<String> IGNORED = Set.of(
            "user",
            "metadata",
            "store",
            "logprobs",
            "top_logprobs",
            "frequency_penalty",
            "presence_penalty",
            "logit_bias",
            "service_tier",
            "reasoning_effort",
            "prediction",
            "prompt_cache_key",
            "safety_identifier",
            "verbosity");
    /** Fields of features this edition does not have: a clear 400 instead of silently doing something else. */
    private static final Map<String, String> UNSUPPORTED = Map.of(
            "functions", "The legacy 'functions' parameter is not supported; send 'tools' instead.",
            "function_call", "The legacy 'function_call' parameter is not supported; send 'tool_choice' instead.",
            "audio", "Audio output is not supported by this server.",
            "modalities", "Only text output is supported; leave 'modalities' out.",
            "web_search_options", "Web search is not supported by this server.");

    static ChatRequest parse(JsonNode root) throws ApiError {
        if (!root.isObject()) {
            throw ApiError.invalid(null, "invalid_request", "The request body must be a JSON object.");
        }
        for (Iterator<String> names = root.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (UNSUPPORTED.containsKey(name) && !root.get(name).isNull()) {
                throw ApiError.invalid(name, "unsupported_parameter", UNSUPPORTED.get(name));
            }
            if (!KNOWN.contains(name) && !IGNORED.contains(name) && !UNSUPPORTED.containsKey(name)) {
                throw ApiError.invalid(name, "unknown_parameter", "Unrecognized request argument supplied: " + name);
            }
        }
        String model = requiredString(root, "model");
        JsonNode n = root.get("n");
        if (n != null && !n.isNull() && !(n.isIntegralNumber() && n.asLong() == 1)) {
            throw ApiError.invalid(
                    "n", "unsupported_value", "Only n=1 is supported: this server generates one choice per request.");
        }
        List<ToolDefinition> tools = tools(root.get("tools"));
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
                                "'tool_choice' must be \"auto\", \"none\", \"required\", a function or allowed_tools, not \""
                                        + choice.textValue() + "\".");
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
                                + "{\"type\":\"function\",\"function\":{\"name\":…}} or {\"type\":\"allowed_tools\",…}.");
            }
            if (toolChoice instanceof ToolChoice.Required && tools.isEmpty()) {
                throw ApiError.invalidValue(
                        "tool_choice", "'tool_choice' is \"required\" but the request has no tools.");
            }
        }
        boolean parallel = optionalBoolean(root, "parallel_tool_calls", true);
        Double temperature = optionalNumber(root, "temperature", 0, 2);
        Double topP = optionalNumber(root, "top_p", 0, 1);
        if (topP != null && topP == 0) {
            throw ApiError.invalidValue("top_p", "'top_p' must be greater than 0 and at most 1.");
        }
        Long seed = null;
        JsonNode seedNode = root.get("seed");
        if (seedNode != null && !seedNode.isNull()) {
            if (!seedNode.isIntegralNumber() || !seedNode.canConvertToLong()) {
                throw ApiError.invalid("seed", "invalid_type", "'seed' must be an integer.");
            }
            seed = seedNode.longValue();
        }
        Sampling sampling = null;
        if (temperature != null && temperature == 0) {
            sampling = Sampling.GREEDY;
        } else if (topP != null) {
            sampling = new Sampling.TopP(topP, seed);
        } else if (seed != null) {
            sampling = new Sampling.TopP(1.0, seed);
        }
        Integer maxTokens = optionalPositiveInt(root, "max_completion_tokens");
        if (maxTokens == null) {
            maxTokens = optionalPositiveInt(root, "max_tokens");
        }
        List<String> stop = stop(root.get("stop"));
        Format format = format(root.get("response_format"));
        boolean stream = optionalBoolean(root, "stream", false);
        boolean includeUsage = false;
        JsonNode streamOptions = root.get("stream_options");
        if (streamOptions != null && !streamOptions.isNull()) {
            if (!streamOptions.isObject()) {
                throw ApiError.invalid("stream_options", "invalid_type", "'stream_options' must be an object.");
            }
            includeUsage = optionalBoolean(streamOptions, "include_usage", false, "stream_options.include_usage");
        }
        Messages messages = messages(root.get("messages"));
        return new ChatRequest(
                model,
                messages.instructions(),
                messages.entries(),
                tools,
                toolChoice,
                enabled,
                parallel,
                temperature,
                sampling,
                maxTokens,
                stop,
                format,
                stream,
                includeUsage);
    }

    /** This request with the server's own instructions put first. */
    ChatRequest withServerInstructions(@Nullable String server) {
        if (server == null || server.isBlank()) {
            return this;
        }
        String joined = instructions == null ? server.strip() : server.strip() + "\n\n" + instructions;
        return new ChatRequest(
                model,
                joined,
                entries,
                tools,
                toolChoice,
                enabledTools,
                parallelToolCalls,
                temperature,
                sampling,
                maxTokens,
                stop,
                format,
                stream,
                includeUsage);
    }

    private record Messages(@Nullable String instructions, List<TranscriptEntry> entries) {}

    private static Messages messages(@Nullable JsonNode node) throws ApiError {
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
                                        + "' does not follow an assistant message with that tool call: every tool message must come "
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
                            + "server does not continue a prefilled answer. End with a user message or with tool messages.");
        }
        if (lastRole == null) {
            throw ApiError.invalid(
                    "messages",
                    "invalid_last_message",
                    "'messages' needs a user message (or tool messages) " + "after the system and developer messages.");
        }
        return new Messages(instructions.isEmpty() ? null : String.join("\n\n", instructions), entries);
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

    private static List<ToolDefinition> tools(@Nullable JsonNode node) throws ApiError {
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

    private static Format format(@Nullable JsonNode node) throws ApiError {
        if (node == null || node.isNull()) {
            return Format.TEXT;
        }
        if (!node.isObject()) {
            throw ApiError.invalid("response_format", "invalid_type", "'response_format' must be an object.");
        }
        String type = node.path("type").asText("");
        return switch (type) {
            case "text" -> Format.TEXT;
            case "json_object" -> new Format.JsonObject();
            case "json_schema" -> {
                JsonNode spec = node.get("json_schema");
                if (spec == null || !spec.isObject()) {
                    throw ApiError.invalid(
                            "response_format.json_schema",
                            "missing_required_parameter",
                            "'response_format.json_schema' must be an object with 'name' and 'schema'.");
                }
                String name = spec.path("name").isTextual() ? spec.get("name").textValue() : "Response";
                JsonNode schema = spec.get("schema");
                if (schema == null || !schema.isObject()) {
                    throw ApiError.invalid(
                            "response_format.json_schema.schema",
                            "missing_required_parameter",
                            "'response_format.json_schema.schema' must be a JSON Schema object.");
                }
                try {
                    yield new Format.JsonSchema(name, (ObjectNode) schema, GenerationSchema.convert(schema, name));
                } catch (SchemaException e) {
                    throw ApiError.invalid(
                            "response_format.json_schema.schema",
                            "invalid_schema",
                            "Invalid schema at " + e.schemaPath() + ": " + e.getMessage());
                }
            }
            default ->
                throw ApiError.invalidValue(
                        "response_format.type",
                        "'response_format.type' must be \"text\", \"json_object\" or \"json_schema\".");
        };
    }

    private static List<String> stop(@Nullable JsonNode node) throws ApiError {
        if (node == null || node.isNull()) {
            return List.of();
        }
        List<String> stops = new ArrayList<>();
        if (node.isTextual()) {
            stops.add(node.textValue());
        } else if (node.isArray() && node.size() <= 4) {
            for (JsonNode item : node) {
                if (!item.isTextual()) {
                    throw ApiError.invalid(
                            "stop", "invalid_type", "'stop' must be a string or an array of up to 4 strings.");
                }
                stops.add(item.textValue());
            }
        } else {
            throw ApiError.invalid("stop", "invalid_value", "'stop' must be a string or an array of up to 4 strings.");
        }
        if (stops.stream().anyMatch(String::isEmpty)) {
            throw ApiError.invalidValue("stop", "Stop sequences must not be empty.");
        }
        return List.copyOf(stops);
    }

    private static String requiredString(JsonNode node, String field) throws ApiError {
        return requiredString(node, field, field);
    }

    private static String requiredString(JsonNode node, String field, String path) throws ApiError {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            throw ApiError.invalid(path, "missing_required_parameter", "Missing required parameter: '" + path + "'.");
        }
        if (!value.isTextual()) {
            throw ApiError.invalid(path, "invalid_type", "'" + path + "' must be a string.");
        }
        return value.textValue();
    }

    private static boolean optionalBoolean(JsonNode node, String field, boolean fallback) throws ApiError {
        return optionalBoolean(node, field, fallback, field);
    }

    private static boolean optionalBoolean(JsonNode node, String field, boolean fallback, String path) throws ApiError {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return fallback;
        }
        if (!value.isBoolean()) {
            throw ApiError.invalid(path, "invalid_type", "'" + path + "' must be a boolean.");
        }
        return value.booleanValue();
    }

    private static @Nullable Double optionalNumber(JsonNode node, String field, double min, double max)
            throws ApiError {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isNumber()) {
            throw ApiError.invalid(field, "invalid_type", "'" + field + "' must be a number.");
        }
        double number = value.doubleValue();
        if (!(number >= min && number <= max)) {
            throw ApiError.invalidValue(
                    field, "'" + field + "' must be from " + fmt(min) + " to " + fmt(max) + ", not " + value + ".");
        }
        return number;
    }

    private static String fmt(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }

    private static @Nullable Integer optionalPositiveInt(JsonNode node, String field) throws ApiError {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber()) {
            throw ApiError.invalid(field, "invalid_type", "'" + field + "' must be an integer.");
        }
        if (!value.canConvertToInt() || value.intValue() < 1) {
            throw ApiError.invalidValue(field, "'" + field + "' must be an integer of at least 1.");
        }
        return value.intValue();
    }
}
