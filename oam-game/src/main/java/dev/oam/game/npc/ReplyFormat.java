package dev.oam.game.npc;

/** How an NPC replies (docs/GAMES.md, "Persona and options"). */
public enum ReplyFormat {
    AUTOMATIC("automatic"),
    STRUCTURED("structured"),
    TEXT("text");

    private final String wireName;

    ReplyFormat(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }
}
