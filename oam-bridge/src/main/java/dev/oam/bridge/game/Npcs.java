package dev.oam.bridge.game;

import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.core.ErrorCode;
import dev.oam.game.npc.Persona;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/** The NPCs of one engine, in creation order. */
final class Npcs {
    static final int LIMIT = 128;

    private final GameExtension game;
    private final Map<String, NpcEntry> npcs = new LinkedHashMap<>(); // guarded by this
    private final AtomicLong generated = new AtomicLong();

    Npcs(GameExtension game) {
        this.game = game;
    }

    /** The persona of the NPC with this id (decisions can decide as an NPC), or {@code null}. */
    @Nullable
    Persona persona(String id) {
        NpcEntry entry = find(id);
        return entry == null ? null : entry.npc.persona();
    }

    synchronized @Nullable NpcEntry find(String id) {
        return npcs.get(id);
    }

    NpcEntry require(String id) throws BridgeException {
        NpcEntry npc = find(id);
        if (npc == null) {
            throw BridgeException.of(ErrorCode.NPC_NOT_FOUND, "No NPC '" + id + "'.", "npc", TextNode.valueOf(id));
        }
        return npc;
    }

    /** Checks that an id can be used now (not taken, under the limit). */
    synchronized void checkFree(@Nullable String id) throws BridgeException {
        if (id != null && npcs.containsKey(id)) {
            throw BridgeException.of(
                    ErrorCode.NPC_EXISTS, "An NPC '" + id + "' already exists.", "npc", TextNode.valueOf(id));
        }
        if (npcs.size() >= LIMIT) {
            throw BridgeException.of(
                    ErrorCode.LIMIT_REACHED,
                    "Too many NPCs (the limit is " + LIMIT + "); delete one first.",
                    "limit",
                    IntNode.valueOf(LIMIT));
        }
    }

    /** A generated id ({@code npc1}, …) not in use; the counter counts only generated ids. */
    synchronized String newId() {
        String id;
        do {
            id = "npc" + generated.incrementAndGet();
        } while (npcs.containsKey(id));
        return id;
    }

    synchronized void add(NpcEntry entry) throws BridgeException {
        checkFree(entry.id);
        try {
            entry.npc.attachTo(game.histories);
        } catch (dev.oam.core.model.AgentException e) {
            throw BridgeException.from(e);
        }
        npcs.put(entry.id, entry);
    }

    synchronized @Nullable NpcEntry remove(String id) {
        NpcEntry npc = npcs.remove(id);
        if (npc != null) {
            npc.npc.detachFrom(game.histories);
        }
        return npc;
    }

    synchronized List<NpcEntry> all() {
        return List.copyOf(npcs.values());
    }

    /** How many NPCs use the world with this id ({@code world/list}). */
    synchronized int countUsing(String worldId) {
        return (int) npcs.values().stream()
                .filter(n -> Objects.equals(n.worldId, worldId))
                .count();
    }

    void shutdown() {
        for (NpcEntry entry : all()) {
            entry.queue.cancelAll();
        }
        synchronized (this) {
            for (NpcEntry entry : npcs.values()) {
                entry.npc.detachFrom(game.histories);
            }
            npcs.clear();
        }
    }

    GameExtension game() {
        return game;
    }
}
