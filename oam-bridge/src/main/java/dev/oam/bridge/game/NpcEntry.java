package dev.oam.bridge.game;

import dev.oam.bridge.spi.OperationQueue;
import dev.oam.game.npc.Npc;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One NPC as the engine holds it: its id, its queue (every change to the NPC runs there, one at a time), the ids and
 * descriptions {@code npc/list} and {@code npc/state} name, and the NPC itself, which owns the behaviour.
 */
final class NpcEntry {
    final String id;
    final OperationQueue queue;
    final Instant createdAt = Instant.now();
    final String modelDescription;
    final @Nullable String worldId;
    final Npc npc;

    NpcEntry(Npc npc, String modelDescription, @Nullable String worldId) {
        this.npc = Objects.requireNonNull(npc, "npc");
        this.id = npc.id();
        this.queue = new OperationQueue("npc-" + id);
        this.modelDescription = modelDescription;
        this.worldId = worldId;
    }
}
