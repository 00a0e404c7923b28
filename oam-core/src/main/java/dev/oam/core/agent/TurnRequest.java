package dev.oam.core.agent;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One turn's input. The overrides replace the session options for this turn only; {@code null}
 * keeps the session's value.
 */
public record TurnRequest(
        String prompt,
        @Nullable JsonNode schema,
        @Nullable ToolChoice toolChoice,
        @Nullable Integer maxToolRounds,
        @Nullable Integer maxToolCalls,
        @Nullable List<String> enabledTools) {

    public TurnRequest {
        enabledTools = enabledTools == null ? null : List.copyOf(enabledTools);
    }

    public static TurnRequest of(String prompt) {
        return new TurnRequest(prompt, null, null, null, null, null);
    }
}
