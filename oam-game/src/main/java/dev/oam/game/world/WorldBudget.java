package dev.oam.game.world;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Memory caps for world state (docs/RELIABILITY.md, Limits): the size one world's state may have and the size all
 * worlds sharing this budget may have together, both in {@link dev.oam.core.json.JsonSize} units (about the characters
 * of the compact JSON). A world under a budget refuses a write that could take it past either cap with
 * {@link WorldLimitException} before it changes anything.
 */
public final class WorldBudget {
    /** Default cap for one world: 16 MiB of JSON text. */
    public static final long DEFAULT_WORLD_BYTES = 16L << 20;
    /** Default cap for all worlds of one bridge together: 64 MiB of JSON text. */
    public static final long DEFAULT_TOTAL_BYTES = 64L << 20;

    private final long worldBytes;
    private final long totalBytes;
    private final AtomicLong used = new AtomicLong();

    public WorldBudget(long worldBytes, long totalBytes) {
        if (worldBytes < 2 || totalBytes < 2) {
            throw new IllegalArgumentException("world size caps must be at least 2");
        }
        this.worldBytes = worldBytes;
        this.totalBytes = totalBytes;
    }

    public static WorldBudget defaults() {
        return new WorldBudget(DEFAULT_WORLD_BYTES, DEFAULT_TOTAL_BYTES);
    }

    public long worldBytes() {
        return worldBytes;
    }

    public long totalBytes() {
        return totalBytes;
    }

    /** What the worlds under this budget hold together now. */
    public long used() {
        return used.get();
    }

    /** Takes {@code amount} from the total if it fits (an amount of 0 or less always does). */
    boolean tryReserve(long amount) {
        if (amount <= 0) {
            used.addAndGet(amount);
            return true;
        }
        while (true) {
            long current = used.get();
            if (current + amount > totalBytes) {
                return false;
            }
            if (used.compareAndSet(current, current + amount)) {
                return true;
            }
        }
    }

    void adjust(long amount) {
        used.addAndGet(amount);
    }
}
