package dev.oam.bridge.game;

import dev.oam.bridge.MethodRegistry;

/** {@code content/generate}. IMPLEMENTATION IN PROGRESS (the decisions work item). */
final class ContentMethods {
    private ContentMethods() {}

    static void register(MethodRegistry.Builder registry, GameExtension game) {}
}
