package dev.oam.bridge.game;

import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.BridgeException;
import dev.oam.bridge.spi.BridgeExtension;
import dev.oam.bridge.spi.MethodRegistry;
import dev.oam.core.Environment;
import dev.oam.core.agent.HistoryLimits;
import dev.oam.game.world.WorldState;
import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The game methods (docs/GAMES.md): {@code npc/*}, {@code decision/*}, {@code world/*} and {@code content/generate}.
 * One instance per engine.
 */
public final class GameExtension implements BridgeExtension {
    public static final String NPC_EVENT = "npc/event";
    public static final String WORLD_CHANGED = "world/changed";

    final Worlds worlds = new Worlds();
    final Npcs npcs = new Npcs(this);
    /** The engine's history caps, which NPC conversations count against (set when registered). */
    volatile HistoryLimits histories = HistoryLimits.defaults();

    /**
     * Where model-state files of saves are written and read ({@link SaveFolder}); null: none, and a save with
     * {@code modelState} says so in a warning.
     */
    volatile @Nullable Path saveFolder = folder(Environment.system().variable(SaveFolder.VARIABLE));

    /** The extension with no world yet. */
    public GameExtension() {}

    private static @Nullable Path folder(@Nullable String value) {
        return value == null || value.isBlank() ? null : Path.of(value);
    }

    /** Sets the folder of model-state files ({@code npc/state}'s {@code modelState}); replaces {@code OAM_SAVE_DIR}. */
    public GameExtension saveFolder(@Nullable Path folder) {
        saveFolder = folder;
        return this;
    }

    @Override
    public void register(MethodRegistry.Builder registry, BridgeEngine engine) {
        histories = engine.historyLimits();
        worlds.useBudget(engine.configuration().memoryLimits().worlds());
        WorldMethods.register(registry, this);
        NpcMethods.register(registry, this);
        DecisionMethods.register(registry, this);
        ContentMethods.register(registry, this);
    }

    @Override
    public List<String> notificationMethods() {
        return List.of(NPC_EVENT, WORLD_CHANGED);
    }

    /** Shares a world the Java host owns under {@code id}; NPCs and {@code world/*} requests then use it. */
    public void addWorld(WorldState world, String id) throws BridgeException {
        worlds.add(id, world);
    }

    @Override
    public void shutdown() {
        npcs.shutdown();
        worlds.shutdown();
    }
}
