package dev.oam.bridge.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/** A session of an {@link Oam} engine ({@code session/*}); its client tools are answered by their handlers. */
public final class OamSession {
    private final Oam oam;
    private final String id;
    private final Map<String, ClientTool> tools;
    private final List<String> warnings;

    OamSession(Oam oam, String id, List<ClientTool> tools, List<String> warnings) {
        this.oam = oam;
        this.id = id;
        this.tools = Oam.byName(tools);
        this.warnings = warnings;
    }

    public String id() {
        return id;
    }

    /** What {@code session/create} warned about (a tool without a description, an unavailable model, …). */
    public List<String> warnings() {
        return warnings;
    }

    /** {@code session/respond}: one turn, queued behind the session's earlier ones. */
    public CompletableFuture<SessionReply> respond(String prompt) {
        return respond(prompt, null);
    }

    /**
     * {@code session/respond} streaming: {@code textSoFar} gets the whole answer so far after every change (on the
     * engine's writer thread, before the future completes).
     */
    public CompletableFuture<SessionReply> respond(
            String prompt, @org.jspecify.annotations.Nullable Consumer<String> textSoFar) {
        ObjectNode params = Json.object();
        params.put("session", id);
        params.put("prompt", prompt);
        if (textSoFar != null) {
            params.put("stream", true);
        }
        Oam.Route route = new Oam.Route(
                tools,
                textSoFar == null
                        ? null
                        : event -> {
                            if (event.path("type").asText().equals("text")) {
                                textSoFar.accept(event.path("text").asText());
                            }
                        });
        return oam.call("session/respond", params, route).thenApply(Decoding::sessionReply);
    }

    /** {@code session/reset}: clears the history (after the queued turns). */
    public CompletableFuture<Void> reset() {
        return oam.call("session/reset", Json.object().put("session", id), Oam.Route.NONE)
                .thenApply(result -> null);
    }

    /** {@code session/delete}: cancels its work and frees the id. */
    public void delete() {
        Oam.await(oam.call("session/delete", Json.object().put("session", id), Oam.Route.NONE));
    }
}
