package dev.oam.game.npc;

import dev.oam.core.agent.Sampling;
import dev.oam.core.agent.ToolChoice;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * An NPC's options (PROTOCOL.md §6 options table), with their defaults in {@link #defaults(Duration)}.
 *
 * @param secretsUnlockAtRelationship {@code null}: secrets always in the prompt with a rule to guard them
 */
public record NpcOptions(
        ReplyFormat replyFormat,
        @Nullable String groundingTool,
        ToolChoice toolChoice,
        int maxToolRounds,
        int maxToolCalls,
        Duration toolTimeout,
        List<String> worldReadable,
        List<String> worldWritable,
        List<String> worldContextPaths,
        boolean rememberFact,
        boolean changeRelationship,
        int maxFacts,
        int maxRelationshipChange,
        @Nullable Integer secretsUnlockAtRelationship,
        List<Emotion> emotions,
        int playerOptionCount,
        boolean canEndConversation,
        @Nullable String extraInstructions,
        int compactAfterTurns,
        int keepRecentTurns,
        boolean fallbackOnGuardrail,
        List<String> fallbackLines,
        @Nullable Double temperature,
        @Nullable Integer maximumResponseTokens,
        int barkMaximumTokens,
        @Nullable Sampling sampling) {

    public static final List<String> DEFAULT_FALLBACK_LINES = List.of(
            "Let's talk about something else.", "I'd rather not speak of that.", "Hmm. Ask me something else.");

    public NpcOptions {
        worldReadable = List.copyOf(worldReadable);
        worldWritable = List.copyOf(worldWritable);
        worldContextPaths = List.copyOf(worldContextPaths);
        emotions = List.copyOf(emotions);
        fallbackLines = List.copyOf(fallbackLines);
    }

    public static NpcOptions defaults(Duration toolTimeout) {
        return new NpcOptions(ReplyFormat.AUTOMATIC, null, ToolChoice.EXPLICIT, 2, 6, toolTimeout, List.of(""), List.of(),
                List.of(), false, false, 12, 10, 50, List.of(Emotion.values()), 3, true, null, 8, 2, true, List.of(),
                null, null, 48, null);
    }

    /** The fallback pool: the configured lines (trimmed, empties dropped) or the defaults. */
    public List<String> fallbackPool() {
        List<String> pool = fallbackLines.stream().map(String::strip).filter(s -> !s.isEmpty()).toList();
        return pool.isEmpty() ? DEFAULT_FALLBACK_LINES : pool;
    }

    /** {@code playerOptionCount} clamped to 0–4. */
    public int optionCount() {
        return Math.max(0, Math.min(4, playerOptionCount));
    }
}
