package dev.oam.game.world;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A JSON blackboard shared by the game and its NPCs (PROTOCOL.md §6, World state). Thread-safe;
 * every method is atomic. IMPLEMENTATION IN PROGRESS (the world-state work item): signatures are the contract.
 */
public final class WorldState {
    public WorldState() {
        this(Json.object());
    }

    public WorldState(ObjectNode initial) {
        throw new UnsupportedOperationException("world state is being implemented");
    }

    /** Counts real changes only. */
    public long version() {
        throw new UnsupportedOperationException();
    }

    /** A deep copy of the whole state. */
    public ObjectNode snapshot() {
        throw new UnsupportedOperationException();
    }

    /** A deep copy of the value at {@code path} ({@code ""} is the root), or {@code null} when absent. */
    public @Nullable JsonNode get(String path) throws WorldException {
        throw new UnsupportedOperationException();
    }

    public List<WorldChange> set(String path, JsonNode value) throws WorldException {
        throw new UnsupportedOperationException();
    }

    public List<WorldChange> merge(String path, JsonNode patch) throws WorldException {
        throw new UnsupportedOperationException();
    }

    /** Removes the value; returns the old one, or {@code null} when there was none. */
    public @Nullable JsonNode remove(String path) throws WorldException {
        throw new UnsupportedOperationException();
    }

    /** The "Game state:" lines of GAME-LAYER.md §3.3 for these paths (missing ones skipped), at most {@code maxLines}. */
    public String summary(List<String> paths, int maxLines) {
        throw new UnsupportedOperationException();
    }

    public void addListener(WorldListener listener) {
        throw new UnsupportedOperationException();
    }

    public void removeListener(WorldListener listener) {
        throw new UnsupportedOperationException();
    }
}
