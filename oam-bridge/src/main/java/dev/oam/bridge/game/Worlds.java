package dev.oam.bridge.game;

import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.ExtensionContext;
import dev.oam.bridge.spi.Params;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.game.world.WorldBudget;
import dev.oam.game.world.WorldChange;
import dev.oam.game.world.WorldException;
import dev.oam.game.world.WorldLimitException;
import dev.oam.game.world.WorldListener;
import dev.oam.game.world.WorldPath;
import dev.oam.game.world.WorldState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;

/**
 * The worlds of one engine, with their subscriptions.
 *
 * <p>Each world registered here has one {@link WorldListener} that turns every change into {@code world/changed}
 * notifications for the world's subscriptions, in subscription order. The world calls it synchronously on the thread
 * that made the change, while the world's lock is held, so the notifications go to the single writer before anything
 * that thread sends later: a {@code world/*} request's response, or an NPC turn's response after its
 * {@code update_world_state} call.
 *
 * <p>Lock order: a world's lock, then this object's monitor is never taken from inside a listener (subscriptions of a
 * world live in a copy-on-write list the listener reads without locking), and nothing here calls into a world while
 * holding this monitor, except adding or removing its listener, which does not lock the world.
 */
final class Worlds {
    static final int MAX_WORLDS = 64;
    static final int MAX_SUBSCRIPTIONS = 256;

    private final Map<String, Entry> worlds = new LinkedHashMap<>(); // guarded by this; creation order
    private volatile WorldBudget budget = WorldBudget.defaults();
    private final Map<String, Subscription> subscriptions = new LinkedHashMap<>(); // guarded by this; creation order
    private long generatedWorlds; // guarded by this
    private long generatedSubscriptions; // guarded by this

    /** A world reachable by id. */
    static final class Entry implements WorldListener {
        final String id;
        final WorldState world;
        final Instant createdAt = Instant.now();
        final List<Subscription> subscriptions = new CopyOnWriteArrayList<>(); // in subscription order

        Entry(String id, WorldState world) {
            this.id = id;
            this.world = world;
        }

        @Override
        public void changed(WorldState changed, WorldChange change) {
            if (subscriptions.isEmpty()) {
                return;
            }
            WorldPath path = changedPath(change);
            for (Subscription subscription : subscriptions) {
                if (path == null || path.overlaps(subscription.parsed)) {
                    subscription.context.sendNotification(
                            GameExtension.WORLD_CHANGED, notification(subscription, change));
                }
            }
        }

        private static @Nullable WorldPath changedPath(WorldChange change) {
            try {
                return WorldPath.parse(change.path());
            } catch (WorldException e) {
                return null; // never for a path WorldPath wrote; if it happens, tell everyone
            }
        }

        private ObjectNode notification(Subscription subscription, WorldChange change) {
            ObjectNode params = Json.object();
            params.put("world", id);
            params.put("subscription", subscription.id);
            params.put("path", change.path());
            if (change.oldValue() != null) {
                params.set("oldValue", change.oldValue());
            }
            if (change.newValue() != null) {
                params.set("newValue", change.newValue());
            }
            return params;
        }
    }

    /** A {@code world/subscribe} registration; {@code path} is as the client sent it. */
    record Subscription(String id, Entry entry, String path, WorldPath parsed, ExtensionContext context) {
        ObjectNode toJson() {
            ObjectNode json = Json.object();
            json.put("subscription", id);
            json.put("world", entry.id);
            json.put("path", path);
            return json;
        }
    }

    /** The world with this id, or {@code null}. */
    @Nullable
    WorldState find(String id) {
        Entry entry = entry(id);
        return entry == null ? null : entry.world;
    }

    synchronized @Nullable Entry entry(String id) {
        return worlds.get(id);
    }

    /** The entry with this id; {@code -32052 world_not_found} (with {@code data.world}) when there is none. */
    Entry require(String id) throws BridgeException {
        Entry entry = entry(id);
        if (entry == null) {
            throw notFound(id);
        }
        return entry;
    }

    static BridgeException notFound(String id) {
        return BridgeException.of(ErrorCode.WORLD_NOT_FOUND, "No world '" + id + "'.", "world", TextNode.valueOf(id));
    }

    /** Adds a host-owned world; {@code -32053 world_exists} when the id is taken, {@code -32055} past the limit. */
    void add(String id, WorldState world) throws BridgeException {
        Params.checkId(id, "world");
        insert(id, world);
    }

    /** Holds the worlds {@link #create} makes from now on to these caps (host worlds are the host's to size). */
    void useBudget(WorldBudget budget) {
        this.budget = budget;
    }

    /**
     * Adds a world under {@code requested}, or under a generated id ({@code w1}, {@code w2}, … skipping ids in use),
     * and puts it under the engine's world caps ({@code -32055} when its state is already too big).
     */
    synchronized String create(@Nullable String requested, WorldState world) throws BridgeException {
        String id = requested;
        if (id == null) {
            checkLimit();
            do {
                id = "w" + ++generatedWorlds;
            } while (worlds.containsKey(id));
        }
        if (worlds.containsKey(id)) {
            insert(id, world); // refuses it: the id is in use
        }
        checkLimit();
        try {
            world.limitTo(budget);
        } catch (WorldLimitException e) {
            throw WorldMethods.worldError(id, e);
        }
        try {
            insert(id, world);
        } catch (BridgeException e) {
            world.releaseBudget();
            throw e;
        }
        return id;
    }

    private synchronized void insert(String id, WorldState world) throws BridgeException {
        if (worlds.containsKey(id)) {
            throw BridgeException.of(
                    ErrorCode.WORLD_EXISTS, "A world '" + id + "' already exists.", "world", TextNode.valueOf(id));
        }
        checkLimit();
        Entry entry = new Entry(id, world);
        world.addListener(entry);
        worlds.put(id, entry);
    }

    private void checkLimit() throws BridgeException {
        if (worlds.size() >= MAX_WORLDS) {
            throw limit("worlds", MAX_WORLDS);
        }
    }

    static BridgeException limit(String what, int limit) {
        return BridgeException.of(
                ErrorCode.LIMIT_REACHED,
                "Too many " + what + " (the limit is " + limit + "); delete some first.",
                "limit",
                IntNode.valueOf(limit));
    }

    /** Removes a world and ends its subscriptions; returns how many ended. The world itself goes on (NPCs keep it). */
    synchronized int delete(String id) throws BridgeException {
        Entry entry = worlds.remove(id);
        if (entry == null) {
            throw notFound(id);
        }
        entry.world.removeListener(entry);
        entry.world.releaseBudget();
        int ended = entry.subscriptions.size();
        for (Subscription subscription : entry.subscriptions) {
            subscriptions.remove(subscription.id());
        }
        entry.subscriptions.clear();
        return ended;
    }

    /** Every world in creation order. */
    synchronized List<Entry> entries() {
        return List.copyOf(worlds.values());
    }

    synchronized Subscription subscribe(String worldId, String path, ExtensionContext context) throws BridgeException {
        Entry entry = require(worldId);
        WorldPath parsed;
        try {
            parsed = WorldPath.parse(path);
        } catch (WorldException e) {
            throw WorldMethods.worldError(worldId, e);
        }
        if (subscriptions.size() >= MAX_SUBSCRIPTIONS) {
            throw limit("world subscriptions", MAX_SUBSCRIPTIONS);
        }
        Subscription subscription = new Subscription("sub" + ++generatedSubscriptions, entry, path, parsed, context);
        subscriptions.put(subscription.id(), subscription);
        entry.subscriptions.add(subscription);
        return subscription;
    }

    synchronized Subscription unsubscribe(String id) throws BridgeException {
        Subscription subscription = subscriptions.remove(id);
        if (subscription == null) {
            throw BridgeException.of(
                    ErrorCode.SUBSCRIPTION_NOT_FOUND,
                    "No subscription '" + id + "'.",
                    "subscription",
                    TextNode.valueOf(id));
        }
        subscription.entry().subscriptions.remove(subscription);
        return subscription;
    }

    /** The subscriptions of one world, in subscription order. */
    List<Subscription> subscriptionsOf(Entry entry) {
        return List.copyOf(entry.subscriptions);
    }

    /** Ends every subscription and forgets every world. */
    synchronized void shutdown() {
        for (Entry entry : new ArrayList<>(worlds.values())) {
            entry.world.removeListener(entry);
            entry.subscriptions.clear();
        }
        worlds.clear();
        subscriptions.clear();
    }
}
