package dev.oam.bridge.game;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.game.npc.Memory;
import dev.oam.game.npc.NpcOptions;
import dev.oam.game.npc.Persona;

/**
 * The wire forms of the game values ({@code npc/create}'s {@code persona}, {@code options} and {@code memory}), the
 * same ones {@code npc/state} writes, for hosts that build requests from typed values (the in-process client).
 */
public final class GameCoding {
    private GameCoding() {}

    public static ObjectNode persona(Persona persona) {
        return PersonaParams.write(persona);
    }

    public static ObjectNode options(NpcOptions options) {
        return NpcOptionsParams.write(options);
    }

    public static ObjectNode memory(Memory memory) {
        return NpcMethods.writeMemory(memory);
    }
}
