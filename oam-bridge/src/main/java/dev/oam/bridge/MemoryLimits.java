package dev.oam.bridge;

import dev.oam.core.agent.HistoryLimits;
import dev.oam.game.world.WorldBudget;

/**
 * Memory caps that protect the host (docs/RELIABILITY.md, Limits), in {@link dev.oam.core.json.JsonSize} units (about
 * the characters of the compact JSON):
 *
 * @param historyBytes one conversation's history (a session's or an NPC's); {@code -32004} when a turn would pass it
 * @param totalHistoryBytes all sessions' and NPCs' histories together; {@code -32004} with {@code data.scope "total"}
 * @param worldBytes one world's state; {@code -32055 limit_reached} when a write would pass it
 * @param totalWorldBytes all worlds made with {@code world/create} together; {@code -32055} with {@code data.scope
 *     "total"}
 */
public record MemoryLimits(long historyBytes, long totalHistoryBytes, long worldBytes, long totalWorldBytes) {
    public static final MemoryLimits DEFAULTS = new MemoryLimits(
            HistoryLimits.DEFAULT_HISTORY_BYTES,
            HistoryLimits.DEFAULT_TOTAL_BYTES,
            WorldBudget.DEFAULT_WORLD_BYTES,
            WorldBudget.DEFAULT_TOTAL_BYTES);

    public MemoryLimits {
        if (historyBytes < 1 || totalHistoryBytes < 1 || worldBytes < 2 || totalWorldBytes < 2) {
            throw new IllegalArgumentException("memory caps must be positive");
        }
    }

    HistoryLimits histories() {
        return new HistoryLimits(historyBytes, totalHistoryBytes);
    }

    /** A fresh budget for the worlds of one engine. */
    public WorldBudget worlds() {
        return new WorldBudget(worldBytes, totalWorldBytes);
    }
}
