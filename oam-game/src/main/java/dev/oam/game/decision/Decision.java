package dev.oam.game.decision;

import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolRecord;
import java.util.List;
import java.util.Objects;

/**
 * The outcome of a decision, in the key order of the {@code decision/decide} result.
 *
 * @param confidence 0–100
 * @param toolCalls the tool calls the model made first, in completion order
 * @param isFallback the answer is the request's fallback option because guardrails blocked the decision or the model
 *     refused
 */
public record Decision(
        String optionID,
        String reasoning,
        int confidence,
        List<ToolRecord> toolCalls,
        Usage usage,
        boolean isFallback) {

    public Decision {
        Objects.requireNonNull(optionID, "optionID");
        Objects.requireNonNull(reasoning, "reasoning");
        Objects.requireNonNull(usage, "usage");
        toolCalls = List.copyOf(toolCalls);
        if (confidence < 0 || confidence > 100) {
            throw new IllegalArgumentException("confidence must be 0–100, not " + confidence);
        }
    }

    /** The answer for a decision with one option: certain, and no model involved. */
    static Decision only(String optionID) {
        return new Decision(optionID, "", 100, List.of(), Usage.ZERO, false);
    }

    /** The fallback answer for a blocked or refused decision; {@code usage} is what the blocked attempt consumed. */
    static Decision fallback(String optionID, Usage usage) {
        return new Decision(optionID, "", 0, List.of(), usage, true);
    }
}
