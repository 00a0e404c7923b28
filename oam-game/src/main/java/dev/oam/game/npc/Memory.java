package dev.oam.game.npc;

import java.util.List;
import org.jspecify.annotations.Nullable;

/** What an NPC remembers: facts, its attitude toward the player (−100…100) and a summary of older turns. */
public record Memory(
        List<String> facts, int relationship, @Nullable String summary) {
    public static final Memory EMPTY = new Memory(List.of(), 0, null);

    public Memory {
        facts = List.copyOf(facts);
        relationship = Math.max(-100, Math.min(100, relationship));
    }

    public Memory withSummary(@Nullable String newSummary) {
        return new Memory(facts, relationship, newSummary);
    }

    /** The attitude word for a relationship value (docs/GAMES.md, "The memory note"). */
    public static String attitude(int relationship) {
        if (relationship < -60) {
            return "hostile";
        }
        if (relationship <= -21) {
            return "unfriendly";
        }
        if (relationship <= 20) {
            return "neutral";
        }
        if (relationship <= 60) {
            return "friendly";
        }
        return "trusting";
    }
}
