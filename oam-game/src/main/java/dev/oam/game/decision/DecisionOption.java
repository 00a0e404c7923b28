package dev.oam.game.decision;

import java.util.Objects;

/**
 * One option of a decision: an id the model chooses and what it means. The id is stripped of surrounding whitespace and
 * must not be empty; the description may be empty.
 */
public record DecisionOption(String id, String description) {
    public DecisionOption {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(description, "description");
        id = id.strip();
        if (id.isEmpty()) {
            throw new IllegalArgumentException("id must not be blank");
        }
        description = description.strip();
    }

    /** An option without a description. */
    public static DecisionOption of(String id) {
        return new DecisionOption(id, "");
    }
}
