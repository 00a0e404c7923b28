package dev.oam.bridge.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * A world of an {@link Oam} engine ({@code world/*}). Paths are the wire's ({@code player.gold}, {@code items[0]});
 * values are Java values (maps, lists, strings, numbers, booleans, {@code null}). Every method is answered at once.
 */
public final class OamWorld {
    private final Oam oam;
    private final String id;

    OamWorld(Oam oam, String id) {
        this.oam = oam;
        this.id = id;
    }

    public String id() {
        return id;
    }

    /** {@code world/get}: the value at {@code path} ({@code null} for the whole state), or {@code null} when absent. */
    public @Nullable Object get(@Nullable String path) {
        ObjectNode params = params(path);
        return Decoding.java(
                Oam.await(oam.call("world/get", params, Oam.Route.NONE)).path("value"));
    }

    /** {@code world/set}: returns the world's new version. Subscribers are told before this returns. */
    public long set(String path, @Nullable Object value) {
        ObjectNode params = params(path);
        params.set("value", Json.mapper().valueToTree(value));
        return Oam.await(oam.call("world/set", params, Oam.Route.NONE))
                .path("version")
                .asLong();
    }

    /** {@code world/remove}: returns whether there was a value. */
    public boolean remove(String path) {
        JsonNode result = Oam.await(oam.call("world/remove", params(path), Oam.Route.NONE));
        return result.path("removed").asBoolean();
    }

    /** {@code world/subscribe}: {@code callback} gets every change at, inside or above {@code path} until closed. */
    public Subscription subscribe(@Nullable String path, Consumer<WorldChanged> callback) {
        return oam.subscribe(this, path, callback);
    }

    /** {@code world/delete}: ends its subscriptions; NPCs made with it keep using it. */
    public void delete() {
        Oam.await(oam.call("world/delete", Json.object().put("world", id), Oam.Route.NONE));
    }

    private ObjectNode params(@Nullable String path) {
        ObjectNode params = Json.object();
        params.put("world", id);
        if (path != null) {
            params.put("path", path);
        }
        return params;
    }
}
