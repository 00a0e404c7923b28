package dev.oam.core.agent;

import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.Sampling;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Session options (the {@code options} table of {@code session/create}).
 *
 * @param enabledTools tools visible to the model, or {@code null} for all
 * @param toolTimeout time the engine has to answer a client tool call; {@link Duration#ZERO} waits forever
 * @param parallelToolCalls whether one model step may call several tools; {@code false} (the default) asks the model
 *     for at most one call per step (small models otherwise repeat a call, once per enum value)
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
        int maxAttempts,
        boolean parallelToolCalls) {

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

    /** Options with one call per step ({@code parallelToolCalls} false). */
    public AgentOptions(
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
        this(
                toolChoice,
                maxToolRounds,
                maxToolCalls,
                enabledTools,
                temperature,
                maxResponseTokens,
                sampling,
                toolTimeout,
                trimHistory,
                reservedResponseTokens,
                maxAttempts,
                false);
    }

    public static AgentOptions defaults(Duration toolTimeout) {
        return new AgentOptions(ToolChoice.AUTO, 4, 12, null, null, null, null, toolTimeout, true, 1024, 2);
    }

    public static AgentOptions defaults() {
        return defaults(DEFAULT_TOOL_TIMEOUT);
    }

    /** What a model step takes of these options: temperature, response tokens, sampling, parallel tool calls. */
    public GenerationOptions generationOptions() {
        return new GenerationOptions(temperature, maxResponseTokens, sampling, parallelToolCalls);
    }

    /** A builder starting from {@link #defaults()}. */
    public static Builder builder() {
        return defaults().toBuilder();
    }

    /** A builder starting from these values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Sets options by name instead of by position: {@code AgentOptions.builder().toolChoice(ToolChoice.REQUIRED)
     * .maxToolRounds(2).build()}, starting from {@link #defaults()} (or {@link #toBuilder()} of any options).
     */
    public static final class Builder {
        private ToolChoice toolChoice;
        private int maxToolRounds;
        private int maxToolCalls;
        private @Nullable List<String> enabledTools;
        private @Nullable Double temperature;
        private @Nullable Integer maxResponseTokens;
        private @Nullable Sampling sampling;
        private Duration toolTimeout;
        private boolean trimHistory;
        private int reservedResponseTokens;
        private int maxAttempts;
        private boolean parallelToolCalls;

        private Builder(AgentOptions from) {
            this.toolChoice = from.toolChoice();
            this.maxToolRounds = from.maxToolRounds();
            this.maxToolCalls = from.maxToolCalls();
            this.enabledTools = from.enabledTools();
            this.temperature = from.temperature();
            this.maxResponseTokens = from.maxResponseTokens();
            this.sampling = from.sampling();
            this.toolTimeout = from.toolTimeout();
            this.trimHistory = from.trimHistory();
            this.reservedResponseTokens = from.reservedResponseTokens();
            this.maxAttempts = from.maxAttempts();
            this.parallelToolCalls = from.parallelToolCalls();
        }

        public Builder toolChoice(ToolChoice toolChoice) {
            this.toolChoice = toolChoice;
            return this;
        }

        public Builder maxToolRounds(int maxToolRounds) {
            this.maxToolRounds = maxToolRounds;
            return this;
        }

        public Builder maxToolCalls(int maxToolCalls) {
            this.maxToolCalls = maxToolCalls;
            return this;
        }

        public Builder enabledTools(@Nullable List<String> enabledTools) {
            this.enabledTools = enabledTools;
            return this;
        }

        public Builder temperature(@Nullable Double temperature) {
            this.temperature = temperature;
            return this;
        }

        public Builder maxResponseTokens(@Nullable Integer maxResponseTokens) {
            this.maxResponseTokens = maxResponseTokens;
            return this;
        }

        public Builder sampling(@Nullable Sampling sampling) {
            this.sampling = sampling;
            return this;
        }

        public Builder toolTimeout(Duration toolTimeout) {
            this.toolTimeout = toolTimeout;
            return this;
        }

        public Builder trimHistory(boolean trimHistory) {
            this.trimHistory = trimHistory;
            return this;
        }

        public Builder reservedResponseTokens(int reservedResponseTokens) {
            this.reservedResponseTokens = reservedResponseTokens;
            return this;
        }

        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        public Builder parallelToolCalls(boolean parallelToolCalls) {
            this.parallelToolCalls = parallelToolCalls;
            return this;
        }

        /** @throws IllegalArgumentException when a value is out of range (as the record's constructor checks) */
        public AgentOptions build() {
            return new AgentOptions(
                    toolChoice,
                    maxToolRounds,
                    maxToolCalls,
                    enabledTools,
                    temperature,
                    maxResponseTokens,
                    sampling,
                    toolTimeout,
                    trimHistory,
                    reservedResponseTokens,
                    maxAttempts,
                    parallelToolCalls);
        }
    }
}
