package dev.oam.bridge.game;

import dev.oam.bridge.MethodRegistry;

/** {@code npc/*}. */
final class NpcMethods {
    private NpcMethods() {}

    static void register(MethodRegistry.Builder registry, GameExtension game) {}
}
