/** The game layer: NPCs, personas, memory, world state, decisions and content, on the core's agent loop. */
module dev.oam.game {
    requires transitive dev.oam.core;
    requires static transitive org.jspecify;

    exports dev.oam.game.content;
    exports dev.oam.game.decision;
    exports dev.oam.game.npc;
    exports dev.oam.game.world;
// dev.oam.game.internal (prompt text rules, the lenient model view) is shared by the packages above only.
}
