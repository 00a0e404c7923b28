package dev.oam.bridge.client;

import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolRecord;
import java.util.List;
import java.util.Objects;

/** The answer to {@link OamSession#respond}: {@code session/respond}'s text, tool calls and usage. */
public record SessionReply(String text, List<ToolRecord> toolCalls, Usage usage) {
    public SessionReply {
        Objects.requireNonNull(text, "text");
        toolCalls = List.copyOf(toolCalls);
        Objects.requireNonNull(usage, "usage");
    }
}
