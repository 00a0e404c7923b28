package dev.oam.game.world;

import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolReply;
import java.util.List;

/**
 * An NPC's local world tools ({@code read_world_state}, {@code update_world_state}; GAME-LAYER.md §3.8).
 * IMPLEMENTATION IN PROGRESS (the world-state work item): signatures are the contract.
 */
public final class WorldTools {
    public static final String READ = "read_world_state";
    public static final String UPDATE = "update_world_state";

    /**
     * @param readable paths the read tool may read ({@code ""} = everything; empty = no read tool)
     * @param writable paths the update tool may change (empty = no update tool)
     */
    public WorldTools(WorldState world, List<String> readable, List<String> writable) {
        throw new UnsupportedOperationException("world tools are being implemented");
    }

    /** The read tool (when anything is readable), then the update tool (when anything is writable). */
    public List<ToolDefinition> definitions() {
        throw new UnsupportedOperationException();
    }

    public boolean handles(String toolName) {
        return toolName.equals(READ) || toolName.equals(UPDATE);
    }

    /** Runs one call; never throws: mistakes come back as error outputs naming valid paths. */
    public ToolReply execute(ToolCall call) {
        throw new UnsupportedOperationException();
    }
}
