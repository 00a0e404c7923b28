/**
 * The extension SPI: how to add methods to an engine (the game methods in {@code dev.oam.bridge.game} are one such
 * extension). {@link dev.oam.bridge.spi.BridgeExtension} registers {@link dev.oam.bridge.spi.Handler}s in a
 * {@link dev.oam.bridge.spi.MethodRegistry} and uses the engine only through its
 * {@link dev.oam.bridge.spi.ExtensionContext}; handlers fail with {@link dev.oam.bridge.spi.BridgeException}; a handler
 * gets a {@link dev.oam.bridge.spi.BridgeRequest} and returns a {@link dev.oam.bridge.spi.Reply};
 * {@link dev.oam.bridge.spi.OperationQueue} and {@link dev.oam.bridge.spi.Operation} give per-object order; and the
 * readers and writers every method shares, so that all speak one dialect: {@link dev.oam.bridge.spi.Params},
 * {@link dev.oam.bridge.spi.Options}, {@link dev.oam.bridge.spi.ToolDefinitions}, {@link dev.oam.bridge.spi.Coding},
 * {@link dev.oam.bridge.spi.Methods}. The package compiles without the bridge's root package ({@code dev.oam.bridge},
 * the host API), which builds on it. Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.bridge.spi;

import org.jspecify.annotations.NullMarked;
