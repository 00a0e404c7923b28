package dev.oam.game.npc;

import dev.oam.core.agent.AgentException;
import dev.oam.core.agent.CancellationToken;
import dev.oam.core.agent.TurnContext;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * How an NPC folds older turns into its memory summary (GAME-LAYER.md §3.9). {@link Npc} holds exactly one,
 * made in its constructor; a compactor shared with sessions replaces it there.
 */
interface NpcCompactor {
    /** The new summary and the transcript that stays verbatim. */
    record Compacted(String summary, List<TranscriptEntry> kept) {
        public Compacted {
            kept = List.copyOf(kept);
        }
    }

    /** Whether a conversation this long should be compacted now. */
    boolean due(List<TranscriptEntry> history, NpcOptions options);

    /**
     * Folds all but the most recent {@code options.keepRecentTurns()} turns into {@code summary}; {@code null} when
     * there is nothing to fold. Calls {@code commit} after the model answered and before returning.
     */
    @Nullable Compacted compact(List<TranscriptEntry> history, @Nullable String summary, Persona persona, NpcOptions options,
            CancellationToken token, TurnContext.CommitPoint commit) throws AgentException;
}
