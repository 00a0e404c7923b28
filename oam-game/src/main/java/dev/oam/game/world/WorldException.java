package dev.oam.game.world;

/** A world path or value was rejected; {@code path} is the offending path as given. */
public class WorldException extends Exception {
    private final String path;

    public WorldException(String path, String message) {
        super(message, null, false, false);
        this.path = path;
    }

    public String path() {
        return path;
    }
}
