package dev.oam.core.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.math.BigDecimal;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The JSON Schema keywords the conversion knows (types, annotations, unenforced constraints) and the checked reading of
 * their values: each malformed value is refused with its pointer.
 */
final class SchemaKeywords {
    static final Set<String> TYPES = Set.of("object", "array", "string", "integer", "number", "boolean", "null");
    /** Keywords that carry no constraint: kept out of the generation schema silently. */
    static final Set<String> ANNOTATIONS = Set.of(
            "title",
            "description",
            "default",
            "examples",
            "$schema",
            "$id",
            "$comment",
            "readOnly",
            "writeOnly",
            "deprecated",
            "$defs",
            "definitions",
            "x-order",
            "$anchor",
            "$vocabulary");
    /** Constraints a model cannot be held to: described to the model and reported. */
    static final Set<String> UNENFORCED = new LinkedHashSet<>(List.of(
            "pattern",
            "format",
            "minLength",
            "maxLength",
            "multipleOf",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "uniqueItems",
            "minProperties",
            "maxProperties",
            "patternProperties",
            "propertyNames",
            "contains",
            "minContains",
            "maxContains",
            "dependentRequired",
            "dependentSchemas",
            "dependencies",
            "not",
            "if",
            "then",
            "else",
            "contentEncoding",
            "contentMediaType",
            "contentSchema",
            "unevaluatedProperties",
            "unevaluatedItems",
            "additionalItems"));

    /** Whether the conversion handles {@code key} (as opposed to an annotation or an unenforced constraint). */
    static boolean known(String key) {
        return switch (key) {
            case "type",
                    "properties",
                    "required",
                    "items",
                    "minItems",
                    "maxItems",
                    "enum",
                    "const",
                    "minimum",
                    "maximum",
                    "anyOf",
                    "oneOf",
                    "allOf",
                    "$ref",
                    "nullable",
                    "additionalProperties",
                    "prefixItems" -> true;
            default -> false;
        };
    }

    static boolean nullable(JsonNode schema) {
        return schema.path("nullable").asBoolean(false);
    }

    static List<String> inferTypes(JsonNode schema) {
        if (schema.has("properties") || schema.has("required")) {
            return List.of("object");
        }
        if (schema.has("items") || schema.has("minItems") || schema.has("maxItems")) {
            return List.of("array");
        }
        if (schema.has("minimum") || schema.has("maximum")) {
            return List.of("number");
        }
        JsonNode values = schema.has("enum") ? schema.get("enum") : null;
        if (schema.has("const")) {
            values = Json.array().add(schema.get("const"));
        }
        if (values != null && values.isArray() && !values.isEmpty()) {
            Set<String> kinds = new LinkedHashSet<>();
            for (JsonNode v : values) {
                kinds.add(
                        v.isTextual()
                                ? "string"
                                : v.isIntegralNumber()
                                        ? "integer"
                                        : v.isNumber()
                                                ? "number"
                                                : v.isBoolean() ? "boolean" : v.isNull() ? "null" : "other");
            }
            if (kinds.size() == 1 && !kinds.contains("other")) {
                return List.of(kinds.iterator().next());
            }
        }
        return List.of();
    }

    static boolean inRange(JsonNode value, ObjectNode typed) {
        if (!value.isNumber() || ((value.isDouble() || value.isFloat()) && !Double.isFinite(value.doubleValue()))) {
            return true;
        }
        BigDecimal number = value.decimalValue();
        return !(typed.has("minimum") && number.compareTo(typed.get("minimum").decimalValue()) < 0)
                && !(typed.has("maximum")
                        && number.compareTo(typed.get("maximum").decimalValue()) > 0);
    }

    static JsonNode enumValues(JsonNode schema, String pointer) throws SchemaException {
        if (schema.has("const")) {
            return Json.array().add(schema.get("const"));
        }
        if (!schema.has("enum")) {
            return null;
        }
        JsonNode values = schema.get("enum");
        if (!values.isArray() || values.isEmpty()) {
            throw new SchemaException(pointer + "/enum", "'enum' must be a non-empty array.");
        }
        return values;
    }

    static Integer count(JsonNode schema, String key, String pointer) throws SchemaException {
        JsonNode value = schema.get(key);
        if (value == null) {
            return null;
        }
        if (!value.isNumber()
                || value.decimalValue().signum() < 0
                || value.decimalValue().stripTrailingZeros().scale() > 0
                || value.decimalValue().compareTo(BigDecimal.valueOf(Integer.MAX_VALUE)) > 0) {
            throw new SchemaException(pointer + "/" + key, "'" + key + "' must be a non-negative integer.");
        }
        return value.decimalValue().intValue();
    }

    static void range(JsonNode schema, ObjectNode out, String pointer, String type) throws SchemaException {
        BigDecimal min = bound(schema, "minimum", pointer);
        BigDecimal max = bound(schema, "maximum", pointer);
        if (min != null && max != null && min.compareTo(max) > 0) {
            throw new SchemaException(pointer + "/minimum", "'minimum' is larger than 'maximum'.");
        }
        if (type.equals("integer")
                && min != null
                && max != null
                && min.setScale(0, java.math.RoundingMode.CEILING)
                                .compareTo(max.setScale(0, java.math.RoundingMode.FLOOR))
                        > 0) {
            throw new SchemaException(pointer + "/minimum", "No integer lies between 'minimum' and 'maximum'.");
        }
        if (min != null) {
            out.set("minimum", schema.get("minimum"));
        }
        if (max != null) {
            out.set("maximum", schema.get("maximum"));
        }
    }

    static BigDecimal bound(JsonNode schema, String key, String pointer) throws SchemaException {
        JsonNode value = schema.get(key);
        if (value == null) {
            return null;
        }
        if (!value.isNumber() || (value.isDouble() && !Double.isFinite(value.doubleValue()))) {
            throw new SchemaException(pointer + "/" + key, "'" + key + "' must be a number.");
        }
        return value.decimalValue();
    }

    static String text(JsonNode schema, String key, String pointer) throws SchemaException {
        JsonNode value = schema.get(key);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual()) {
            throw new SchemaException(pointer + "/" + key, "'" + key + "' must be a string.");
        }
        return value.textValue();
    }

    static String escape(String name) {
        return name.replace("~", "~0").replace("/", "~1");
    }

    private SchemaKeywords() {}
}
