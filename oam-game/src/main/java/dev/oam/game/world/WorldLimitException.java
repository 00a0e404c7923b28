package dev.oam.game.world;

/**
 * A write (or a new world) that would take a world's state past its size cap, or all worlds together past theirs
 * ({@link WorldBudget}). The world is unchanged. The bridge answers it with {@code -32055 limit_reached}.
 */
public final class WorldLimitException extends WorldException {
    private final long limit;
    private final boolean total;

    public WorldLimitException(String path, String message, long limit, boolean total) {
        super(path, message);
        this.limit = limit;
        this.total = total;
    }

    /** The cap that was hit, in {@link dev.oam.core.json.JsonSize} units. */
    public long limit() {
        return limit;
    }

    /** Whether it was the cap for all worlds together (otherwise the one for a single world). */
    public boolean total() {
        return total;
    }
}
