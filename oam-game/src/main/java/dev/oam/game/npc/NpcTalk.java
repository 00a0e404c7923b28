package dev.oam.game.npc;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.agent.ToolChoice;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What the player says to an NPC (docs/GAMES.md, "The prompt").
 *
 * @param line the player's line; may be empty (the NPC speaks first)
 * @param context the situation: a string, or an object whose members become "key: value" facts; {@code null} for none
 * @param toolChoice overrides the NPC's tool choice for this turn; {@code null} keeps its options' choice
 */
public record NpcTalk(
        String line, @Nullable JsonNode context, @Nullable ToolChoice toolChoice) {
    public NpcTalk {
        Objects.requireNonNull(line, "line");
    }

    /** A line with no situation and the NPC's own tool choice. */
    public static NpcTalk of(String line) {
        return new NpcTalk(line, null, null);
    }
}
