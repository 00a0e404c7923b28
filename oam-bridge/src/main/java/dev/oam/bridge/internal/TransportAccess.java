package dev.oam.bridge.internal;

import dev.oam.bridge.BridgeEngine;
import org.jspecify.annotations.Nullable;

/**
 * What a transport may do to an engine beyond the public API: answer a line it could not read, and register its input
 * thread (which then writes its own messages when that cannot block). The engine installs
 * the implementation when its class is initialised, so it is in place before any engine exists.
 *
 * <p>Only the transports (stdio in {@code dev.oam.cli}, the C ABI in {@code dev.oam.ffi}) can see this class on the
 * module path; on the class path (the shaded {@code oam.jar}) it is reachable by anyone, and still not API.
 */
public final class TransportAccess {
    /** The engine's side, installed by {@link BridgeEngine}. */
    public interface Engine {
        void rejectLine(BridgeEngine engine, String reason);

        default void startReading(BridgeEngine engine) {}

        default void inputDrained(BridgeEngine engine, boolean drained) {}

        default void inputAhead(BridgeEngine engine, boolean ahead) {}
    }

    private static volatile @Nullable Engine installed;

    private TransportAccess() {}

    /** Called once, by {@link BridgeEngine}'s static initialiser. */
    public static void install(Engine engine) {
        synchronized (TransportAccess.class) {
            if (installed != null) {
                throw new IllegalStateException("the engine access is installed already");
            }
            installed = engine;
        }
    }

    /** Answers a line the transport could not read (e.g. longer than its limit) with {@code -32600} and a null id. */
    public static void rejectLine(BridgeEngine engine, String reason) {
        access().rejectLine(engine, reason);
    }

    /**
     * Makes the calling thread the engine's input thread: with a sink that {@linkplain
     * dev.oam.bridge.MessageSink#takesWithoutBlocking can tell}, messages it causes while it handles the last line of
     * the input there is ({@link #inputDrained}) are written by it when that cannot block, instead of being handed to
     * the writer thread.
     */
    public static void startReading(BridgeEngine engine) {
        access().startReading(engine);
    }

    /**
     * Called by the input thread: {@code true} before it hands the engine the last line of the input there is (nothing
     * more buffered, nothing more readable without waiting), {@code false} after. Only in between does it write its
     * own messages; with more input there, the writer thread batches them (throughput under pipelined input).
     */
    public static void inputDrained(BridgeEngine engine, boolean drained) {
        access().inputDrained(engine, drained);
    }

    /**
     * Called by the input thread: {@code true} when it starts handling a line with more input already buffered or
     * readable behind it (an input burst), {@code false} when that ends: before it handles the last line there is, and
     * before any read that may wait. In a burst the engine buffers answers without flushing them (one write for many,
     * as a single-threaded server does); when the burst ends it flushes them at once (after the last line, with its
     * answer), so an answer never waits for input that was not there yet. Call it only when the state changes.
     */
    public static void inputAhead(BridgeEngine engine, boolean ahead) {
        access().inputAhead(engine, ahead);
    }

    private static Engine access() {
        Engine access = installed;
        if (access == null) {
            throw new IllegalStateException("BridgeEngine was not initialised"); // cannot happen: engine is an instance
        }
        return access;
    }
}
