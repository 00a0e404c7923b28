package dev.oam.core.agent;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Session options (the {@code options} table of {@code session/create}).
 *
 * @param enabledTools tools visible to the model, or {@code null} for all
 * @param toolTimeout time the engine has to answer a client tool call; {@link Duration#ZERO} waits forever
 */
public record AgentOptions(
        ToolChoice toolChoice,
        int maxToolRounds,
        int maxToolCalls,
        @Nullable List<String> enabledTools,
        @Nullable Double temperature,
        @Nullable Integer maxResponseTokens,
        @Nullable Sampling sampling,
        Duration toolTimeout,
        boolean trimHistory,
        int reservedResponseTokens,
        int maxAttempts) {

    public static final Duration DEFAULT_TOOL_TIMEOUT = Duration.ofSeconds(120);

    public AgentOptions {
        if (maxToolRounds < 0 || maxToolCalls < 0 || reservedResponseTokens < 0) {
            throw new IllegalArgumentException("counts must not be negative");
        }
        if (maxAttempts < 1) {
            throw new IllegalArgumentException("maxAttempts must be at least 1");
        }
        enabledTools = enabledTools == null ? null : List.copyOf(enabledTools);
    }

    public static AgentOptions defaults(Duration toolTimeout) {
        return new AgentOptions(ToolChoice.AUTO, 4, 12, null, null, null, null, toolTimeout, true, 1024, 2);
    }

    public static AgentOptions defaults() {
        return defaults(DEFAULT_TOOL_TIMEOUT);
    }
}
