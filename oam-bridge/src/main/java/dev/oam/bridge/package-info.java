/**
 * The JSON-RPC engine. Its public types are of two kinds:
 *
 * <ul>
 *   <li>API, for hosts and transports: {@link dev.oam.bridge.BridgeEngine} (with {@code call} for JVM hosts),
 *       {@link dev.oam.bridge.BridgeConfiguration}, {@link dev.oam.bridge.MemoryLimits},
 *       {@link dev.oam.bridge.MessageSink}, {@link dev.oam.bridge.BridgeException};
 *   <li>extension SPI, for more methods (the game methods in {@code dev.oam.bridge.game} are one such extension):
 *       {@link dev.oam.bridge.BridgeExtension}, {@link dev.oam.bridge.MethodRegistry}, {@link dev.oam.bridge.Handler},
 *       {@link dev.oam.bridge.BridgeRequest}, {@link dev.oam.bridge.Reply}, per-object order with
 *       {@link dev.oam.bridge.OperationQueue} and {@link dev.oam.bridge.Operation}, and the readers and writers every
 *       method shares so that all speak one dialect: {@link dev.oam.bridge.Params}, {@link dev.oam.bridge.Options},
 *       {@link dev.oam.bridge.ToolDefinitions}, {@link dev.oam.bridge.Coding}, {@link dev.oam.bridge.Methods}.
 * </ul>
 *
 * Everything else here is package-private; what a byte-stream transport alone needs is in {@code dev.oam.bridge.transport}.
 * Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.bridge;

import org.jspecify.annotations.NullMarked;
