package dev.oam.core.model;

/** Token counts of a turn or step. */
public record Usage(int inputTokens, int cachedInputTokens, int outputTokens) {
    public static final Usage ZERO = new Usage(0, 0, 0);

    public int totalTokens() {
        return inputTokens + outputTokens;
    }

    public Usage plus(Usage other) {
        return new Usage(
                inputTokens + other.inputTokens,
                cachedInputTokens + other.cachedInputTokens,
                outputTokens + other.outputTokens);
    }
}
