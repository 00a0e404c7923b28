package dev.oam.bridge.game;

import dev.oam.game.npc.Persona;
import org.jspecify.annotations.Nullable;

/** The NPCs of one engine. */
final class Npcs {
    private final GameExtension game;

    Npcs(GameExtension game) {
        this.game = game;
    }

    /** The persona of the NPC with this id (decisions can decide as an NPC), or {@code null}. */
    @Nullable Persona persona(String id) {
        return null;
    }

    /** How many NPCs use the world with this id ({@code world/list}). */
    int countUsing(String worldId) {
        return 0;
    }

    void shutdown() {}
}
