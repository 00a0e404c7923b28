package dev.oam.model.llama;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A small JSON Schema validator written for the wire tests, independent of the bridge's own validation (which the
 * backend uses to retry invalid output, so it cannot be the judge): {@code type} (also lists), {@code enum},
 * {@code const}, {@code minimum}/{@code maximum}, {@code properties}/{@code required}/{@code additionalProperties},
 * {@code items}/{@code minItems}/{@code maxItems}, {@code anyOf}/{@code oneOf}.
 */
final class SchemaCheck {
    private SchemaCheck() {}

    /** Every violation of {@code schema} by {@code value}, each naming its JSON pointer. */
    static List<String> violations(JsonNode schema, JsonNode value) {
        List<String> out = new ArrayList<>();
        check(schema, value, "#", out);
        return out;
    }

    private static void check(JsonNode schema, JsonNode value, String at, List<String> out) {
        if (schema.has("anyOf") || schema.has("oneOf")) {
            JsonNode branches = schema.has("anyOf") ? schema.get("anyOf") : schema.get("oneOf");
            int matching = 0;
            for (JsonNode branch : branches) {
                if (violations(branch, value).isEmpty()) {
                    matching++;
                }
            }
            if (matching == 0 || (schema.has("oneOf") && matching > 1)) {
                out.add(at + ": matches " + matching + " branches");
            }
        }
        JsonNode type = schema.get("type");
        if (type != null) {
            Set<String> types = new HashSet<>();
            if (type.isArray()) {
                type.forEach(t -> types.add(t.asText()));
            } else {
                types.add(type.asText());
            }
            if (types.stream().noneMatch(t -> is(t, value))) {
                out.add(at + ": " + value + " is not of type " + types);
                return;
            }
        }
        if (schema.has("enum")) {
            boolean found = false;
            for (JsonNode option : schema.get("enum")) {
                found |= option.equals(value)
                        || (option.isNumber()
                                && value.isNumber()
                                && option.decimalValue().compareTo(value.decimalValue()) == 0);
            }
            if (!found) {
                out.add(at + ": " + value + " is not one of " + schema.get("enum"));
            }
        }
        if (schema.has("const") && !schema.get("const").equals(value)) {
            out.add(at + ": " + value + " is not " + schema.get("const"));
        }
        if (value.isNumber()) {
            if (schema.has("minimum")
                    && value.decimalValue().compareTo(schema.get("minimum").decimalValue()) < 0) {
                out.add(at + ": " + value + " < minimum " + schema.get("minimum"));
            }
            if (schema.has("maximum")
                    && value.decimalValue().compareTo(schema.get("maximum").decimalValue()) > 0) {
                out.add(at + ": " + value + " > maximum " + schema.get("maximum"));
            }
        }
        if (value.isObject()) {
            JsonNode properties = schema.path("properties");
            for (JsonNode name : schema.path("required")) {
                if (!value.has(name.asText())) {
                    out.add(at + ": required '" + name.asText() + "' is missing");
                }
            }
            for (Map.Entry<String, JsonNode> field : value.properties()) {
                if (properties.has(field.getKey())) {
                    check(properties.get(field.getKey()), field.getValue(), at + "/" + field.getKey(), out);
                } else if (schema.path("additionalProperties").isBoolean()
                        && !schema.get("additionalProperties").asBoolean()) {
                    out.add(at + ": '" + field.getKey() + "' is not a property");
                }
            }
        }
        if (value.isArray()) {
            if (schema.has("minItems") && value.size() < schema.get("minItems").asInt()) {
                out.add(at + ": " + value.size() + " items < minItems " + schema.get("minItems"));
            }
            if (schema.has("maxItems") && value.size() > schema.get("maxItems").asInt()) {
                out.add(at + ": " + value.size() + " items > maxItems " + schema.get("maxItems"));
            }
            if (schema.has("items")) {
                for (int i = 0; i < value.size(); i++) {
                    check(schema.get("items"), value.get(i), at + "/" + i, out);
                }
            }
        }
    }

    private static boolean is(String type, JsonNode value) {
        return switch (type) {
            case "object" -> value.isObject();
            case "array" -> value.isArray();
            case "string" -> value.isTextual();
            case "boolean" -> value.isBoolean();
            case "null" -> value.isNull();
            case "number" -> value.isNumber();
            case "integer" ->
                value.isIntegralNumber()
                        || (value.isNumber()
                                && value.decimalValue().stripTrailingZeros().scale() <= 0);
            default -> throw new IllegalArgumentException("type " + type);
        };
    }
}
