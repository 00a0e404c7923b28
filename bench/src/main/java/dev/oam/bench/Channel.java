package dev.oam.bench;

/**
 * One client connection to a server (the bridge or the echo baseline), over stdio or in-process. Lines are sent without
 * their newline; {@link #flush()} pushes buffered lines out.
 */
abstract class Channel implements AutoCloseable {
    private final String name;
    private volatile LineHandler handler = LineHandler.IGNORE;
    private volatile String failure;

    Channel(String name) {
        this.name = name;
    }

    String name() {
        return name;
    }

    void handler(LineHandler handler) {
        this.handler = handler;
    }

    LineHandler handler() {
        return handler;
    }

    /** Why the channel stopped working (end of output, a crash), or null while it is fine. */
    String failure() {
        return failure;
    }

    void fail(String reason) {
        if (failure == null) {
            failure = reason;
        }
    }

    /**
     * Whether the client reacts on a thread of its own rather than on the thread that delivers lines. Stdio channels
     * always do (their reader thread is the client); in-process channels hand lines from the engine's writer thread to
     * a driver thread when this is on.
     */
    void clientThreadDelivery(boolean on) {}

    abstract void send(String line);

    abstract void flush();

    /** Server-side CPU time, context switches and client deliveries so far (see {@link Meter}). */
    abstract Meter.Reading reading();

    /** Extra diagnostics for error messages (e.g. the tail of the child's stderr). */
    String diagnostics() {
        return "";
    }

    @Override
    public abstract void close();
}
