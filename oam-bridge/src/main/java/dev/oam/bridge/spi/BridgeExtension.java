package dev.oam.bridge.spi;

import java.util.List;

/**
 * A set of methods plugged into the engine (docs/ARCHITECTURE.md, "Adding methods"). An extension holds the state of
 * one engine (the game extension: its NPCs and worlds), so a configuration names extensions by {@link Factory}: every
 * engine built from it creates its own, and {@code shutdown} of one engine never touches another's.
 *
 * <p>The extensions every transport serves ({@code BridgeConfiguration.standardExtensions()}) are the ones the class
 * path or module layer provides as services of this interface ({@code META-INF/services} or {@code provides}): each
 * provider's public no-argument constructor makes a fresh one per engine.
 */
public interface BridgeExtension {
    /** Makes a fresh extension for one engine, for example {@code GameExtension::new}. */
    @FunctionalInterface
    interface Factory {
        BridgeExtension create();
    }

    /**
     * Registers the extension's methods; called once while the engine is built. {@code context} is what the extension
     * may use of the engine (every request brings it too: {@link BridgeRequest#context()}).
     */
    void register(MethodRegistry.Builder registry, ExtensionContext context);

    /** Notification methods the extension sends, listed in {@code capabilities.notifications}. */
    default List<String> notificationMethods() {
        return List.of();
    }

    /** Cancels the extension's work and frees its objects; called by {@code shutdown}. */
    default void shutdown() {}
}
