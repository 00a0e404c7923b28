package dev.oam.core.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.math.BigDecimal;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;

/** Checks values against a generation schema and puts their keys in schema order. */
final class SchemaValidator {
    private static final int MAX_DEPTH = 600;

    private SchemaValidator() {}

    static Optional<String> firstViolation(ObjectNode root, JsonNode value) {
        return Optional.ofNullable(check(root, root, value, "#", 0));
    }

    /** The first violation of {@code value} against {@code schema}, a node of the generation schema {@code root}. */
    static Optional<String> firstViolation(ObjectNode root, ObjectNode schema, JsonNode value) {
        return Optional.ofNullable(check(root, schema, value, "#", 0));
    }

    static boolean hasType(JsonNode value, String type) {
        return switch (type) {
            case "object" -> value.isObject();
            case "array" -> value.isArray();
            case "string" -> value.isTextual();
            case "integer" ->
                value.isIntegralNumber()
                        || (value.isNumber()
                                && !value.isDouble()
                                && value.decimalValue().stripTrailingZeros().scale() <= 0)
                        || (value.isDouble()
                                && Double.isFinite(value.doubleValue())
                                && value.doubleValue() == Math.rint(value.doubleValue()));
            case "number" -> value.isNumber();
            case "boolean" -> value.isBoolean();
            case "null" -> value.isNull();
            default -> false;
        };
    }

    private static ObjectNode resolve(ObjectNode root, ObjectNode schema) {
        ObjectNode current = schema;
        for (int i = 0; i < 32 && current.has("$ref"); i++) {
            String name = current.get("$ref").asText().substring("#/$defs/".length());
            JsonNode def = root.path("$defs").get(name);
            if (def == null || !def.isObject()) {
                return Json.object();
            }
            current = (ObjectNode) def;
        }
        return current;
    }

    private static String check(ObjectNode root, ObjectNode raw, JsonNode value, String path, int depth) {
        if (depth > MAX_DEPTH) {
            return path + ": the value is nested too deeply";
        }
        ObjectNode schema = resolve(root, raw);
        JsonNode anyOf = schema.get("anyOf");
        if (anyOf != null) {
            String first = null;
            for (JsonNode branch : anyOf) {
                String violation = check(root, (ObjectNode) branch, value, path, depth + 1);
                if (violation == null) {
                    return null;
                }
                if (first == null) {
                    first = violation;
                }
            }
            return path + ": matches none of the allowed alternatives (" + first + ")";
        }
        String type = schema.path("type").asText(null);
        if (type != null && !hasType(value, type)) {
            return path + ": expected " + article(type) + " but got " + describe(value);
        }
        JsonNode values = schema.get("enum");
        if (values != null) {
            boolean found = false;
            for (JsonNode allowed : values) {
                found |= same(allowed, value);
            }
            if (!found) {
                return path + ": " + Json.write(value) + " is not one of " + Json.write(values);
            }
        }
        if (type == null) {
            return null;
        }
        switch (type) {
            case "object" -> {
                JsonNode properties = schema.path("properties");
                for (JsonNode name : schema.path("required")) {
                    if (!value.has(name.textValue())) {
                        return path + ": missing required property '" + name.textValue() + "'";
                    }
                }
                for (Iterator<Map.Entry<String, JsonNode>> it =
                                value.properties().iterator();
                        it.hasNext(); ) {
                    Map.Entry<String, JsonNode> field = it.next();
                    JsonNode propertySchema = properties.get(field.getKey());
                    String at = path + "/" + field.getKey().replace("~", "~0").replace("/", "~1");
                    if (propertySchema == null) {
                        if (schema.path("additionalProperties").isBoolean()) {
                            return at + ": unknown property '" + field.getKey() + "'";
                        }
                        continue;
                    }
                    String violation = check(root, (ObjectNode) propertySchema, field.getValue(), at, depth + 1);
                    if (violation != null) {
                        return violation;
                    }
                }
            }
            case "array" -> {
                if (schema.has("minItems")
                        && value.size() < schema.get("minItems").asInt()) {
                    return path + ": expected at least "
                            + schema.get("minItems").asInt() + " items but got " + value.size();
                }
                if (schema.has("maxItems")
                        && value.size() > schema.get("maxItems").asInt()) {
                    return path + ": expected at most " + schema.get("maxItems").asInt() + " items but got "
                            + value.size();
                }
                JsonNode items = schema.get("items");
                if (items instanceof ObjectNode itemSchema) {
                    for (int i = 0; i < value.size(); i++) {
                        String violation = check(root, itemSchema, value.get(i), path + "/" + i, depth + 1);
                        if (violation != null) {
                            return violation;
                        }
                    }
                }
            }
            case "integer", "number" -> {
                BigDecimal number = value.decimalValue();
                if (schema.has("minimum")
                        && number.compareTo(schema.get("minimum").decimalValue()) < 0) {
                    return path + ": " + Json.write(value) + " is less than the minimum "
                            + Json.write(schema.get("minimum"));
                }
                if (schema.has("maximum")
                        && number.compareTo(schema.get("maximum").decimalValue()) > 0) {
                    return path + ": " + Json.write(value) + " is greater than the maximum "
                            + Json.write(schema.get("maximum"));
                }
            }
            default -> {}
        }
        return null;
    }

    static boolean same(JsonNode a, JsonNode b) {
        return Json.sameValue(a, b);
    }

    private static String article(String type) {
        return (type.startsWith("a") || type.startsWith("i") || type.startsWith("o") ? "an " : "a ") + type;
    }

    private static String describe(JsonNode value) {
        String kind = value.isObject()
                ? "an object"
                : value.isArray()
                        ? "an array"
                        : value.isTextual()
                                ? "a string"
                                : value.isNumber()
                                        ? "the number " + Json.write(value)
                                        : value.isBoolean() ? value.toString() : "null";
        return kind;
    }

    /**
     * {@code value} without the members closed objects ({@code additionalProperties: false}) do not define,
     * recursively; of alternatives, the first branch the pruned value then fits decides.
     */
    static JsonNode withoutUnknownKeys(ObjectNode root, ObjectNode raw, JsonNode value, int depth) {
        if (depth > MAX_DEPTH) {
            return value;
        }
        ObjectNode schema = resolve(root, raw);
        JsonNode anyOf = schema.get("anyOf");
        if (anyOf != null) {
            for (JsonNode branch : anyOf) {
                JsonNode pruned = withoutUnknownKeys(root, (ObjectNode) branch, value, depth + 1);
                if (check(root, (ObjectNode) branch, pruned, "#", 0) == null) {
                    return pruned;
                }
            }
            return value;
        }
        if (value.isObject()) {
            JsonNode properties = schema.path("properties");
            boolean closed = schema.path("additionalProperties").isBoolean();
            ObjectNode out = Json.object();
            value.properties().forEach(e -> {
                JsonNode property = properties.get(e.getKey());
                if (property instanceof ObjectNode propertySchema) {
                    out.set(e.getKey(), withoutUnknownKeys(root, propertySchema, e.getValue(), depth + 1));
                } else if (!closed) {
                    out.set(e.getKey(), e.getValue());
                }
            });
            return out;
        }
        if (value.isArray() && schema.get("items") instanceof ObjectNode items) {
            ArrayNode out = Json.array();
            value.forEach(item -> out.add(withoutUnknownKeys(root, items, item, depth + 1)));
            return out;
        }
        return value;
    }

    static JsonNode reorder(ObjectNode root, ObjectNode raw, JsonNode value) {
        ObjectNode schema = resolve(root, raw);
        JsonNode anyOf = schema.get("anyOf");
        if (anyOf != null) {
            for (JsonNode branch : anyOf) {
                if (check(root, (ObjectNode) branch, value, "#", 0) == null) {
                    return reorder(root, (ObjectNode) branch, value);
                }
            }
            return value;
        }
        if (value.isObject()) {
            JsonNode properties = schema.path("properties");
            ObjectNode out = Json.object();
            for (Iterator<String> it = properties.fieldNames(); it.hasNext(); ) {
                String name = it.next();
                if (value.has(name)) {
                    out.set(name, reorder(root, (ObjectNode) properties.get(name), value.get(name)));
                }
            }
            value.properties().forEach(e -> {
                if (!out.has(e.getKey())) {
                    out.set(e.getKey(), e.getValue());
                }
            });
            return out;
        }
        if (value.isArray() && schema.get("items") instanceof ObjectNode items) {
            ArrayNode out = Json.array();
            value.forEach(item -> out.add(reorder(root, items, item)));
            return out;
        }
        return value;
    }
}
