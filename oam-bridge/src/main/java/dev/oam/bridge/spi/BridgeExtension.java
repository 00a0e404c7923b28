package dev.oam.bridge.spi;

import dev.oam.bridge.BridgeEngine;
import java.util.List;

/**
 * A set of methods plugged into the engine (docs/ARCHITECTURE.md, "Adding methods"). An extension holds the state of
 * one engine (the game extension: its NPCs and worlds), so a configuration names extensions by {@link Factory}: every
 * engine built from it creates its own, and {@code shutdown} of one engine never touches another's.
 */
public interface BridgeExtension {
    /** Makes a fresh extension for one engine, for example {@code GameExtension::new}. */
    @FunctionalInterface
    interface Factory {
        BridgeExtension create();
    }

    /** Registers the extension's methods; called once while the engine is built. */
    void register(MethodRegistry.Builder registry, BridgeEngine engine);

    /** Notification methods the extension sends, listed in {@code capabilities.notifications}. */
    default List<String> notificationMethods() {
        return List.of();
    }

    /** Cancels the extension's work and frees its objects; called by {@code shutdown}. */
    default void shutdown() {}
}
