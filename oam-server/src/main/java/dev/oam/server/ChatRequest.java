package dev.oam.server;

import static dev.oam.server.ChatFields.optionalBoolean;
import static dev.oam.server.ChatFields.optionalNumber;
import static dev.oam.server.ChatFields.optionalPositiveInt;
import static dev.oam.server.ChatFields.requiredString;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.model.Sampling;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A validated Chat Completions request. {@link #parse} checks every field before any model runs and turns the stateless
 * message history into transcript entries ({@link ChatMessages}).
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
        List<ToolDefinition> tools = ChatTools.parse(root.get("tools"));
        ChatTools.Choice choice = ChatTools.choice(root, tools);
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
        List<String> stop = ChatFields.stop(root.get("stop"));
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
        ChatMessages messages = ChatMessages.parse(root.get("messages"));
        return new ChatRequest(
                model,
                messages.instructions(),
                messages.entries(),
                tools,
                choice.toolChoice(),
                choice.enabled(),
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
}
