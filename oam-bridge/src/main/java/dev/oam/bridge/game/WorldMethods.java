package dev.oam.bridge.game;

import dev.oam.bridge.MethodRegistry;

/** {@code world/*}. IMPLEMENTATION IN PROGRESS (the world-state work item). */
final class WorldMethods {
    private WorldMethods() {}

    static void register(MethodRegistry.Builder registry, GameExtension game) {}
}
