package dev.oam.core.model;

import org.jspecify.annotations.Nullable;

/**
 * Sampling settings of one model step; {@code null} means the model's default.
 *
 * @param parallelToolCalls whether the step may hold several tool calls (else a model is asked for at most one)
 * @param dialogue the answer is this character's spoken reply ({@link DialogueForm}), or {@code null}
 */
public record GenerationOptions(
        @Nullable Double temperature,
        @Nullable Integer maxResponseTokens,
        @Nullable Sampling sampling,
        boolean parallelToolCalls,
        @Nullable DialogueForm dialogue) {
    public static final GenerationOptions DEFAULT = new GenerationOptions(null, null, null);

    /** Settings with at most one tool call per step. */
    public GenerationOptions(
            @Nullable Double temperature, @Nullable Integer maxResponseTokens, @Nullable Sampling sampling) {
        this(temperature, maxResponseTokens, sampling, false);
    }

    /** Settings of an answer that is no character's reply. */
    public GenerationOptions(
            @Nullable Double temperature,
            @Nullable Integer maxResponseTokens,
            @Nullable Sampling sampling,
            boolean parallelToolCalls) {
        this(temperature, maxResponseTokens, sampling, parallelToolCalls, null);
    }

    /** The same settings for an answer spoken as {@code form}. */
    public GenerationOptions withDialogue(@Nullable DialogueForm form) {
        return new GenerationOptions(temperature, maxResponseTokens, sampling, parallelToolCalls, form);
    }
}
