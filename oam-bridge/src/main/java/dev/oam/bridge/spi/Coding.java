package dev.oam.bridge.spi;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.Step;
import dev.oam.core.agent.TurnEvent;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.json.Json;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolRecord;
import java.util.List;

/** JSON encoders for results, records, steps and events, so every method speaks the same dialect. */
public final class Coding {
    private Coding() {}

    public static ObjectNode call(ToolCall call) {
        ObjectNode node = Json.object();
        node.put("id", call.id());
        node.put("name", call.name());
        node.set("arguments", call.arguments());
        return node;
    }

    public static ObjectNode record(ToolRecord record) {
        ObjectNode node = Json.object();
        node.set("call", call(record.call()));
        node.set("output", record.output());
        node.put("isError", record.isError());
        node.put("durationSeconds", record.durationSeconds());
        return node;
    }

    public static ArrayNode records(List<ToolRecord> records) {
        ArrayNode array = Json.array();
        records.forEach(r -> array.add(record(r)));
        return array;
    }

    public static ObjectNode step(Step step) {
        ObjectNode node = Json.object();
        node.put("index", step.index());
        node.put("completedToolRounds", step.completedToolRounds());
        node.put("toolCallingMode", step.mode().wireName());
        node.set("enabledTools", Json.strings(step.enabledTools()));
        node.put("trimmedEntries", step.trimmedEntries());
        return node;
    }

    public static ObjectNode usage(Usage usage) {
        ObjectNode node = Json.object();
        node.put("inputTokens", usage.inputTokens());
        node.put("cachedInputTokens", usage.cachedInputTokens());
        node.put("outputTokens", usage.outputTokens());
        node.put("totalTokens", usage.totalTokens());
        return node;
    }

    /** The members of a turn result after the context keys: text, [structured], toolCalls, usage, steps. */
    public static void turnResult(ObjectNode into, TurnResult result) {
        into.put("text", result.text());
        if (result.structured() != null) {
            into.set("structured", result.structured());
        }
        into.set("toolCalls", records(result.toolCalls()));
        into.set("usage", usage(result.usage()));
        ArrayNode steps = Json.array();
        result.steps().forEach(s -> steps.add(step(s)));
        into.set("steps", steps);
    }

    public static ObjectNode event(TurnEvent event) {
        ObjectNode node = Json.object();
        switch (event) {
            case TurnEvent.ModelStep e -> {
                node.put("type", "modelStep");
                node.set("step", step(e.step()));
            }
            case TurnEvent.Text e -> {
                node.put("type", "text");
                node.put("delta", e.delta());
                node.put("text", e.text());
                node.put("isReset", e.isReset());
            }
            case TurnEvent.Partial e -> {
                node.put("type", "partial");
                node.set("value", e.value());
            }
            case TurnEvent.ToolCallStarted e -> {
                node.put("type", "toolCallStarted");
                node.set("call", call(e.call()));
                node.put("execution", e.execution());
            }
            case TurnEvent.ToolCallCompleted e -> {
                node.put("type", "toolCallCompleted");
                node.set("record", record(e.record()));
            }
        }
        return node;
    }

    public static ObjectNode availability(ModelAvailability availability) {
        ObjectNode node = Json.object();
        node.put("available", availability.available());
        if (!availability.available()) {
            node.put("reason", availability.reason() == null ? "unknown" : availability.reason());
            if (availability.message() != null) {
                node.put("message", availability.message());
            }
        }
        if (availability.contextSize() != null) {
            node.put("contextSize", availability.contextSize());
        }
        if (availability.variant() != null) {
            node.put("variant", availability.variant());
        }
        node.set("supportedLanguages", Json.strings(availability.supportedLanguages()));
        if (availability.device() != null) {
            node.put("device", availability.device());
        }
        return node;
    }
}
