package dev.oam.bridge.game;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeRequest;
import dev.oam.bridge.spi.MethodRegistry;
import dev.oam.bridge.spi.Params;
import dev.oam.bridge.spi.Reply;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.game.world.WorldException;
import dev.oam.game.world.WorldLimitException;
import dev.oam.game.world.WorldState;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/**
 * {@code world/*} (docs/GAMES.md, "Worlds"). Every method answers at once on the dispatcher; reads and writes of one
 * request run under the world's lock, so a result's {@code version} is the one right after its own change even while
 * NPC tools write to the same world. Notifications a change causes are sent by the world's listener (see
 * {@link Worlds}) before the handler returns, so before the response.
 */
final class WorldMethods {
    static final String CREATE = "world/create";
    static final String GET = "world/get";
    static final String SET = "world/set";
    static final String MERGE = "world/merge";
    static final String REMOVE = "world/remove";
    static final String SNAPSHOT = "world/snapshot";
    static final String DELETE = "world/delete";
    static final String LIST = "world/list";
    static final String SUBSCRIBE = "world/subscribe";
    static final String UNSUBSCRIBE = "world/unsubscribe";

    private WorldMethods() {}

    static void register(MethodRegistry.Builder registry, GameExtension game) {
        Worlds worlds = game.worlds;
        registry.register(CREATE, request -> create(request, worlds));
        registry.register(GET, request -> get(request, worlds));
        registry.register(SET, request -> set(request, worlds));
        registry.register(MERGE, request -> merge(request, worlds));
        registry.register(REMOVE, request -> remove(request, worlds));
        registry.register(SNAPSHOT, request -> snapshot(request, worlds));
        registry.register(DELETE, request -> delete(request, worlds));
        registry.register(LIST, request -> list(worlds, game));
        registry.register(SUBSCRIBE, request -> subscribe(request, worlds));
        registry.register(UNSUBSCRIBE, request -> unsubscribe(request, worlds));
    }

    private static Reply create(BridgeRequest request, Worlds worlds) throws BridgeException {
        Params params = request.params();
        String requested = params.optionalString("world");
        if (requested != null) {
            Params.checkId(requested, params.path("world"));
        }
        JsonNode state = params.get("state");
        WorldState world;
        if (state == null) {
            world = new WorldState();
        } else if (state instanceof ObjectNode object) {
            world = new WorldState(object);
        } else {
            throw params.mistyped("state", "an object (the root of the world)");
        }
        String id = worlds.create(requested, world);
        ObjectNode result = Json.object();
        result.put("world", id);
        result.put("version", world.version());
        return Reply.result(result);
    }

    private static Reply get(BridgeRequest request, Worlds worlds) throws BridgeException {
        Params params = request.params();
        Worlds.Entry entry = worlds.require(params.string("world"));
        String path = pathOrRoot(params);
        ObjectNode result = Json.object();
        result.put("world", entry.id);
        result.put("path", path);
        atomically(entry, () -> {
            JsonNode value = entry.world.get(path);
            result.set("value", value == null ? NullNode.getInstance() : value);
            result.put("exists", value != null);
            result.put("version", entry.world.version());
            return null;
        });
        return Reply.result(result);
    }

    private static Reply set(BridgeRequest request, Worlds worlds) throws BridgeException {
        Params params = request.params();
        Worlds.Entry entry = worlds.require(params.string("world"));
        String path = pathOrRoot(params);
        // A JSON null is a value to store here, so look at the raw member: only a missing one is an error.
        if (!params.containsKey("value")) {
            throw BridgeException.invalidParams("Missing required parameter '" + params.path("value")
                    + "' (any JSON, null included; world/remove deletes).");
        }
        JsonNode value = params.json().get("value");
        long version = atomically(entry, () -> {
            entry.world.set(path, value);
            return entry.world.version();
        });
        return Reply.result(written(entry, path, version));
    }

    private static Reply merge(BridgeRequest request, Worlds worlds) throws BridgeException {
        Params params = request.params();
        Worlds.Entry entry = worlds.require(params.string("world"));
        JsonNode patch = params.require("patch");
        String path = pathOrRoot(params);
        long version = atomically(entry, () -> {
            entry.world.merge(path, patch);
            return entry.world.version();
        });
        return Reply.result(written(entry, path, version));
    }

    private static ObjectNode written(Worlds.Entry entry, String path, long version) {
        ObjectNode result = Json.object();
        result.put("world", entry.id);
        result.put("path", path);
        result.put("version", version);
        return result;
    }

    private static Reply remove(BridgeRequest request, Worlds worlds) throws BridgeException {
        Params params = request.params();
        Worlds.Entry entry = worlds.require(params.string("world"));
        String path = params.string("path");
        ObjectNode result = Json.object();
        result.put("world", entry.id);
        result.put("path", path);
        atomically(entry, () -> {
            JsonNode old = entry.world.remove(path);
            result.put("removed", old != null);
            result.set("oldValue", old == null ? NullNode.getInstance() : old);
            result.put("version", entry.world.version());
            return null;
        });
        return Reply.result(result);
    }

    private static Reply snapshot(BridgeRequest request, Worlds worlds) throws BridgeException {
        Worlds.Entry entry = worlds.require(request.params().string("world"));
        ObjectNode result = Json.object();
        result.put("world", entry.id);
        atomically(entry, () -> {
            result.set("state", entry.world.snapshot());
            result.put("version", entry.world.version());
            return null;
        });
        return Reply.result(result);
    }

    private static Reply delete(BridgeRequest request, Worlds worlds) throws BridgeException {
        String id = request.params().string("world");
        int ended = worlds.delete(id);
        ObjectNode result = Json.object();
        result.put("world", id);
        result.put("deleted", true);
        result.put("endedSubscriptions", ended);
        return Reply.result(result);
    }

    private static Reply list(Worlds worlds, GameExtension game) {
        ArrayNode items = Json.array();
        for (Worlds.Entry entry : worlds.entries()) {
            ObjectNode item = items.addObject();
            item.put("world", entry.id);
            item.put("version", entry.world.version());
            item.put("npcs", game.npcs.countUsing(entry.id));
            ArrayNode subscriptions = item.putArray("subscriptions");
            for (Worlds.Subscription subscription : worlds.subscriptionsOf(entry)) {
                subscriptions.add(subscription.toJson());
            }
            item.put("createdAt", DateTimeFormatter.ISO_INSTANT.format(entry.createdAt.truncatedTo(ChronoUnit.MILLIS)));
        }
        ObjectNode result = Json.object();
        result.set("worlds", items);
        return Reply.result(result);
    }

    private static Reply subscribe(BridgeRequest request, Worlds worlds) throws BridgeException {
        Params params = request.params();
        String world = params.string("world");
        String path = pathOrRoot(params);
        return Reply.result(worlds.subscribe(world, path, request.context()).toJson());
    }

    private static Reply unsubscribe(BridgeRequest request, Worlds worlds) throws BridgeException {
        ObjectNode result =
                worlds.unsubscribe(request.params().string("subscription")).toJson();
        result.put("unsubscribed", true);
        return Reply.result(result);
    }

    private static String pathOrRoot(Params params) throws BridgeException {
        String path = params.optionalString("path");
        return path == null ? "" : path;
    }

    /** Runs world calls as one under the world's lock; a {@link WorldException} becomes {@code -32054}. */
    private static <T> T atomically(Worlds.Entry entry, WorldState.Action<T> action) throws BridgeException {
        try {
            return entry.world.atomically(action);
        } catch (WorldException e) {
            throw worldError(entry.id, e);
        }
    }

    /**
     * {@code -32054 world_error} with {@code data.world} and {@code data.path} (the path as the client sent it); a
     * write past a size cap is {@code -32055 limit_reached} with {@code data.limit} and {@code data.scope}
     * ({@code "world"} or {@code "total"}) as well.
     */
    static BridgeException worldError(String world, WorldException e) {
        ObjectNode data = Json.object();
        if (e instanceof WorldLimitException limit) {
            data.put("limit", limit.limit());
            data.put("scope", limit.total() ? "total" : "world");
        }
        data.put("world", world);
        data.put("path", e.path());
        return new BridgeException(
                e instanceof WorldLimitException ? ErrorCode.LIMIT_REACHED : ErrorCode.WORLD_ERROR,
                e.getMessage(),
                data);
    }
}
