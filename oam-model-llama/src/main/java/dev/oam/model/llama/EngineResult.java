package dev.oam.model.llama;

/**
 * What one generation produced.
 *
 * @param inputTokens tokens of the prompt
 * @param cachedInputTokens prompt tokens reused from the slot's cache (not evaluated again)
 * @param outputTokens tokens generated
 */
public record EngineResult(String text, int inputTokens, int cachedInputTokens, int outputTokens) {}
