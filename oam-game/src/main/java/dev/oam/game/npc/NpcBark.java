package dev.oam.game.npc;

import dev.oam.core.model.Usage;
import java.util.Objects;

/** A one-off ambient line ({@code npc/bark}): no history, memory or tools. */
public record NpcBark(String line, Usage usage) {
    public NpcBark {
        Objects.requireNonNull(line, "line");
        Objects.requireNonNull(usage, "usage");
    }
}
