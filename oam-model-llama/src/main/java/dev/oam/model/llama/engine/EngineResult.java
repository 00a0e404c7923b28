package dev.oam.model.llama.engine;

/**
 * What one generation produced.
 *
 * @param inputTokens tokens of the prompt
 * @param cachedInputTokens prompt tokens reused from the slot's cache (not evaluated again)
 * @param outputTokens tokens generated
 */
public record EngineResult(String text, int inputTokens, int cachedInputTokens, int outputTokens) {}
