package dev.oam.bridge;

import java.util.List;

/** A set of methods plugged into the engine (PROTOCOL.md §11). */
public interface BridgeExtension {
    /** Registers the extension's methods; called once while the engine is built. */
    void register(MethodRegistry.Builder registry, BridgeEngine engine);

    /** Notification methods the extension sends, listed in {@code capabilities.notifications}. */
    default List<String> notificationMethods() {
        return List.of();
    }

    /** Cancels the extension's work and frees its objects; called by {@code shutdown}. */
    default void shutdown() {}
}
