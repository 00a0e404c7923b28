package dev.oam.bridge.game;

import dev.oam.bridge.BridgeException;
import dev.oam.game.world.WorldState;
import org.jspecify.annotations.Nullable;

/**
 * The worlds of one engine, with their subscriptions. IMPLEMENTATION IN PROGRESS (the world-state
 * work item): the methods below are what the NPC code relies on.
 */
final class Worlds {
    /** The world with this id, or {@code null}. */
    @Nullable WorldState find(String id) {
        return null;
    }

    /** Adds a host-owned world; {@code -32053 world_exists} when the id is taken, {@code -32055} past the limit. */
    void add(String id, WorldState world) throws BridgeException {
        throw new UnsupportedOperationException("worlds are being implemented");
    }

    /** Ends every subscription and forgets every world. */
    void shutdown() {}
}
