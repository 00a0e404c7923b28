package dev.oam.core.model;

import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.Sampling;
import org.jspecify.annotations.Nullable;

/**
 * Sampling settings of one model step; {@code null} means the model's default.
 *
 * @param parallelToolCalls whether the step may hold several tool calls (else a model is asked for at most one)
 */
public record GenerationOptions(@Nullable Double temperature, @Nullable Integer maxResponseTokens, @Nullable Sampling sampling,
        boolean parallelToolCalls) {
    public static final GenerationOptions DEFAULT = new GenerationOptions(null, null, null);

    /** Settings with at most one tool call per step. */
    public GenerationOptions(@Nullable Double temperature, @Nullable Integer maxResponseTokens, @Nullable Sampling sampling) {
        this(temperature, maxResponseTokens, sampling, false);
    }

    public static GenerationOptions of(AgentOptions options) {
        return new GenerationOptions(options.temperature(), options.maxResponseTokens(), options.sampling(),
                options.parallelToolCalls());
    }
}
