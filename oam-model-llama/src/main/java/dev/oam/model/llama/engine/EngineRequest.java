package dev.oam.model.llama.engine;

import dev.oam.model.llama.grammar.Grammar;
import org.jspecify.annotations.Nullable;

/**
 * One generation.
 *
 * @param prompt the whole prompt, already in the chat template
 * @param grammar the grammar the output must match, or {@code null} for free text (an engine that hands it to llama.cpp
 *     prints it, {@link Grammar#gbnf()})
 * @param maxTokens the most tokens to generate (at least 1)
 * @param temperature 0 for greedy decoding
 * @param topK 0 for no top-k cut
 * @param topP 1 for no nucleus cut
 * @param seed the sampler's seed (greedy ignores it)
 * @param extras min-p, typical-p, the repetition penalties, DRY and XTC
 */
public record EngineRequest(
        String prompt,
        @Nullable Grammar grammar,
        int maxTokens,
        double temperature,
        int topK,
        double topP,
        long seed,
        SamplerExtras extras) {
    /** A request with no sampler setting beyond temperature, top-k and top-p. */
    public EngineRequest(
            String prompt,
            @Nullable Grammar grammar,
            int maxTokens,
            double temperature,
            int topK,
            double topP,
            long seed) {
        this(prompt, grammar, maxTokens, temperature, topK, topP, seed, SamplerExtras.NONE);
    }

    /**
     * Refuses what no engine can run: fewer than one token, a temperature below 0 or not a number, a top-p not a
     * number. The backend never asks for these; a direct caller (a benchmark) might.
     */
    public void checkRunnable() {
        if (maxTokens < 1) {
            throw new IllegalArgumentException("maxTokens must be at least 1, was " + maxTokens);
        }
        if (Double.isNaN(temperature) || temperature < 0) {
            throw new IllegalArgumentException("temperature must be ≥ 0, was " + temperature);
        }
        if (Double.isNaN(topP)) {
            throw new IllegalArgumentException("topP must be a number");
        }
    }
}
