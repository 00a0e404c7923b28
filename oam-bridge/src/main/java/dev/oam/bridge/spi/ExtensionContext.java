package dev.oam.bridge.spi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.HistoryLimits;
import dev.oam.core.model.LanguageModel;
import dev.oam.game.world.WorldBudget;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * What an extension may use of the engine that runs it: given to {@link BridgeExtension#register} and reachable from
 * every request ({@link BridgeRequest#context()}). Implemented by the engine only.
 */
public interface ExtensionContext {
    /** Names the folder of model-state files of saves when the host configured none ({@code saveFolder}). */
    String SAVE_FOLDER_VARIABLE = "OAM_SAVE_DIR";

    /**
     * Creates the model for a {@code model} parameter value, with the engine's backends and defaults; errors name the
     * parameter at {@code path}.
     */
    LanguageModel makeModel(@Nullable JsonNode spec, String path) throws BridgeException;

    /**
     * Sends a notification through the engine's single writer: for notifications an extension emits on its own
     * ({@code world/changed}); a handler's events about its own request go with that request
     * ({@link BridgeRequest#notify}).
     */
    void sendNotification(String method, ObjectNode params);

    /** The tool timeout a method uses when its request names none (the configuration's). */
    Duration defaultToolTimeout();

    /** The history caps every conversation of the engine is held to (docs/RELIABILITY.md, Limits). */
    HistoryLimits historyLimits();

    /** A fresh budget for the worlds of the engine, under its configured world caps. */
    WorldBudget worldBudget();

    /**
     * The folder where saves keep model-state files (docs/GAMES.md, "Saving the model's state"), or null when the host
     * configured none.
     */
    java.nio.file.@Nullable Path saveFolder();
}
