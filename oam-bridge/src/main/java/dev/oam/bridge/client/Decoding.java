package dev.oam.bridge.client;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolRecord;
import dev.oam.game.decision.Decision;
import dev.oam.game.npc.Emotion;
import dev.oam.game.npc.LineTracker;
import dev.oam.game.npc.NpcEvent;
import dev.oam.game.npc.NpcReply;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/** Reads the wire's results and events back into the typed values (the inverse of the bridge's encoders). */
final class Decoding {
    private Decoding() {}

    static Usage usage(JsonNode node) {
        return new Usage(
                node.path("inputTokens").asInt(),
                node.path("cachedInputTokens").asInt(),
                node.path("outputTokens").asInt());
    }

    static ToolCall call(JsonNode node) {
        JsonNode arguments = node.path("arguments");
        return new ToolCall(
                node.path("id").asText(),
                node.path("name").asText(),
                arguments.isObject() ? (ObjectNode) arguments : Json.object());
    }

    static ToolRecord record(JsonNode node) {
        return new ToolRecord(
                call(node.path("call")),
                node.path("output"),
                node.path("isError").asBoolean(),
                node.path("durationSeconds").asDouble());
    }

    static List<ToolRecord> records(JsonNode array) {
        List<ToolRecord> out = new ArrayList<>();
        array.forEach(n -> out.add(record(n)));
        return out;
    }

    static SessionReply sessionReply(JsonNode result) {
        return new SessionReply(
                result.path("text").asText(), records(result.path("toolCalls")), usage(result.path("usage")));
    }

    static NpcReply npcReply(JsonNode result) {
        return new NpcReply(
                result.path("line").asText(),
                emotion(result.path("emotion").asText()),
                Oam.strings(result.path("playerOptions")),
                result.path("endsConversation").asBoolean(),
                records(result.path("toolCalls")),
                result.path("relationship").asInt(),
                result.path("isFallback").asBoolean(),
                usage(result.path("usage")),
                Oam.strings(result.path("warnings")));
    }

    static Decision decision(JsonNode result) {
        return new Decision(
                result.path("optionID").asText(),
                result.path("reasoning").asText(),
                result.path("confidence").asInt(),
                records(result.path("toolCalls")),
                usage(result.path("usage")),
                result.path("isFallback").asBoolean());
    }

    private static Emotion emotion(String wireName) {
        return Emotion.of(wireName)
                .orElseThrow(() -> new IllegalStateException("The engine sent an unknown emotion: " + wireName));
    }

    static NpcEvent npcEvent(JsonNode event) {
        return switch (event.path("type").asText()) {
            case "emotion" ->
                new NpcEvent.Line(new LineTracker.Event.EmotionChanged(
                        emotion(event.path("emotion").asText())));
            case "lineDelta" ->
                new NpcEvent.Line(
                        new LineTracker.Event.LineDelta(event.path("delta").asText()));
            case "lineReset" ->
                new NpcEvent.Line(
                        new LineTracker.Event.LineReset(event.path("line").asText()));
            case "toolCallStarted" ->
                new NpcEvent.ToolCallStarted(
                        call(event.path("call")), event.path("execution").asText());
            case "toolCallCompleted" -> new NpcEvent.ToolCallCompleted(record(event.path("record")));
            default -> throw new IllegalStateException("The engine sent an unknown npc/event type: " + event);
        };
    }

    static WorldChanged worldChange(JsonNode params) {
        return new WorldChanged(
                params.path("world").asText(),
                params.path("subscription").asText(),
                params.path("path").asText(),
                params.has("oldValue") ? java(params.get("oldValue")) : null,
                params.has("newValue") ? java(params.get("newValue")) : null,
                !params.has("oldValue"),
                !params.has("newValue"));
    }

    /** A JSON value as plain Java: maps (in document order), lists, strings, numbers, booleans, {@code null}. */
    static @Nullable Object java(JsonNode node) {
        if (node.isMissingNode() || node.isNull()) {
            return null;
        }
        return Json.mapper().convertValue(node, Object.class);
    }

    static Map<String, @Nullable Object> javaMap(JsonNode node) {
        if (!node.isObject()) {
            return Map.of();
        }
        Map<String, @Nullable Object> map =
                Json.mapper().convertValue(node, new TypeReference<LinkedHashMap<String, @Nullable Object>>() {});
        return map;
    }
}
