package dev.oam.core.agent;

import java.util.List;
import org.jspecify.annotations.Nullable;

/** The tool steering of one turn: the session options with the turn's overrides applied. */
record TurnPolicy(
        ToolChoice toolChoice,
        int maxToolRounds,
        int maxToolCalls,
        @Nullable List<String> enabledTools) {
    public TurnPolicy {
        enabledTools = enabledTools == null ? null : List.copyOf(enabledTools);
    }

    public static TurnPolicy of(AgentOptions options) {
        return new TurnPolicy(
                options.toolChoice(), options.maxToolRounds(), options.maxToolCalls(), options.enabledTools());
    }
}
