package dev.oam.bridge.internal;

import dev.oam.bridge.BridgeEngine;
import org.jspecify.annotations.Nullable;

/**
 * What a transport may do to an engine beyond the public API: answer a line it could not read. The engine installs
 * the implementation when its class is initialised, so it is in place before any engine exists.
 *
 * <p>Only the transports (stdio in {@code dev.oam.cli}, the C ABI in {@code dev.oam.ffi}) can see this class on the
 * module path; on the class path (the shaded {@code oam.jar}) it is reachable by anyone, and still not API.
 */
public final class TransportAccess {
    /** The engine's side, installed by {@link BridgeEngine}. */
    public interface Engine {
        void rejectLine(BridgeEngine engine, String reason);
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
        Engine access = installed;
        if (access == null) {
            throw new IllegalStateException("BridgeEngine was not initialised"); // cannot happen: engine is an instance
        }
        access.rejectLine(engine, reason);
    }
}
