package dev.oam.model.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.http.HttpHeaders;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One Chat Completions answer, assembled from a whole response or from stream chunks. Streamed tool-call fragments are
 * joined per call {@code index}; servers that reuse an index for a second call (a new id) or send no index at all are
 * handled too.
 */
final class CompletionAnswer {
    /** One tool call as the server sent it; {@code arguments} is JSON text, or {@code argumentsValue} an object. */
    static final class RawCall {
        String id = "";
        String name = "";
        final StringBuilder arguments = new StringBuilder();

        @Nullable
        JsonNode argumentsValue;
    }

    final StringBuilder content = new StringBuilder();
    final StringBuilder refusal = new StringBuilder();
    final List<RawCall> calls = new ArrayList<>();
    private final Map<Integer, RawCall> byIndex = new HashMap<>();

    @Nullable
    String finishReason;

    @Nullable
    JsonNode usage;

    @Nullable
    String model;
    /** The answer carried llama.cpp's {@code timings}: the server is llama-server. */
    boolean timings;

    boolean done;

    /** Applies one stream chunk; new answer text goes to {@code onContent}. */
    void applyChunk(JsonNode chunk, Consumer<String> onContent) throws HttpFailure {
        checkError(chunk);
        readCommon(chunk);
        JsonNode choice = chunk.path("choices").path(0);
        if (choice.isMissingNode()) {
            return;
        }
        JsonNode delta = choice.has("delta") ? choice.path("delta") : choice.path("message");
        String text = text(delta.get("content"));
        if (!text.isEmpty()) {
            content.append(text);
            onContent.accept(text);
        }
        refusal.append(text(delta.get("refusal")));
        for (JsonNode call : delta.path("tool_calls")) {
            merge(call);
        }
        finish(choice);
    }

    /** Applies a whole (non-streamed) response. */
    void applyResponse(JsonNode response) throws HttpFailure {
        checkError(response);
        readCommon(response);
        JsonNode choice = response.path("choices").path(0);
        JsonNode message = choice.path("message");
        content.append(text(message.get("content")));
        refusal.append(text(message.get("refusal")));
        for (JsonNode call : message.path("tool_calls")) {
            RawCall raw = new RawCall();
            raw.id = textOrEmpty(call.path("id"));
            raw.name = textOrEmpty(call.path("function").path("name"));
            addArguments(raw, call.path("function").get("arguments"));
            calls.add(raw);
        }
        finish(choice);
        done = true;
    }

    private void finish(JsonNode choice) {
        JsonNode reason = choice.get("finish_reason");
        if (reason != null && reason.isTextual()) {
            finishReason = reason.textValue();
        }
    }

    private void readCommon(JsonNode node) {
        if (node.path("model").isTextual()) {
            model = node.path("model").textValue();
        }
        if (node.path("usage").isObject()) {
            usage = node.get("usage");
        }
        if (node.path("timings").isObject()) {
            timings = true;
        }
    }

    private void merge(JsonNode delta) {
        String id = textOrEmpty(delta.path("id"));
        JsonNode function = delta.path("function");
        String name = textOrEmpty(function.path("name"));
        JsonNode index = delta.get("index");
        RawCall target;
        if (index != null && index.canConvertToInt()) {
            target = byIndex.get(index.intValue());
            if (target == null || (!id.isEmpty() && !target.id.isEmpty() && !id.equals(target.id))) {
                target = new RawCall();
                calls.add(target);
                byIndex.put(index.intValue(), target);
            }
        } else {
            target = calls.isEmpty() ? null : calls.get(calls.size() - 1);
            if (target == null
                    || (!id.isEmpty() && !target.id.isEmpty() && !id.equals(target.id))
                    || (!name.isEmpty() && !target.name.isEmpty())) {
                target = new RawCall();
                calls.add(target);
            }
        }
        if (target.id.isEmpty()) {
            target.id = id;
        }
        if (!name.equals(target.name)) {
            target.name += name;
        }
        addArguments(target, function.get("arguments"));
    }

    private static void addArguments(RawCall call, @Nullable JsonNode arguments) {
        if (arguments == null || arguments.isNull()) {
            return;
        }
        if (arguments.isTextual()) {
            call.arguments.append(arguments.textValue());
        } else {
            call.argumentsValue = arguments;
        }
    }

    /** Text of a {@code content} value: a string, or an array of text parts. */
    private static String text(@Nullable JsonNode node) {
        if (node == null || node.isNull()) {
            return "";
        }
        if (node.isTextual()) {
            return node.textValue();
        }
        if (node.isArray()) {
            StringBuilder out = new StringBuilder();
            for (JsonNode part : node) {
                out.append(part.isTextual() ? part.textValue() : textOrEmpty(part.path("text")));
            }
            return out.toString();
        }
        return "";
    }

    private static String textOrEmpty(JsonNode node) {
        return node.isTextual() ? node.textValue() : "";
    }

    /** An {@code error} member in a response body or chunk (oam serve, vLLM and Ollama report late failures so). */
    static void checkError(JsonNode node) throws HttpFailure {
        JsonNode error = node.get("error");
        if (error == null || error.isNull()) {
            return;
        }
        throw new HttpFailure(0, errorCode(error), errorMessage(error), HttpHeaders.of(Map.of(), (a, b) -> true));
    }

    static String errorMessage(JsonNode error) {
        if (error.isTextual()) {
            return error.textValue();
        }
        JsonNode message = error.path("message");
        return message.isTextual() ? message.textValue() : dev.oam.core.json.Json.write(error);
    }

    static @Nullable String errorCode(JsonNode error) {
        if (!(error instanceof ObjectNode)) {
            return null;
        }
        for (String key : List.of("code", "type")) {
            JsonNode value = error.get(key);
            if (value != null && value.isTextual() && !value.textValue().isBlank()) {
                return value.textValue().toLowerCase(Locale.ROOT);
            }
        }
        return null;
    }
}
