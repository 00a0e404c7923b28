package dev.oam.model.llama.engine;

import org.jspecify.annotations.Nullable;

/**
 * One generation.
 *
 * @param prompt the whole prompt, already in the chat template
 * @param grammar a GBNF grammar the output must match, or {@code null} for free text
 * @param maxTokens the most tokens to generate (at least 1)
 * @param temperature 0 for greedy decoding
 * @param topK 0 for no top-k cut
 * @param topP 1 for no nucleus cut
 * @param seed the sampler's seed (greedy ignores it)
 */
public record EngineRequest(String prompt, @Nullable String grammar, int maxTokens, double temperature, int topK, double topP,
        long seed) {}
