package dev.oam.bridge.game;

import dev.oam.bridge.MethodRegistry;

/** {@code decision/decide} and {@code decision/decideMany}. IMPLEMENTATION IN PROGRESS (the decisions work item). */
final class DecisionMethods {
    private DecisionMethods() {}

    static void register(MethodRegistry.Builder registry, GameExtension game) {}
}
