package dev.oam.core.tool;

import com.fasterxml.jackson.databind.JsonNode;

/** A finished tool call: the call, its raw output, whether the model saw an error, and how long it took. */
public record ToolRecord(ToolCall call, JsonNode output, boolean isError, double durationSeconds) {
    public static ToolRecord of(ToolCall call, ToolReply reply, long nanos) {
        return new ToolRecord(call, reply.output(), reply.isError(), Math.round(nanos / 1_000_000.0) / 1000.0);
    }

    public ToolReply reply() {
        return new ToolReply(output, isError);
    }
}
