package dev.oam.bridge.client;

/** A {@link OamWorld#subscribe} subscription; {@link #close()} ends it ({@code world/unsubscribe}). */
public final class Subscription implements AutoCloseable {
    private final Oam oam;
    private final String id;
    private final String world;
    private final String path;

    Subscription(Oam oam, String id, String world, String path) {
        this.oam = oam;
        this.id = id;
        this.world = world;
        this.path = path;
    }

    public String id() {
        return id;
    }

    public String world() {
        return world;
    }

    public String path() {
        return path;
    }

    @Override
    public void close() {
        oam.unsubscribe(id);
    }
}
