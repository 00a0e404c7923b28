package dev.oam.bridge.game;

import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeExtension;
import dev.oam.bridge.spi.ExtensionContext;
import dev.oam.bridge.spi.MethodRegistry;
import dev.oam.core.agent.HistoryLimits;
import dev.oam.game.world.WorldState;
import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The game methods (docs/GAMES.md): {@code npc/*}, {@code decision/*}, {@code world/*} and {@code content/generate}.
 * One instance per engine; a service of {@link BridgeExtension}, so every transport serves it
 * ({@code BridgeConfiguration.standardExtensions()}).
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
    volatile @Nullable Path saveFolder;

    private volatile boolean saveFolderSet; // by the host here: the engine's configured folder does not replace it

    /** The extension with no world yet. */
    public GameExtension() {}

    /**
     * Sets the folder of model-state files ({@code npc/state}'s {@code modelState}); replaces the engine's configured
     * one ({@code BridgeConfiguration.Builder.saveFolder}, else {@code OAM_SAVE_DIR}).
     */
    public GameExtension saveFolder(@Nullable Path folder) {
        saveFolder = folder;
        saveFolderSet = true;
        return this;
    }

    @Override
    public void register(MethodRegistry.Builder registry, ExtensionContext context) {
        histories = context.historyLimits();
        if (!saveFolderSet) {
            saveFolder = context.saveFolder();
        }
        worlds.useBudget(context.worldBudget());
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
