/**
 * What a byte-stream transport (stdio) needs beyond the engine's API: a sink that may be written by the thread that
 * produced a line ({@link dev.oam.bridge.transport.StreamSink}), and the input state it reports
 * ({@link dev.oam.bridge.transport.LineInput}), and what it may be told of the path each line took
 * ({@link dev.oam.bridge.transport.DeliveryListener}). Exported to the transports only; not API.
 */
@NullMarked
package dev.oam.bridge.transport;

import org.jspecify.annotations.NullMarked;
