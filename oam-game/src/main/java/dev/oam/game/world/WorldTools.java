package dev.oam.game.world;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.DecimalNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolReply;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * An NPC's local world tools ({@code read_world_state}, {@code update_world_state}; docs/GAMES.md, "World tools").
 * Mistakes never throw: they come back to the model as error outputs that name what it may use instead. Keys match
 * case-insensitively, and every path form of {@link WorldPath} is accepted.
 */
public final class WorldTools {
    public static final String READ = "read_world_state";
    public static final String UPDATE = "update_world_state";

    /** Longest JSON text a read returns before the value is shortened. */
    static final int OUTPUT_LIMIT = 1500;
    /** How many top-level keys the read tool's description names. */
    static final int DESCRIBED_KEYS = 12;
    /** How many keys an error about a missing path names. */
    static final int LISTED_KEYS = 20;
    /** Strings longer than this are cut in a shortened object. */
    static final int PREVIEW_STRING = 80;
    /** Values longer than this are cut in the update tool's answer. */
    static final int ECHO_LENGTH = 200;

    private final WorldState world;
    private final List<WorldPath> readable;
    private final List<WorldPath> writable;

    /**
     * @param readable paths the read tool may read ({@code ""} = everything; empty = no read tool)
     * @param writable paths the update tool may change (empty = no update tool) Malformed paths in either list are
     *     ignored.
     */
    public WorldTools(WorldState world, List<String> readable, List<String> writable) {
        this.world = world;
        this.readable = parseAll(readable);
        this.writable = parseAll(writable);
    }

    private static List<WorldPath> parseAll(List<String> paths) {
        List<WorldPath> parsed = new ArrayList<>();
        for (String path : paths) {
            try {
                WorldPath one = WorldPath.parse(path);
                if (!parsed.contains(one)) {
                    parsed.add(one);
                }
            } catch (WorldException e) {
                Log.warning("ignored the world path '" + path + "': " + e.getMessage());
            }
        }
        return List.copyOf(parsed);
    }

    /** The read tool (when anything is readable), then the update tool (when anything is writable). */
    public List<ToolDefinition> definitions() {
        List<ToolDefinition> tools = new ArrayList<>();
        if (!readable.isEmpty()) {
            String description =
                    "Look up the current game state (JSON) by path. Check facts here before you state them.";
            if (readable.contains(WorldPath.ROOT)) {
                List<String> keys = world.read(root -> {
                    List<String> names = new ArrayList<>();
                    for (Iterator<String> it = root.fieldNames(); it.hasNext() && names.size() < DESCRIBED_KEYS; ) {
                        names.add(it.next());
                    }
                    return names;
                });
                if (!keys.isEmpty()) {
                    description += " Top-level keys: " + String.join(", ", keys) + ".";
                }
            } else {
                description += " Readable paths: " + names(readable) + ".";
            }
            tools.add(new ToolDefinition(
                    READ,
                    description,
                    schema(
                            "path",
                            "A dot path such as 'player.gold' or 'party.0.name'; an empty string reads "
                                    + "everything you may read."),
                    null));
        }
        if (!writable.isEmpty()) {
            String description = "Change one value in the game state. You may change: " + names(writable) + ".";
            tools.add(new ToolDefinition(
                    UPDATE,
                    description,
                    schema(
                            "path", "The dot path of the value to change, such as 'quests.lost_ring.status'.",
                            "value", "The new value as text, such as 42, true, done, or {\"a\": 1}."),
                    null));
        }
        return List.copyOf(tools);
    }

    private static ObjectNode schema(String... namesAndDescriptions) {
        ObjectNode schema = Json.object();
        schema.put("type", "object");
        ObjectNode properties = schema.putObject("properties");
        ArrayNode required = Json.array();
        for (int i = 0; i < namesAndDescriptions.length; i += 2) {
            ObjectNode property = properties.putObject(namesAndDescriptions[i]);
            property.put("type", "string");
            property.put("description", namesAndDescriptions[i + 1]);
            required.add(namesAndDescriptions[i]);
        }
        schema.set("required", required);
        return schema;
    }

    public boolean handles(String toolName) {
        return toolName.equals(READ) || toolName.equals(UPDATE);
    }

    /** Runs one call; never throws: mistakes come back as error outputs naming valid paths. */
    public ToolReply execute(ToolCall call) {
        try {
            return switch (call.name()) {
                case READ ->
                    readable.isEmpty()
                            ? ToolReply.error("Reading the game state is not allowed.")
                            : read(call.arguments());
                case UPDATE ->
                    writable.isEmpty()
                            ? ToolReply.error("Changing the game state is not allowed.")
                            : update(call.arguments());
                default -> ToolReply.error("'" + call.name() + "' is not a world tool.");
            };
        } catch (RuntimeException e) {
            Log.error("the world tool '" + call.name() + "' failed", e);
            return ToolReply.error(
                    "The game state could not be used (" + e.getClass().getSimpleName() + ").");
        }
    }

    // --- read ---------------------------------------------------------------------------------------

    private ToolReply read(ObjectNode arguments) {
        JsonNode pathArgument = arguments.get("path");
        String raw = pathArgument == null || pathArgument.isNull() ? "" : Json.text(pathArgument);
        WorldPath requested;
        try {
            requested = WorldPath.parse(raw);
        } catch (WorldException e) {
            return ToolReply.error(e.getMessage());
        }
        return world.read(root -> {
            WorldPath path = resolveCase(requested, root);
            if (covered(path, readable)) {
                JsonNode value = WorldState.lookup(root, path);
                if (value == null) {
                    return ToolReply.error(missing(path, root));
                }
                return ToolReply.output(shorten(value, path));
            }
            List<WorldPath> visible =
                    readable.stream().filter(prefix -> within(prefix, path)).toList();
            if (visible.isEmpty()) {
                return ToolReply.error("You cannot read '" + path + "'. Readable paths: " + names(readable) + ".");
            }
            return ToolReply.output(shorten(filtered(root, visible, path), path));
        });
    }

    /** The readable subtrees below {@code base}, placed as they are in the document (relative to it). */
    private static JsonNode filtered(ObjectNode root, List<WorldPath> visible, WorldPath base) {
        ObjectNode result = Json.object();
        for (WorldPath prefix : visible) {
            WorldPath resolved = resolveCase(prefix, root);
            JsonNode value = WorldState.lookup(root, resolved);
            if (value == null) {
                continue;
            }
            List<String> relative = resolved.segments().subList(base.size(), resolved.size());
            ObjectNode container = result;
            for (int i = 0; i < relative.size() - 1; i++) {
                JsonNode next = container.get(relative.get(i));
                container = next instanceof ObjectNode object ? object : container.putObject(relative.get(i));
            }
            container.set(relative.getLast(), value.deepCopy());
        }
        return result;
    }

    /** The error for a path that is readable but absent: what the nearest existing ancestor holds. */
    private String missing(WorldPath path, ObjectNode root) {
        String message = "No value at '" + path + "'.";
        WorldPath ancestor = path;
        while (!ancestor.isRoot()) {
            ancestor = ancestor.parent();
            JsonNode value = WorldState.lookup(root, ancestor);
            if (value == null) {
                continue;
            }
            if (!covered(ancestor, readable)) {
                return message + " Readable paths: " + names(readable) + ".";
            }
            String name = ancestor.isRoot() ? "The game state" : "'" + ancestor + "'";
            return message + " " + describe(name, value);
        }
        return message;
    }

    private static String describe(String name, JsonNode value) {
        if (value instanceof ObjectNode object) {
            if (object.isEmpty()) {
                return name + " is an empty object.";
            }
            List<String> keys = new ArrayList<>();
            for (Iterator<String> it = object.fieldNames(); it.hasNext() && keys.size() < LISTED_KEYS; ) {
                keys.add(it.next());
            }
            int more = object.size() - keys.size();
            return name + " has keys: " + String.join(", ", keys) + (more > 0 ? " (and " + more + " more)" : "") + ".";
        }
        if (value instanceof ArrayNode array) {
            if (array.isEmpty()) {
                return name + " is an empty list.";
            }
            return name + " is a list of " + array.size() + " items (indexes 0 to " + (array.size() - 1) + ").";
        }
        if (value.isNull()) {
            return name + " is null.";
        }
        return name + " is " + WorldState.typeName(value) + ": " + WorldState.cut(Json.write(value), ECHO_LENGTH) + ".";
    }

    /** {@code value}, or a shorter stand-in when its JSON is longer than {@link #OUTPUT_LIMIT}. */
    static JsonNode shorten(JsonNode value, WorldPath path) {
        String json = Json.write(value);
        if (json.length() <= OUTPUT_LIMIT) {
            return value.deepCopy();
        }
        if (value instanceof ObjectNode object) {
            ObjectNode preview = Json.object();
            int used = 2;
            int shown = 0;
            for (Map.Entry<String, JsonNode> member : object.properties()) {
                JsonNode child = member.getValue();
                JsonNode brief;
                if (child instanceof ObjectNode inner) {
                    brief = TextNode.valueOf("{object with " + inner.size() + " keys}");
                } else if (child instanceof ArrayNode items) {
                    brief = TextNode.valueOf("[list of " + items.size() + " items]");
                } else if (child.isTextual()
                        && child.textValue().codePointCount(0, child.textValue().length()) > PREVIEW_STRING) {
                    brief = TextNode.valueOf(WorldState.cut(child.textValue(), PREVIEW_STRING));
                } else {
                    brief = child.deepCopy();
                }
                int size = Json.write(TextNode.valueOf(member.getKey())).length()
                        + 1
                        + Json.write(brief).length()
                        + 1;
                if (used + size > OUTPUT_LIMIT - 200) {
                    break;
                }
                preview.set(member.getKey(), brief);
                used += size;
                shown++;
            }
            String note = "Shortened because it is large. Read a narrower path such as '"
                    + path.child(object.fieldNames().next()) + "' for details.";
            if (shown < object.size()) {
                note += " Showing " + shown + " of " + object.size() + " keys.";
            }
            preview.put("_note", note);
            return preview;
        }
        if (value instanceof ArrayNode array) {
            ArrayNode kept = Json.array();
            int used = 2;
            for (JsonNode item : array) {
                int size = Json.write(item).length() + 1;
                if (used + size > OUTPUT_LIMIT - 150) {
                    break;
                }
                kept.add(item.deepCopy());
                used += size;
            }
            ObjectNode shortened = Json.object();
            shortened.set("items", kept);
            shortened.put(
                    "_note",
                    "Showing " + kept.size() + " of " + array.size() + " items. Read '"
                            + path.child(String.valueOf(kept.size())) + "' and so on for the others.");
            return shortened;
        }
        if (value.isTextual()) {
            return TextNode.valueOf(WorldState.cut(value.textValue(), OUTPUT_LIMIT));
        }
        return value.deepCopy();
    }

    // --- update -------------------------------------------------------------------------------------

    private ToolReply update(ObjectNode arguments) {
        JsonNode pathArgument = arguments.get("path");
        if (pathArgument == null || pathArgument.isNull() || pathArgument.isContainerNode()) {
            return ToolReply.error(
                    "Give 'path', the dot path of the value to change (such as 'player.gold'). You may change: "
                            + names(writable) + ".");
        }
        JsonNode value = arguments.get("value");
        if (value == null) {
            return ToolReply.error("Give 'value', the new value as text.");
        }
        WorldPath requested;
        try {
            requested = WorldPath.parse(Json.text(pathArgument));
        } catch (WorldException e) {
            return ToolReply.error(e.getMessage());
        }
        try {
            return world.atomically(() -> {
                Resolved target = world.read(root -> {
                    WorldPath path = resolveCase(requested, root);
                    JsonNode current = WorldState.lookup(root, path);
                    return new Resolved(path, current == null ? null : current.deepCopy());
                });
                WorldPath path = target.path();
                if (!covered(path, writable)) {
                    return ToolReply.error("'" + path + "' is read-only. You may change: " + names(writable) + ".");
                }
                Coerced coerced = coerce(value, target.current());
                if (coerced.error() != null) {
                    return ToolReply.error("Cannot set '" + path + "': " + coerced.error());
                }
                JsonNode stored = coerced.value();
                world.set(path, stored, path.toString());
                String text = "Set " + path + " to " + echo(stored);
                return ToolReply.output(TextNode.valueOf(
                        target.current() == null ? text + "." : text + " (was " + echo(target.current()) + ")."));
            });
        } catch (WorldException e) {
            return ToolReply.error(e.getMessage());
        }
    }

    private record Resolved(WorldPath path, @Nullable JsonNode current) {}

    /** A coerced value, or why the value does not fit. */
    record Coerced(@Nullable JsonNode value, @Nullable String error) {
        static Coerced ok(JsonNode value) {
            return new Coerced(value, null);
        }

        static Coerced fail(String error) {
            return new Coerced(null, error);
        }
    }

    /**
     * Converts what the model sent (text, by the tool's schema) to the type already stored: numbers (commas stripped),
     * booleans (true/yes/1, false/no/0), strings (a quoted JSON string literal is unwrapped), lists and objects (must
     * be JSON of the same kind). A new path or a stored null takes a JSON literal when the text is one, else the text.
     * A value sent as JSON that already has the stored type is kept as it is; any other JSON goes through its text.
     */
    static Coerced coerce(JsonNode value, @Nullable JsonNode current) {
        if (!value.isTextual()) {
            if (current == null || current.isNull() || value.isNull() || sameKind(value, current)) {
                return Coerced.ok(value);
            }
            if (current.isTextual()) {
                return Coerced.ok(TextNode.valueOf(Json.text(value)));
            }
        }
        String text = value.isTextual() ? value.textValue() : Json.text(value);
        String trimmed = text.strip();
        if (current == null || current.isNull()) {
            JsonNode parsed = parseJson(trimmed);
            return Coerced.ok(parsed != null ? parsed : TextNode.valueOf(text));
        }
        return switch (current.getNodeType()) {
            case STRING -> {
                if (trimmed.length() >= 2
                        && trimmed.startsWith("\"")
                        && trimmed.endsWith("\"")
                        && parseJson(trimmed) instanceof TextNode inner) {
                    yield Coerced.ok(inner);
                }
                yield Coerced.ok(TextNode.valueOf(text));
            }
            case NUMBER -> {
                JsonNode number = number(trimmed.replace(",", ""));
                yield number != null
                        ? Coerced.ok(number)
                        : Coerced.fail(
                                "it holds a number (" + Json.write(current) + "); '" + text + "' is not a number.");
            }
            case BOOLEAN ->
                switch (trimmed.toLowerCase(Locale.ROOT)) {
                    case "true", "yes", "1" -> Coerced.ok(BooleanNode.TRUE);
                    case "false", "no", "0" -> Coerced.ok(BooleanNode.FALSE);
                    default -> Coerced.fail("it holds true or false; '" + text + "' is neither.");
                };
            case ARRAY ->
                parseJson(trimmed) instanceof ArrayNode list
                        ? Coerced.ok(list)
                        : Coerced.fail("it holds a list; send the whole list as JSON, such as [\"a\", \"b\"].");
            case OBJECT ->
                parseJson(trimmed) instanceof ObjectNode object
                        ? Coerced.ok(object)
                        : Coerced.fail(
                                "it holds an object; send the whole object as JSON, such as {\"key\": \"value\"}.");
            default -> Coerced.ok(TextNode.valueOf(text));
        };
    }

    private static boolean sameKind(JsonNode a, JsonNode b) {
        return a.getNodeType() == b.getNodeType();
    }

    private static @Nullable JsonNode number(String text) {
        if (text.isEmpty()) {
            return null;
        }
        BigDecimal decimal;
        try {
            decimal = new BigDecimal(text);
        } catch (NumberFormatException e) {
            return null;
        }
        BigDecimal stripped = decimal.stripTrailingZeros();
        if (stripped.scale() <= 0 && stripped.precision() - stripped.scale() <= 18) {
            long whole = stripped.longValueExact();
            return whole == (int) whole ? IntNode.valueOf((int) whole) : LongNode.valueOf(whole);
        }
        return DecimalNode.valueOf(stripped.scale() < 0 ? decimal : stripped);
    }

    private static @Nullable JsonNode parseJson(String text) {
        if (text.isEmpty()) {
            return null;
        }
        try {
            JsonNode parsed = Json.parse(text);
            return parsed == null || parsed.isMissingNode() ? null : parsed;
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    private static String echo(JsonNode value) {
        return WorldState.cut(Json.write(value), ECHO_LENGTH);
    }

    // --- paths --------------------------------------------------------------------------------------

    /**
     * The path with each key matched against the document: exactly when the key exists, else the first key equal
     * ignoring case. Segments past the existing part stay as written.
     */
    static WorldPath resolveCase(WorldPath requested, ObjectNode root) {
        List<String> resolved = new ArrayList<>();
        JsonNode current = root;
        List<String> segments = requested.segments();
        for (int i = 0; i < segments.size(); i++) {
            String segment = segments.get(i);
            JsonNode next = null;
            if (current instanceof ObjectNode object) {
                next = object.get(segment);
                if (next == null) {
                    for (Iterator<String> it = object.fieldNames(); it.hasNext(); ) {
                        String key = it.next();
                        if (key.equalsIgnoreCase(segment)) {
                            segment = key;
                            next = object.get(key);
                            break;
                        }
                    }
                }
            } else if (current instanceof ArrayNode array) {
                int index = WorldState.index(segment);
                next = index >= 0 && index < array.size() ? array.get(index) : null;
            }
            if (next == null) {
                resolved.addAll(segments.subList(i, segments.size()));
                break;
            }
            resolved.add(segment);
            current = next;
        }
        return new WorldPath(resolved);
    }

    /** Whether {@code path} equals or lies inside one of the prefixes (keys compared ignoring case). */
    private static boolean covered(WorldPath path, List<WorldPath> prefixes) {
        return prefixes.stream().anyMatch(prefix -> within(path, prefix));
    }

    private static boolean within(WorldPath path, WorldPath prefix) {
        if (path.size() < prefix.size()) {
            return false;
        }
        for (int i = 0; i < prefix.size(); i++) {
            if (!path.segments().get(i).equalsIgnoreCase(prefix.segments().get(i))) {
                return false;
            }
        }
        return true;
    }

    private static String names(List<WorldPath> paths) {
        List<String> names = new ArrayList<>();
        for (WorldPath path : paths) {
            names.add(path.isRoot() ? "(everything)" : path.toString());
        }
        return String.join(", ", names);
    }
}
