package dev.oam.game.npc;

import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolRecord;
import java.util.List;
import java.util.Objects;

/**
 * An NPC's answer to one {@link NpcTalk} ({@code npc/talk}'s result without the NPC's id).
 *
 * @param line what the NPC says aloud (a fallback line when {@code isFallback})
 * @param playerOptions suggested answers for the player, possibly none
 * @param toolCalls every tool call of the turn, in order, client, world and memory tools alike
 * @param relationship the NPC's attitude toward the player after the turn (−100…100)
 * @param isFallback the line came from the NPC's fallback pool: a guardrail block, a reply the model could not be held
 *     to (unreadable after the retries) or one with no line
 * @param usage the tokens of every model call of the turn, a blocked first attempt's included
 * @param warnings why the NPC spoke a fallback line, when the model answered but its answer was unusable; else empty
 */
public record NpcReply(
        String line,
        Emotion emotion,
        List<String> playerOptions,
        boolean endsConversation,
        List<ToolRecord> toolCalls,
        int relationship,
        boolean isFallback,
        Usage usage,
        List<String> warnings) {
    public NpcReply {
        Objects.requireNonNull(line, "line");
        warnings = List.copyOf(warnings);
        Objects.requireNonNull(emotion, "emotion");
        playerOptions = List.copyOf(playerOptions);
        toolCalls = List.copyOf(toolCalls);
        Objects.requireNonNull(usage, "usage");
    }

    /** A reply without warnings. */
    public NpcReply(
            String line,
            Emotion emotion,
            List<String> playerOptions,
            boolean endsConversation,
            List<ToolRecord> toolCalls,
            int relationship,
            boolean isFallback,
            Usage usage) {
        this(line, emotion, playerOptions, endsConversation, toolCalls, relationship, isFallback, usage, List.of());
    }
}
