package dev.oam.game.world;

/** Hears every change of a world, synchronously and in order, while the world's lock is held. */
@FunctionalInterface
public interface WorldListener {
    void changed(WorldState world, WorldChange change);
}
