package dev.oam.bridge.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.json.Json;
import dev.oam.game.npc.NpcEvent;
import dev.oam.game.npc.NpcReply;
import dev.oam.game.npc.NpcTalk;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/** An NPC of an {@link Oam} engine ({@code npc/*}); its client tools are answered by their handlers. */
public final class OamNpc {
    private final Oam oam;
    private final String id;
    private final Map<String, ClientTool> tools;
    private final List<String> toolNames;
    private final List<String> warnings;

    OamNpc(Oam oam, String id, List<ClientTool> tools, List<String> toolNames, List<String> warnings) {
        this.oam = oam;
        this.id = id;
        this.tools = Oam.byName(tools);
        this.toolNames = toolNames;
        this.warnings = warnings;
    }

    public String id() {
        return id;
    }

    /** Every tool the NPC's model sees: client tools, then world tools, then memory tools. */
    public List<String> toolNames() {
        return toolNames;
    }

    public List<String> warnings() {
        return warnings;
    }

    /** {@code npc/talk}: one dialogue turn, queued behind the NPC's earlier ones. */
    public CompletableFuture<NpcReply> talk(String line) {
        return talk(NpcTalk.of(line), null);
    }

    /** {@code npc/talk} streaming its events (emotion, line deltas and resets, tool calls) to {@code events}. */
    public CompletableFuture<NpcReply> talk(String line, NpcEvent.Listener events) {
        return talk(NpcTalk.of(line), events);
    }

    /**
     * {@code npc/talk} with a situation ({@link NpcTalk#context()}) or a tool choice for this turn; with {@code events}
     * non-null the turn streams (events arrive on the engine's writer thread, before the future completes, and add up
     * exactly to the reply's line).
     */
    public CompletableFuture<NpcReply> talk(NpcTalk talk, NpcEvent.@Nullable Listener events) {
        ObjectNode params = Json.object();
        params.put("npc", id);
        params.put("line", talk.line());
        if (talk.context() != null) {
            params.set("context", talk.context());
        }
        ToolChoice choice = talk.toolChoice();
        if (choice != null) {
            switch (choice) {
                case ToolChoice.Auto a -> params.put("toolChoice", "auto");
                case ToolChoice.None n -> params.put("toolChoice", "none");
                case ToolChoice.Required r -> params.put("toolChoice", "required");
                case ToolChoice.Explicit e -> params.put("toolChoice", "explicit");
                case ToolChoice.Named named -> params.putObject("toolChoice").put("tool", named.tool());
            }
        }
        if (events != null) {
            params.put("stream", true);
        }
        Oam.Route route =
                new Oam.Route(tools, events == null ? null : event -> events.onEvent(Decoding.npcEvent(event)));
        return oam.call("npc/talk", params, route).thenApply(Decoding::npcReply);
    }

    /** {@code npc/bark}: a one-off ambient line for {@code situation} ({@code null}: an ordinary moment). */
    public CompletableFuture<String> bark(@Nullable String situation) {
        ObjectNode params = Json.object();
        params.put("npc", id);
        if (situation != null) {
            params.put("situation", situation);
        }
        return oam.call("npc/bark", params, Oam.Route.NONE)
                .thenApply(result -> result.path("line").asText());
    }

    /** {@code npc/reset}: forgets the conversation (and with {@code clearMemory} the memory), after queued turns. */
    public CompletableFuture<Void> reset(boolean clearMemory) {
        ObjectNode params = Json.object().put("npc", id).put("clearMemory", clearMemory);
        return oam.call("npc/reset", params, Oam.Route.NONE).thenApply(result -> null);
    }

    /**
     * {@code npc/state}, after the NPC's queued turns: everything the NPC is (persona, options, memory, conversation,
     * tool definitions, world id) as an opaque text to keep with a saved game; {@link Oam.Npcs#restore} reads it.
     */
    public CompletableFuture<String> save() {
        return oam.call("npc/state", Json.object().put("npc", id), Oam.Route.NONE)
                .thenApply(result -> Json.write(result.path("state")));
    }

    /** {@code npc/delete}: cancels its work and frees the id. */
    public void delete() {
        Oam.await(oam.call("npc/delete", Json.object().put("npc", id), Oam.Route.NONE));
    }
}
