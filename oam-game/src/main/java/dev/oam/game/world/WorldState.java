package dev.oam.game.world;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import dev.oam.core.json.JsonSize;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A JSON blackboard shared by the game and its NPCs (docs/GAMES.md, "Worlds"). The root is always an object.
 * Thread-safe; every method is atomic, and {@link #atomically} makes several calls one.
 *
 * <p>Paths are dot paths with list indexes ({@code "party.0.name"}; {@code ""} is the root) plus the forms
 * {@link WorldPath} accepts. Values go in and come out as deep copies: the caller never shares a node with the world. A
 * write that leaves the value as it was (numbers compare by value, objects regardless of key order) changes nothing: no
 * {@link WorldChange}, no listener call, no new version. {@link #version()} counts the operations that changed
 * something (a merge of three leaves is one).
 */
public final class WorldState {
    private static final int SUMMARY_DEPTH = 4;
    private static final int SUMMARY_VALUE_LENGTH = 200;

    private final ReentrantLock lock = new ReentrantLock();
    private ObjectNode root; // guarded by lock
    private volatile long version; // written under lock
    private final List<WorldListener> listeners = new CopyOnWriteArrayList<>();
    private @Nullable WorldBudget budget; // guarded by lock
    private boolean counted; // whether `bytes` is part of budget.used(); guarded by lock
    private long bytes; // JsonSize of the root while a budget is set; guarded by lock
    private long delta; // size change of the running write; guarded by lock

    public WorldState() {
        this(Json.object());
    }

    /** A world holding a copy of {@code initial}. */
    public WorldState(ObjectNode initial) {
        this.root = Objects.requireNonNull(initial, "initial").deepCopy();
    }

    /** A world from any JSON value, which must be an object ({@link WorldException} with path {@code ""} otherwise). */
    public static WorldState of(JsonNode initial) throws WorldException {
        if (!(initial instanceof ObjectNode object)) {
            throw new WorldException("", "The world state root must be a JSON object, not " + typeName(initial) + ".");
        }
        return new WorldState(object);
    }

    /** Counts the operations that really changed something; cheap to poll. */
    public long version() {
        return version;
    }

    /**
     * Puts this world under {@code budget} (docs/RELIABILITY.md, Limits): from now on a write that could take its state
     * past the budget's per-world cap, or all worlds under the budget past their total, fails with
     * {@link WorldLimitException} and changes nothing.
     *
     * @throws WorldLimitException when the state is already past a cap; the world is then not under the budget
     */
    public void limitTo(WorldBudget budget) throws WorldLimitException {
        lock.lock();
        try {
            long size = JsonSize.of(root);
            if (size > budget.worldBytes()) {
                throw worldCap("", "The world state", budget, size);
            }
            if (!budget.tryReserve(size)) {
                throw totalCap("", "The world state", budget);
            }
            this.budget = budget;
            this.bytes = size;
            this.counted = true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops counting this world in its budget's total (it was deleted; whoever still holds it keeps writing under the
     * per-world cap).
     */
    public void releaseBudget() {
        lock.lock();
        try {
            if (budget != null && counted) {
                budget.adjust(-bytes);
                counted = false;
            }
        } finally {
            lock.unlock();
        }
    }

    /** The state's size in {@link JsonSize} units (what the caps count). */
    public long size() {
        lock.lock();
        try {
            return budget != null ? bytes : JsonSize.of(root);
        } finally {
            lock.unlock();
        }
    }

    /** A deep copy of the whole state. */
    public ObjectNode snapshot() {
        lock.lock();
        try {
            return root.deepCopy();
        } finally {
            lock.unlock();
        }
    }

    /** A deep copy of the value at {@code path} ({@code ""} is the root), or {@code null} when absent. */
    public @Nullable JsonNode get(String path) throws WorldException {
        WorldPath parsed = WorldPath.parse(path);
        lock.lock();
        try {
            JsonNode value = lookup(root, parsed);
            return value == null ? null : value.deepCopy();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Writes {@code value} at {@code path}, creating missing objects on the way (a JSON null on the way counts as
     * missing). Index {@code n} of an {@code n}-element list appends. A Java {@code null} is stored as a JSON null.
     * Returns the change (none when the value was already there).
     *
     * @throws WorldException for a malformed path, a list index beyond the end, a path through a scalar, or a
     *     non-object value at the root; the world is then unchanged
     */
    public List<WorldChange> set(String path, @Nullable JsonNode value) throws WorldException {
        return set(WorldPath.parse(path), value, path);
    }

    /** {@link #set(String, JsonNode)} at a parsed path ({@code given} names it in errors). */
    List<WorldChange> set(WorldPath path, @Nullable JsonNode value, String given) throws WorldException {
        JsonNode copy = value == null ? NullNode.getInstance() : value.deepCopy();
        lock.lock();
        try {
            long reserved = 0;
            if (budget != null) {
                JsonNode old = path.isRoot() ? root : lookup(root, path);
                reserved = reserve(JsonSize.of(copy) - (old == null ? 0 : JsonSize.of(old)) + overhead(path), given);
            }
            try {
                return setLocked(path, copy, given);
            } finally {
                settle(reserved);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Applies an RFC 7386 merge patch at {@code path}: objects merge member by member, a {@code null} member deletes,
     * anything else replaces. Returns one change per changed leaf, in patch order: a replaced or removed member, or a
     * whole subtree where the patch met something that is not an object (it is created from the patch without its
     * nulls).
     */
    public List<WorldChange> merge(String path, @Nullable JsonNode patch) throws WorldException {
        WorldPath parsed = WorldPath.parse(path);
        JsonNode copy = patch == null ? NullNode.getInstance() : patch.deepCopy();
        lock.lock();
        try {
            // A merge grows the state by at most the patch (what it deletes is not credited in advance).
            long reserved = budget == null ? 0 : reserve(JsonSize.of(copy) + overhead(parsed), path);
            try {
                JsonNode current = lookup(root, parsed);
                if (copy instanceof ObjectNode patchObject && current instanceof ObjectNode target) {
                    List<WorldChange> changes = new ArrayList<>();
                    mergeInto(target, patchObject, parsed, changes);
                    commit(changes);
                    return List.copyOf(changes);
                }
                return setLocked(parsed, withoutNulls(copy), path);
            } finally {
                settle(reserved);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes the value at {@code path} and returns it, or {@code null} when there was none (also when the path runs
     * through a scalar). Removing from a list shifts the items after it, so every later index changes: that is reported
     * as one change of the whole list (old and new list), which reaches the listeners of each index; removing the last
     * item is a change of that index only. Removing the root empties the world and returns the old root.
     */
    public @Nullable JsonNode remove(String path) throws WorldException {
        WorldPath parsed = WorldPath.parse(path);
        lock.lock();
        try {
            try {
                return removeLocked(parsed);
            } finally {
                settle(0);
            }
        } finally {
            lock.unlock();
        }
    }

    private @Nullable JsonNode removeLocked(WorldPath parsed) {
        {
            if (parsed.isRoot()) {
                ObjectNode old = root;
                if (old.isEmpty()) {
                    return old.deepCopy();
                }
                delta += 2 - sizeOf(old);
                root = Json.object();
                commit(List.of(new WorldChange("", old, Json.object())));
                return old.deepCopy();
            }
            JsonNode parent = lookup(root, parsed.parent());
            JsonNode old = null;
            WorldChange change = null;
            if (parent instanceof ObjectNode object) {
                old = object.remove(parsed.last());
                if (old != null) {
                    delta -= JsonSize.member(parsed.last()) + sizeOf(old);
                }
            } else if (parent instanceof ArrayNode array) {
                int index = index(parsed.last());
                if (index >= 0 && index < array.size() - 1) {
                    ArrayNode before = array.deepCopy();
                    old = array.remove(index);
                    change = new WorldChange(parsed.parent().toString(), before, array.deepCopy());
                } else if (index >= 0 && index < array.size()) {
                    old = array.remove(index);
                }
                if (old != null) {
                    delta -= JsonSize.ITEM + sizeOf(old);
                }
            }
            if (old == null) {
                return null;
            }
            commit(List.of(change != null ? change : new WorldChange(parsed.toString(), old, null)));
            return old.deepCopy();
        }
    }

    /**
     * The "Game state:" lines for these paths (docs/GAMES.md, "The prompt"): each path that parses and exists is
     * flattened to {@code path: value} lines, non-empty objects down to their leaves (at most 4 levels below the path),
     * strings unquoted, everything else (lists included) as compact JSON, values over 200 characters cut to 197 plus
     * "...", the root's own line named {@code state}. After {@code maxLines} lines the rest becomes "(N more not
     * shown)". Empty when nothing is found.
     */
    public String summary(List<String> paths, int maxLines) {
        List<String> lines = new ArrayList<>();
        lock.lock();
        try {
            for (String raw : paths) {
                WorldPath parsed;
                try {
                    parsed = WorldPath.parse(raw);
                } catch (WorldException e) {
                    continue;
                }
                JsonNode value = lookup(root, parsed);
                if (value != null) {
                    flatten(value, parsed, 0, lines);
                }
            }
        } finally {
            lock.unlock();
        }
        int keep = Math.max(0, maxLines);
        if (lines.size() > keep) {
            int omitted = lines.size() - keep;
            lines = new ArrayList<>(lines.subList(0, keep));
            lines.add("(" + omitted + " more not shown)");
        }
        return String.join("\n", lines);
    }

    /**
     * Runs {@code action} while holding this world's lock, so that the calls it makes on this world (reads and writes,
     * from this thread) happen as one: no other thread changes the world in between. Listeners of the writes it makes
     * run inside it. Keep it short.
     */
    public <T> T atomically(Action<T> action) throws WorldException {
        lock.lock();
        try {
            return action.run();
        } finally {
            lock.unlock();
        }
    }

    /** Runs {@code reader} on the live root under the lock; it must neither change nor keep any node. */
    <T> T read(java.util.function.Function<ObjectNode, T> reader) {
        lock.lock();
        try {
            return reader.apply(root);
        } finally {
            lock.unlock();
        }
    }

    /** Work for {@link #atomically}. */
    @FunctionalInterface
    public interface Action<T> {
        T run() throws WorldException;
    }

    /** Adds a listener; it hears every later change, synchronously, while the world's lock is held. */
    public void addListener(WorldListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /** Removes a listener (the first registration of it); no effect when it is not registered. */
    public void removeListener(WorldListener listener) {
        listeners.remove(listener);
    }

    // --- internals (all called with the lock held) -----------------------------------------------

    private List<WorldChange> setLocked(WorldPath path, JsonNode value, String given) throws WorldException {
        if (path.isRoot()) {
            if (!(value instanceof ObjectNode object)) {
                throw new WorldException(
                        given, "The world state root must be a JSON object, not " + typeName(value) + ".");
            }
            if (same(root, object)) {
                return List.of();
            }
            ObjectNode old = root;
            delta += sizeOf(object) - sizeOf(old);
            root = object;
            List<WorldChange> changes = List.of(new WorldChange("", old, object.deepCopy()));
            commit(changes);
            return changes;
        }
        JsonNode old = lookup(root, path);
        if (old != null && same(old, value)) {
            return List.of();
        }
        put(path, value, given);
        // `old` is detached from the tree now; `value` lives in it, so the change gets a copy.
        List<WorldChange> changes = List.of(new WorldChange(path.toString(), old, value.deepCopy()));
        commit(changes);
        return changes;
    }

    /**
     * Stores {@code value} at a non-root path. Every check that can fail happens while walking nodes that already
     * exist, before the first node is created, so a failure leaves the tree unchanged.
     */
    private void put(WorldPath path, JsonNode value, String given) throws WorldException {
        JsonNode container = root;
        List<String> segments = path.segments();
        for (int i = 0; i < segments.size(); i++) {
            String segment = segments.get(i);
            boolean last = i == segments.size() - 1;
            if (container instanceof ObjectNode object) {
                if (last) {
                    JsonNode previous = object.replace(segment, value);
                    delta += sizeOf(value) - (previous == null ? -JsonSize.member(segment) : sizeOf(previous));
                    return;
                }
                JsonNode next = object.get(segment);
                if (next == null || next.isNull()) {
                    delta += 2 - (next == null ? -JsonSize.member(segment) : sizeOf(next));
                    next = Json.object();
                    object.set(segment, next);
                }
                container = next;
            } else if (container instanceof ArrayNode array) {
                int index = index(segment);
                int size = array.size();
                if (index < 0 || index > size) {
                    throw new WorldException(
                            given,
                            "'" + path.prefix(i) + "' is a list of " + size + " items; '" + segment
                                    + "' is not a valid index (use 0 to " + size + ", where " + size + " appends).");
                }
                if (last) {
                    if (index == size) {
                        array.add(value);
                        delta += JsonSize.ITEM + sizeOf(value);
                    } else {
                        delta += sizeOf(value) - sizeOf(array.set(index, value));
                    }
                    return;
                }
                JsonNode next = index == size ? null : array.get(index);
                if (next == null || next.isNull()) {
                    delta += 2 - (next == null ? -JsonSize.ITEM : sizeOf(next));
                    next = Json.object();
                    if (index == size) {
                        array.add(next);
                    } else {
                        array.set(index, next);
                    }
                }
                container = next;
            } else {
                throw new WorldException(
                        given,
                        "Cannot write '" + path + "': '" + path.prefix(i) + "' is " + typeName(container)
                                + ", not an object or a list.");
            }
        }
    }

    private void mergeInto(ObjectNode target, ObjectNode patch, WorldPath at, List<WorldChange> changes) {
        for (Map.Entry<String, JsonNode> member : patch.properties()) {
            String key = member.getKey();
            JsonNode value = member.getValue();
            WorldPath child = at.child(key);
            JsonNode current = target.get(key);
            if (value.isNull()) {
                if (current != null) {
                    target.remove(key);
                    delta -= JsonSize.member(key) + sizeOf(current);
                    changes.add(new WorldChange(child.toString(), current, null));
                }
            } else if (value instanceof ObjectNode nested && current instanceof ObjectNode existing) {
                mergeInto(existing, nested, child, changes);
            } else {
                JsonNode replacement = withoutNulls(value);
                if (current == null || !same(current, replacement)) {
                    delta += sizeOf(replacement) - (current == null ? -JsonSize.member(key) : sizeOf(current));
                    target.set(key, replacement);
                    changes.add(new WorldChange(child.toString(), current, replacement.deepCopy()));
                }
            }
        }
    }

    /** What a merge patch creates where there was no object: the patch with its null members dropped. */
    private static JsonNode withoutNulls(JsonNode patch) {
        if (!(patch instanceof ObjectNode object)) {
            return patch;
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = object.properties().iterator(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> member = it.next();
            if (member.getValue().isNull()) {
                it.remove();
            } else {
                member.setValue(withoutNulls(member.getValue()));
            }
        }
        return object;
    }

    private void commit(List<WorldChange> changes) {
        if (changes.isEmpty()) {
            return;
        }
        version++;
        for (WorldChange change : changes) {
            for (WorldListener listener : listeners) {
                try {
                    listener.changed(this, change);
                } catch (RuntimeException e) {
                    Log.error("a world listener failed on the change of '" + change.path() + "'", e);
                }
            }
        }
    }

    /** The size of a node when a budget is kept (the sizes are only needed then). */
    private long sizeOf(JsonNode node) {
        return budget == null ? 0 : JsonSize.of(node);
    }

    /** The most a write at {@code path} adds besides its value: the members and objects it may create on the way. */
    private static long overhead(WorldPath path) {
        long total = 0;
        for (String segment : path.segments()) {
            total += JsonSize.member(segment) + 2;
        }
        return total;
    }

    /**
     * Checks that growing by at most {@code growth} keeps this world and all worlds under their caps and reserves it in
     * the total; {@link #settle} then books what the write really changed.
     */
    private long reserve(long growth, String given) throws WorldLimitException {
        WorldBudget limits = budget;
        if (limits == null) {
            return 0;
        }
        if (bytes + growth > limits.worldBytes()) {
            throw worldCap(given, "Writing '" + given + "'", limits, bytes);
        }
        long reserved = Math.max(0, growth);
        if (counted && !limits.tryReserve(reserved)) {
            throw totalCap(given, "Writing '" + given + "'", limits);
        }
        return counted ? reserved : 0;
    }

    private void settle(long reserved) {
        WorldBudget limits = budget;
        if (limits != null) {
            bytes += delta;
            if (counted) {
                limits.adjust(delta - reserved);
            }
        }
        delta = 0;
    }

    private static WorldLimitException worldCap(String path, String what, WorldBudget limits, long holds) {
        return new WorldLimitException(
                path,
                what + " could take this world past its size cap of " + limits.worldBytes()
                        + " (JSON characters; it holds " + holds + " now); remove something first.",
                limits.worldBytes(),
                false);
    }

    private static WorldLimitException totalCap(String path, String what, WorldBudget limits) {
        return new WorldLimitException(
                path,
                what + " could take all worlds together past their size cap of "
                        + limits.totalBytes() + " (JSON characters; they hold " + limits.used()
                        + " now); delete a world or remove "
                        + "something first.",
                limits.totalBytes(),
                true);
    }

    static @Nullable JsonNode lookup(JsonNode from, WorldPath path) {
        JsonNode current = from;
        for (String segment : path.segments()) {
            if (current instanceof ObjectNode object) {
                current = object.get(segment);
            } else if (current instanceof ArrayNode array) {
                int index = index(segment);
                current = index >= 0 && index < array.size() ? array.get(index) : null;
            } else {
                return null;
            }
            if (current == null) {
                return null;
            }
        }
        return current;
    }

    /** A list index (plain decimal digits), or -1. */
    static int index(String segment) {
        if (segment.isEmpty() || segment.length() > 9) {
            return -1;
        }
        for (int i = 0; i < segment.length(); i++) {
            char c = segment.charAt(i);
            if (c < '0' || c > '9') {
                return -1;
            }
        }
        return Integer.parseInt(segment);
    }

    /** JSON equality where numbers compare by value ({@code 1 = 1.0}) and objects ignore key order. */
    static boolean same(JsonNode a, JsonNode b) {
        return Json.sameValue(a, b);
    }

    /** "a number", "a list", … for messages. */
    static String typeName(JsonNode value) {
        return switch (value.getNodeType()) {
            case NULL, MISSING -> "null";
            case BOOLEAN -> "a boolean";
            case NUMBER -> "a number";
            case STRING -> "a string";
            case ARRAY -> "a list";
            case OBJECT -> "an object";
            default -> "a value";
        };
    }

    private static void flatten(JsonNode value, WorldPath path, int depth, List<String> lines) {
        if (value instanceof ObjectNode object && !object.isEmpty() && depth < SUMMARY_DEPTH) {
            for (Map.Entry<String, JsonNode> member : object.properties()) {
                flatten(member.getValue(), path.child(member.getKey()), depth + 1, lines);
            }
            return;
        }
        String text = value.isTextual() ? value.textValue() : Json.write(value);
        lines.add((path.isRoot() ? "state" : path.toString()) + ": " + cut(text, SUMMARY_VALUE_LENGTH));
    }

    /** {@code text} cut to {@code max} code points: the first {@code max - 3} plus "...". */
    static String cut(String text, int max) {
        if (text.codePointCount(0, text.length()) <= max) {
            return text;
        }
        return text.substring(0, text.offsetByCodePoints(0, max - 3)) + "...";
    }
}
