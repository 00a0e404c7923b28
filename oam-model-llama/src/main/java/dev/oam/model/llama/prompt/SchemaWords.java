package dev.oam.model.llama.prompt;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Describes a generation schema to a small model in words instead of as JSON Schema. Shown a schema, models of a few
 * hundred million parameters copy its vocabulary into their values ({@code "maxItems"} as a player option, {@code 1000}
 * for "a number up to 1000", a property's description as the value); the grammar enforces every constraint anyway, so
 * the prompt only says what each value is:
 *
 * <pre>
 * {"emotion": …, "line": …}
 * - "emotion": one of "happy", "sad"
 * - "line": text (what you say aloud)
 * </pre>
 *
 * No JSON Schema keyword, no bound and no type name of JSON Schema appears; descriptions appear in parentheses after
 * the kind of value, never as the only thing a value could be copied from.
 */
public final class SchemaWords {
    private static final int MAX_DEPTH = 3;
    /**
     * The note the schema converter appends to a description for constraints a grammar does not enforce
     * ({@code (maxLength: 200; pattern: …)}): JSON Schema words, which a small model copies.
     */
    private static final java.util.regex.Pattern CONSTRAINTS = java.util.regex.Pattern.compile(
            "\\s*\\((?:pattern|format|minLength|maxLength|multipleOf|exclusiveMinimum|exclusiveMaximum|uniqueItems"
                    + "|minProperties|maxProperties|patternProperties|propertyNames|contains|minContains|maxContains"
                    + "|dependentRequired|dependentSchemas|dependencies|not|if|then|else"
                    + "|contentEncoding|contentMediaType"
                    + "|additionalProperties|items|prefixItems): [^()]*\\)\\s*$");

    private SchemaWords() {}

    /** The object's members, one line each ({@code - "gate": one of "north", "south"}); "" for none. */
    static String members(ObjectNode schema) {
        return members(schema, false);
    }

    /**
     * The members; {@code valuesFromRequest} describes a top-level enum as text instead of listing its values. For a
     * tool's arguments, whose values come from the request: a listed enum draws a small model to its first value ("Open
     * the east gate" gave {@code "north"} on SmolLM2-135M in 2 of 4 phrasings with the values listed, 1 of 4 without
     * them), and the grammar allows only the enum's values anyway.
     */
    static String members(ObjectNode schema, boolean valuesFromRequest) {
        ObjectNode root = schema;
        List<String> lines = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it =
                        schema.path("properties").properties().iterator();
                it.hasNext(); ) {
            Map.Entry<String, JsonNode> property = it.next();
            boolean isRequired = isRequired(schema, property.getKey());
            JsonNode property0 = property.getValue();
            String kind = valuesFromRequest
                            && property0.path("enum").isArray()
                            && property0.path("enum").size() > 1
                            && property0.path("type").asText("").equals("string")
                    ? "text"
                    : value(property0, root, 0);
            lines.add("- " + quoted(property.getKey()) + ": " + kind + (isRequired ? "" : " (may be left out)"));
        }
        return String.join("\n", lines);
    }

    /** Whether the object schema lists {@code name} in its {@code required}. */
    public static boolean isRequired(ObjectNode schema, String name) {
        for (JsonNode required : schema.path("required")) {
            if (required.asText().equals(name)) {
                return true;
            }
        }
        return false;
    }

    /** The object's skeleton: {@code {"emotion": …, "line": …}}, or a word description for a non-object. */
    static String skeleton(ObjectNode schema) {
        if (!schema.path("properties").isObject() || schema.path("properties").isEmpty()) {
            return value(schema, schema, 0);
        }
        List<String> keys = new ArrayList<>();
        schema.path("properties").fieldNames().forEachRemaining(key -> keys.add(quoted(key) + ": …"));
        return "{" + String.join(", ", keys) + "}";
    }

    /** The kind of value {@code node} allows, in words. */
    static String value(JsonNode node, ObjectNode root, int depth) {
        if (!(node instanceof ObjectNode schema)) {
            return "any JSON value";
        }
        if (schema.has("$ref")) {
            String ref = schema.get("$ref").asText();
            JsonNode target =
                    ref.startsWith("#/$defs/") ? root.path("$defs").get(ref.substring("#/$defs/".length())) : null;
            return target == null || depth >= MAX_DEPTH ? "a value" : value(target, root, depth + 1);
        }
        String description = schema.path("description").isTextual()
                ? CONSTRAINTS
                        .matcher(schema.get("description").asText())
                        .replaceAll("")
                        .strip()
                : "";
        String described = description.isEmpty() ? "" : " (" + description + ")";
        JsonNode values = schema.get("enum");
        if (values != null && values.isArray() && !values.isEmpty()) {
            List<String> options = new ArrayList<>();
            values.forEach(v -> options.add(Json.write(v)));
            return (options.size() == 1 ? "exactly " : "one of ") + String.join(", ", options) + described;
        }
        JsonNode anyOf = schema.has("anyOf") ? schema.get("anyOf") : schema.get("oneOf");
        if (anyOf != null && anyOf.isArray() && !anyOf.isEmpty()) {
            List<String> options = new ArrayList<>();
            anyOf.forEach(branch -> options.add(value(branch, root, depth + 1)));
            return "either " + String.join(", or ", options) + described;
        }
        return switch (schema.path("type").asText("")) {
            case "string" -> "text" + described;
            case "integer" -> "a whole number" + described;
            case "number" -> "a number" + described;
            // "false" first: a small model takes the first value it is shown, and a flag is usually off (shown
            // "true or false", an NPC's ends_conversation would end every conversation).
            case "boolean" -> "false or true" + described;
            case "null" -> "null";
            case "array" -> list(schema, root, depth) + described;
            case "object" -> object(schema, root, depth) + described;
            default -> "any JSON value" + described;
        };
    }

    private static String list(ObjectNode schema, ObjectNode root, int depth) {
        int min = schema.path("minItems").asInt(0);
        int max = schema.has("maxItems") ? schema.get("maxItems").asInt() : -1;
        String count = min == max && min > 0 ? min + " " : max > 0 && min == 0 ? "up to " + max + " " : "";
        String item = depth >= MAX_DEPTH || !schema.has("items")
                ? "values"
                : plural(value(schema.get("items"), root, depth + 1));
        return "a list of " + count + item;
    }

    private static String object(ObjectNode schema, ObjectNode root, int depth) {
        JsonNode properties = schema.path("properties");
        if (!properties.isObject() || properties.isEmpty()) {
            return "an object";
        }
        if (depth >= MAX_DEPTH) {
            return "an object";
        }
        List<String> members = new ArrayList<>();
        properties
                .properties()
                .forEach(p -> members.add(quoted(p.getKey()) + ": " + value(p.getValue(), root, depth + 1)));
        return "an object {" + String.join(", ", members) + "}";
    }

    /** "text (a name)" -> "texts (a name)"; other descriptions unchanged. */
    private static String plural(String kind) {
        if (kind.startsWith("text")) {
            return "texts" + kind.substring(4);
        }
        if (kind.startsWith("a whole number")) {
            return "whole numbers" + kind.substring("a whole number".length());
        }
        if (kind.startsWith("a number")) {
            return "numbers" + kind.substring("a number".length());
        }
        if (kind.startsWith("an object")) {
            return "objects" + kind.substring("an object".length());
        }
        return kind;
    }

    private static String quoted(String key) {
        return Json.write(Json.mapper().getNodeFactory().textNode(key));
    }
}
