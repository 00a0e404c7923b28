package dev.oam.core.model;

import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.Sampling;
import org.jspecify.annotations.Nullable;

/** Sampling settings of one model step; {@code null} means the model's default. */
public record GenerationOptions(@Nullable Double temperature, @Nullable Integer maxResponseTokens, @Nullable Sampling sampling) {
    public static final GenerationOptions DEFAULT = new GenerationOptions(null, null, null);

    public static GenerationOptions of(AgentOptions options) {
        return new GenerationOptions(options.temperature(), options.maxResponseTokens(), options.sampling());
    }
}
