package dev.oam.bridge;

import dev.oam.core.Log;
import dev.oam.core.model.ModelBackend;
import java.util.List;

/**
 * The backends a host gave a configuration ({@link BridgeConfiguration.Builder#backends}), owned by the engines built
 * from it: each engine takes a share when it is made and returns it when it closes, and the last share returned closes
 * every backend. A configuration whose engines have all closed cannot make another (its backends are closed); a host
 * that wants engines one after another from one set of backends keeps one engine open, or builds a configuration per
 * engine.
 *
 * <p>Backends given with {@link BridgeConfiguration.Builder#sharedBackends} stay the host's (for one loaded model
 * serving several configurations): they are listed here but never closed by an engine. The backends discovered on the
 * class path (the default) are shared by the whole process and never closed: they are not in here. Thread-safe.
 */
public final class OwnedBackends {
    static final OwnedBackends NONE = new OwnedBackends(List.of(), false);

    private final List<ModelBackend> backends;
    private final boolean owned;
    private int engines; // guarded by this
    private boolean closed; // guarded by this

    OwnedBackends(List<ModelBackend> backends, boolean owned) {
        this.backends = List.copyOf(backends);
        this.owned = owned;
    }

    /**
     * Whether the engines close them (given with {@code backends}), or the host keeps them ({@code sharedBackends}).
     */
    public boolean isOwned() {
        return owned;
    }

    /** The backends, in the order given. */
    public List<ModelBackend> list() {
        return backends;
    }

    /** Whether the last engine has closed them. */
    public synchronized boolean isClosed() {
        return closed;
    }

    /** An engine is made: it holds them until {@link #release()}. */
    synchronized void acquire() {
        if (!owned) {
            return; // the host's (or the process's): nothing to count, as release() counts nothing for them
        }
        if (closed) {
            throw new IllegalStateException(
                    "the model backends of this configuration were closed with its last engine; "
                            + "build a new configuration (with new backends) for another engine");
        }
        engines++;
    }

    /** An engine has closed; the last one closes every backend (a failing close is logged, the others still run). */
    void release() {
        synchronized (this) {
            if (!owned || --engines > 0) {
                return;
            }
            closed = true;
        }
        for (ModelBackend backend : backends) {
            try {
                backend.close();
            } catch (RuntimeException e) {
                Log.error("closing the '" + backend.type() + "' model backend failed", e);
            }
        }
    }

    @Override
    public String toString() {
        return (owned ? "OwnedBackends" : "SharedBackends")
                + backends.stream().map(ModelBackend::type).toList();
    }
}
