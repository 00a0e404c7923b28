package dev.oam.server;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolCall;
import org.jspecify.annotations.Nullable;

/** The JSON shapes of Chat Completions: a completion, a stream chunk, usage, tool calls. */
final class Chunks {
    private Chunks() {}

    static ObjectNode completion(String id, long created, String model, CompletionCall.Result result) {
        ObjectNode root = header(id, "chat.completion", created, model);
        ObjectNode choice = root.putArray("choices").addObject();
        choice.put("index", 0);
        ObjectNode message = choice.putObject("message");
        message.put("role", "assistant");
        putNullable(message, "content", result.content());
        putNullable(message, "refusal", result.refusal());
        if (!result.toolCalls().isEmpty()) {
            ArrayNode calls = message.putArray("tool_calls");
            for (ToolCall call : result.toolCalls()) {
                calls.add(toolCall(call, null, true));
            }
        }
        message.putArray("annotations");
        choice.putNull("logprobs");
        choice.put("finish_reason", result.finishReason());
        root.set("usage", usage(result.usage()));
        return root;
    }

    /** A stream chunk with one choice whose delta the caller fills in. */
    static ObjectNode chunk(
            String id,
            long created,
            String model,
            boolean includeUsage,
            ObjectNode delta,
            @Nullable String finishReason) {
        ObjectNode root = header(id, "chat.completion.chunk", created, model);
        ObjectNode choice = root.putArray("choices").addObject();
        choice.put("index", 0);
        choice.set("delta", delta);
        choice.putNull("logprobs");
        putNullable(choice, "finish_reason", finishReason);
        if (includeUsage) {
            root.putNull("usage");
        }
        return root;
    }

    /** The last chunk of a stream with {@code include_usage}: no choices, the usage. */
    static ObjectNode usageChunk(String id, long created, String model, Usage usage) {
        ObjectNode root = header(id, "chat.completion.chunk", created, model);
        root.putArray("choices");
        root.set("usage", usage(usage));
        return root;
    }

    static ObjectNode toolCall(ToolCall call, @Nullable Integer index, boolean withArguments) {
        ObjectNode node = Json.object();
        if (index != null) {
            node.put("index", index);
        }
        node.put("id", call.id());
        node.put("type", "function");
        ObjectNode function = node.putObject("function");
        function.put("name", call.name());
        function.put("arguments", withArguments ? Json.write(call.arguments()) : "");
        return node;
    }

    static ObjectNode usage(Usage usage) {
        ObjectNode node = Json.object();
        node.put("prompt_tokens", usage.inputTokens());
        node.put("completion_tokens", usage.outputTokens());
        node.put("total_tokens", usage.totalTokens());
        node.putObject("prompt_tokens_details").put("cached_tokens", usage.cachedInputTokens());
        node.putObject("completion_tokens_details").put("reasoning_tokens", 0);
        return node;
    }

    private static ObjectNode header(String id, String object, long created, String model) {
        ObjectNode root = Json.object();
        root.put("id", id);
        root.put("object", object);
        root.put("created", created);
        root.put("model", model);
        root.putNull("system_fingerprint");
        return root;
    }

    private static void putNullable(ObjectNode node, String field, @Nullable String value) {
        if (value == null) {
            node.putNull(field);
        } else {
            node.put(field, value);
        }
    }
}
