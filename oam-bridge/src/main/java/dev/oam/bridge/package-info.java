/**
 * The JSON-RPC engine, as hosts and transports use it: {@link dev.oam.bridge.BridgeEngine} (with {@code call} for JVM
 * hosts), {@link dev.oam.bridge.BridgeConfiguration}, {@link dev.oam.bridge.MemoryLimits},
 * {@link dev.oam.bridge.OwnedBackends}, {@link dev.oam.bridge.MessageSink} and
 * {@link dev.oam.bridge.spi.BridgeException}. The extension SPI (more methods) is {@code dev.oam.bridge.spi}; what a
 * byte-stream transport alone needs is {@code dev.oam.bridge.transport}. Everything else here is package-private:
 * routing, the envelope, requests in flight, the delivery policy ({@code Outbound}), shutdown and the built-in methods.
 * Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.bridge;

import org.jspecify.annotations.NullMarked;
