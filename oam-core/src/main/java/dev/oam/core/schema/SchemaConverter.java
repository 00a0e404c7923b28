package dev.oam.core.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** JSON Schema → generation schema. One converter for tools, structured turns and game methods. */
final class SchemaConverter {
    private static final Set<String> TYPES =
            Set.of("object", "array", "string", "integer", "number", "boolean", "null");
    /** Keywords that carry no constraint: kept out of the generation schema silently. */
    private static final Set<String> ANNOTATIONS = Set.of(
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
    private static final Set<String> UNENFORCED = new LinkedHashSet<>(List.of(
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

    private static final int MAX_DEPTH = 64;

    private final JsonNode root;
    private final String subject;
    private final Set<String> warnings = new LinkedHashSet<>();
    private final Map<String, String> defNames = new HashMap<>(); // source pointer → def name
    private final Map<String, ObjectNode> defs = new LinkedHashMap<>(); // def name → converted (null while converting)
    private final Set<String> converting = new LinkedHashSet<>();
    /** Object and array nodes with an {@code enum}, with their source pointers: checked against the whole result at the end. */
    private final List<Map.Entry<ObjectNode, String>> structuredEnums = new ArrayList<>();
    /** Set while converting the top object of an {@code allOf} part: its {@code required} may name another part's properties. */
    private boolean deferRequired;

    private SchemaConverter(JsonNode root, String subject) {
        this.root = root;
        this.subject = subject;
    }

    static GenerationSchema convert(JsonNode schema, String subject, boolean objectRoot) throws SchemaException {
        SchemaConverter converter = new SchemaConverter(schema, subject);
        ObjectNode out = converter.node(schema, "#", 0);
        if (objectRoot && !isObjectSchema(out, converter)) {
            throw new SchemaException("#", "Tool parameters must be an object schema (\"type\": \"object\").");
        }
        if (!converter.defs.isEmpty()) {
            ObjectNode defsNode = out.putObject("$defs");
            converter.defs.forEach(defsNode::set);
        }
        converter.checkReferenceCycles();
        converter.checkStructuredEnums(out);
        return new GenerationSchema(out, List.copyOf(converter.warnings));
    }

    /**
     * An object or array {@code enum}/{@code const} value that breaks the node's own {@code properties}, {@code items}
     * or counts would be offered by the grammar (which emits enum values literally) and then refused by the
     * validator. Such values are dropped with a warning, and a node left without one is refused. This runs on the
     * finished schema because the node may refer to {@code $defs} that were still being converted when it was made.
     */
    private void checkStructuredEnums(ObjectNode out) throws SchemaException {
        for (Map.Entry<ObjectNode, String> entry : structuredEnums) {
            ObjectNode node = entry.getKey();
            ObjectNode without = node.deepCopy();
            without.remove("enum");
            ArrayNode kept = Json.array();
            List<String> dropped = new ArrayList<>();
            String firstViolation = null;
            for (JsonNode value : node.get("enum")) {
                java.util.Optional<String> violation = SchemaValidator.firstViolation(out, without, value);
                if (violation.isEmpty()) {
                    kept.add(value);
                } else {
                    dropped.add(Json.write(value));
                    firstViolation = firstViolation == null ? violation.get() : firstViolation;
                }
            }
            if (kept.isEmpty()) {
                throw new SchemaException(
                        entry.getValue() + "/enum",
                        "No value of 'enum'/'const' fits the schema's other" + " keywords (" + firstViolation + ").");
            }
            if (!dropped.isEmpty()) {
                warnings.add(subject + ": " + entry.getValue()
                        + ": enum values that break the schema's other keywords are dropped: "
                        + String.join(", ", dropped));
                node.set("enum", kept);
            }
        }
    }

    /** A chain of references that only leads to other references never reaches a schema to generate. */
    private void checkReferenceCycles() throws SchemaException {
        for (Map.Entry<String, String> def : defNames.entrySet()) {
            Set<String> seen = new LinkedHashSet<>();
            String name = def.getValue();
            while (true) {
                ObjectNode node = defs.get(name);
                if (node == null
                        || !node.has("$ref")
                        || node.size() > 2
                        || (node.size() == 2 && !node.has("description"))) {
                    break;
                }
                if (!seen.add(name)) {
                    throw new SchemaException(
                            def.getKey(),
                            "The references starting at '" + def.getKey()
                                    + "' only lead to each other and never reach a schema.");
                }
                name = node.get("$ref").asText().substring("#/$defs/".length());
            }
        }
    }

    private static boolean isObjectSchema(ObjectNode node, SchemaConverter converter) {
        if (node.has("$ref")) {
            String name = node.get("$ref").asText().substring("#/$defs/".length());
            ObjectNode def = converter.defs.get(name);
            return def != null && "object".equals(def.path("type").asText());
        }
        return "object".equals(node.path("type").asText());
    }

    private ObjectNode node(JsonNode schema, String pointer, int depth) throws SchemaException {
        if (depth > MAX_DEPTH) {
            throw new SchemaException(pointer, "The schema is nested too deeply (more than " + MAX_DEPTH + " levels).");
        }
        if (schema.isBoolean()) {
            if (schema.booleanValue()) {
                return Json.object();
            }
            throw new SchemaException(pointer, "The schema 'false' matches nothing, so nothing can be generated.");
        }
        if (!schema.isObject()) {
            throw new SchemaException(pointer, "A schema must be an object (or true).");
        }
        if (schema.has("$ref")) {
            return ref(schema, pointer, depth);
        }
        List<String> described = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = schema.properties().iterator(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            String key = field.getKey();
            if (UNENFORCED.contains(key)
                    || (key.equals("additionalProperties") && field.getValue().isObject())
                    || (key.equals("items") && field.getValue().isArray())
                    || key.equals("prefixItems")) {
                String value = Json.text(field.getValue());
                described.add(key + ": " + value);
                warnings.add(subject + ": " + pointer + ": " + key + " '" + value
                        + "' is described to the model but not enforced");
            }
        }
        ObjectNode out = convertShape(schema, pointer, depth);
        String description = text(schema, "description", pointer);
        if (!described.isEmpty()) {
            description = (description == null ? "" : description + " ") + "(" + String.join("; ", described) + ")";
        }
        if (description != null) {
            putDescription(out, description);
        }
        return out;
    }

    private static void putDescription(ObjectNode out, String description) {
        ObjectNode copy = Json.object();
        if (out.has("type")) {
            copy.set("type", out.get("type"));
        }
        copy.put("description", description);
        out.properties().forEach(e -> {
            if (!e.getKey().equals("type") && !e.getKey().equals("description")) {
                copy.set(e.getKey(), e.getValue());
            }
        });
        out.removeAll();
        out.setAll(copy);
    }

    private ObjectNode convertShape(JsonNode schema, String pointer, int depth) throws SchemaException {
        for (Iterator<String> it = schema.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!ANNOTATIONS.contains(key) && !UNENFORCED.contains(key) && !known(key) && !key.startsWith("x-")) {
                warnings.add(subject + ": " + pointer + ": unknown keyword '" + key + "' is ignored");
            }
        }
        if (schema.has("allOf")) {
            return allOf(schema, pointer, depth);
        }
        JsonNode alternatives = schema.has("anyOf") ? schema.get("anyOf") : schema.get("oneOf");
        if (alternatives != null) {
            String at = pointer + (schema.has("anyOf") ? "/anyOf" : "/oneOf");
            if (!alternatives.isArray() || alternatives.isEmpty()) {
                throw new SchemaException(at, "anyOf/oneOf must be a non-empty array of schemas.");
            }
            ArrayNode branches = Json.array();
            for (int i = 0; i < alternatives.size(); i++) {
                addBranch(branches, node(alternatives.get(i), at + "/" + i, depth + 1));
            }
            if (nullable(schema) && !hasNullBranch(branches)) {
                addBranch(branches, typeNode("null"));
            }
            return branches.size() == 1 ? (ObjectNode) branches.get(0) : anyOf(branches);
        }
        JsonNode type = schema.get("type");
        List<String> types = new ArrayList<>();
        if (type == null) {
            types.addAll(inferTypes(schema));
        } else if (type.isTextual()) {
            types.add(type.textValue());
        } else if (type.isArray() && !type.isEmpty()) {
            for (JsonNode t : type) {
                if (!t.isTextual()) {
                    throw new SchemaException(
                            pointer + "/type", "'type' must be a type name or an array of type names.");
                }
                if (!types.contains(t.textValue())) {
                    types.add(t.textValue());
                }
            }
        } else {
            throw new SchemaException(pointer + "/type", "'type' must be a type name or an array of type names.");
        }
        for (String t : types) {
            if (!TYPES.contains(t)) {
                throw new SchemaException(
                        pointer + "/type",
                        "Unknown type '" + t + "' (use object, array, string, integer, " + "number, boolean or null).");
            }
        }
        if (nullable(schema) && !types.isEmpty() && !types.contains("null")) {
            types.add("null");
        }
        if (types.isEmpty()) {
            ObjectNode any = Json.object();
            JsonNode values = enumValues(schema, pointer);
            if (values != null) {
                any.set("enum", values);
            }
            return any;
        }
        if (types.size() == 1) {
            return typed(schema, types.get(0), pointer, depth);
        }
        ArrayNode branches = Json.array();
        for (String t : types) {
            branches.add(typed(schema, t, pointer, depth));
        }
        return anyOf(branches);
    }

    private static boolean known(String key) {
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

    private static boolean nullable(JsonNode schema) {
        return schema.path("nullable").asBoolean(false);
    }

    private static List<String> inferTypes(JsonNode schema) {
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

    private ObjectNode typed(JsonNode schema, String type, String pointer, int depth) throws SchemaException {
        ObjectNode out = typeNode(type);
        switch (type) {
            case "object" -> object(schema, out, pointer, depth);
            case "array" -> array(schema, out, pointer, depth);
            case "integer", "number" -> range(schema, out, pointer, type);
            default -> {}
        }
        if (!type.equals("null")) {
            JsonNode values = enumValues(schema, pointer);
            if (values != null) {
                ArrayNode matching = Json.array();
                List<String> outOfRange = new ArrayList<>();
                for (JsonNode v : values) {
                    if (SchemaValidator.hasType(v, type)) {
                        // A value outside minimum/maximum would be generated (the grammar offers every enum value)
                        // and then refused by the validator, so it is dropped here.
                        if (inRange(v, out)) {
                            matching.add(v);
                        } else {
                            outOfRange.add(Json.write(v));
                        }
                    }
                }
                if (matching.isEmpty()) {
                    throw new SchemaException(
                            pointer + "/enum",
                            outOfRange.isEmpty()
                                    ? "No value of 'enum'/'const' is of type " + type + "."
                                    : "No value of 'enum'/'const' lies between 'minimum' and 'maximum'.");
                }
                if (!outOfRange.isEmpty()) {
                    warnings.add(subject + ": " + pointer + ": enum values outside minimum/maximum are dropped: "
                            + String.join(", ", outOfRange));
                }
                out.set("enum", matching);
                if (type.equals("object") || type.equals("array")) {
                    structuredEnums.add(Map.entry(out, pointer));
                }
            }
        }
        return out;
    }

    private static boolean inRange(JsonNode value, ObjectNode typed) {
        if (!value.isNumber() || ((value.isDouble() || value.isFloat()) && !Double.isFinite(value.doubleValue()))) {
            return true;
        }
        BigDecimal number = value.decimalValue();
        return !(typed.has("minimum") && number.compareTo(typed.get("minimum").decimalValue()) < 0)
                && !(typed.has("maximum")
                        && number.compareTo(typed.get("maximum").decimalValue()) > 0);
    }

    private static JsonNode enumValues(JsonNode schema, String pointer) throws SchemaException {
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

    private void object(JsonNode schema, ObjectNode out, String pointer, int depth) throws SchemaException {
        boolean defer = deferRequired;
        deferRequired = false;
        JsonNode properties = schema.get("properties");
        ObjectNode props = out.putObject("properties");
        if (properties != null) {
            if (!properties.isObject()) {
                throw new SchemaException(pointer + "/properties", "'properties' must be an object of schemas.");
            }
            List<String> names = new ArrayList<>();
            properties.fieldNames().forEachRemaining(names::add);
            List<String> ordered = new ArrayList<>(names);
            ordered.sort(Comparator.comparing(
                    (String name) -> {
                        JsonNode order = properties.get(name).path("x-order");
                        return order.isNumber() ? order.decimalValue() : null;
                    },
                    Comparator.nullsLast(Comparator.naturalOrder())));
            for (String name : ordered) {
                props.set(name, node(properties.get(name), pointer + "/properties/" + escape(name), depth + 1));
            }
        }
        ArrayNode required = out.putArray("required");
        JsonNode requiredNode = schema.get("required");
        if (requiredNode != null) {
            if (!requiredNode.isArray()) {
                throw new SchemaException(pointer + "/required", "'required' must be an array of property names.");
            }
            for (int i = 0; i < requiredNode.size(); i++) {
                JsonNode name = requiredNode.get(i);
                if (!name.isTextual()) {
                    throw new SchemaException(
                            pointer + "/required/" + i, "'required' must be an array of property names.");
                }
                if (!defer && !props.has(name.textValue())) {
                    throw new SchemaException(
                            pointer + "/required/" + i,
                            "Required property '" + name.textValue()
                                    + "' is not defined in 'properties', so it cannot be generated.");
                }
                boolean seen = false;
                for (JsonNode r : required) {
                    seen |= r.textValue().equals(name.textValue());
                }
                if (!seen) {
                    required.add(name.textValue());
                }
            }
        }
        JsonNode additional = schema.get("additionalProperties");
        if (additional != null && additional.isBoolean() && !additional.booleanValue()) {
            out.put("additionalProperties", false);
        }
    }

    private void array(JsonNode schema, ObjectNode out, String pointer, int depth) throws SchemaException {
        JsonNode items = schema.get("items");
        if (items == null || items.isArray()) {
            out.set("items", Json.object());
        } else {
            out.set("items", node(items, pointer + "/items", depth + 1));
        }
        Integer min = count(schema, "minItems", pointer);
        Integer max = count(schema, "maxItems", pointer);
        if (min != null && max != null && min > max) {
            throw new SchemaException(
                    pointer + "/minItems", "'minItems' (" + min + ") is larger than 'maxItems' (" + max + ").");
        }
        if (min != null) {
            out.put("minItems", min);
        }
        if (max != null) {
            out.put("maxItems", max);
        }
    }

    private static Integer count(JsonNode schema, String key, String pointer) throws SchemaException {
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

    private static void range(JsonNode schema, ObjectNode out, String pointer, String type) throws SchemaException {
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

    private static BigDecimal bound(JsonNode schema, String key, String pointer) throws SchemaException {
        JsonNode value = schema.get(key);
        if (value == null) {
            return null;
        }
        if (!value.isNumber() || (value.isDouble() && !Double.isFinite(value.doubleValue()))) {
            throw new SchemaException(pointer + "/" + key, "'" + key + "' must be a number.");
        }
        return value.decimalValue();
    }

    private ObjectNode allOf(JsonNode schema, String pointer, int depth) throws SchemaException {
        JsonNode parts = schema.get("allOf");
        if (!parts.isArray() || parts.isEmpty()) {
            throw new SchemaException(pointer + "/allOf", "'allOf' must be a non-empty array of object schemas.");
        }
        ObjectNode merged = typeNode("object");
        ObjectNode properties = merged.putObject("properties");
        ArrayNode required = merged.putArray("required");
        List<ObjectNode> pieces = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
            deferRequired = parts.get(i).isObject() && !parts.get(i).has("$ref");
            pieces.add(resolved(node(parts.get(i), pointer + "/allOf/" + i, depth + 1)));
            deferRequired = false;
        }
        ObjectNode own = Json.object();
        schema.properties().forEach(e -> {
            if (!e.getKey().equals("allOf") && !e.getKey().equals("description")) {
                own.set(e.getKey(), e.getValue());
            }
        });
        if (own.has("properties") || own.has("required")) {
            deferRequired = true;
            pieces.add(typed(own, "object", pointer, depth));
            deferRequired = false;
        }
        for (int i = 0; i < pieces.size(); i++) {
            ObjectNode piece = pieces.get(i);
            if (!"object".equals(piece.path("type").asText())) {
                throw new SchemaException(
                        pointer + "/allOf/" + Math.min(i, parts.size() - 1),
                        "'allOf' is supported for object schemas only.");
            }
            piece.path("properties").properties().forEach(e -> properties.set(e.getKey(), e.getValue()));
            for (JsonNode r : piece.path("required")) {
                boolean seen = false;
                for (JsonNode existing : required) {
                    seen |= existing.textValue().equals(r.textValue());
                }
                if (!seen) {
                    required.add(r.textValue());
                }
            }
            if (piece.path("additionalProperties").isBoolean()) {
                merged.put("additionalProperties", false);
            }
        }
        for (int i = 0; i < required.size(); i++) {
            if (!properties.has(required.get(i).textValue())) {
                throw new SchemaException(
                        pointer + "/allOf",
                        "Required property '" + required.get(i).textValue()
                                + "' is not defined in any part's 'properties', so it cannot be generated.");
            }
        }
        return merged;
    }

    private ObjectNode resolved(ObjectNode node) {
        if (node.has("$ref")) {
            ObjectNode def = defs.get(node.get("$ref").asText().substring("#/$defs/".length()));
            if (def != null) {
                return def.deepCopy();
            }
        }
        return node;
    }

    private ObjectNode ref(JsonNode schema, String pointer, int depth) throws SchemaException {
        JsonNode refNode = schema.get("$ref");
        if (!refNode.isTextual() || !refNode.textValue().startsWith("#")) {
            throw new SchemaException(pointer + "/$ref", "Only local references ('#/$defs/Name') are supported.");
        }
        String target = refNode.textValue();
        JsonNode resolved = resolvePointer(target);
        if (resolved == null) {
            throw new SchemaException(pointer + "/$ref", "The reference '" + target + "' does not resolve.");
        }
        String name = defNames.get(target);
        if (name == null) {
            String base = target.equals("#")
                    ? "Root"
                    : target.substring(target.lastIndexOf('/') + 1)
                            .replace("~1", "_")
                            .replace("~0", "_");
            if (base.isEmpty()) {
                base = "Def";
            }
            name = base;
            for (int n = 2; defs.containsKey(name) || defNames.containsValue(name); n++) {
                name = base + n;
            }
            defNames.put(target, name);
            converting.add(target);
            defs.put(name, null);
            ObjectNode converted = node(resolved, target, depth + 1);
            defs.put(name, converted);
            converting.remove(target);
        }
        List<String> ignored = new ArrayList<>();
        schema.fieldNames().forEachRemaining(key -> {
            if (!key.equals("$ref") && !ANNOTATIONS.contains(key) && !key.startsWith("x-")) {
                ignored.add(key);
            }
        });
        if (!ignored.isEmpty()) {
            warnings.add(
                    subject + ": " + pointer + ": keywords next to '$ref' are ignored: " + String.join(", ", ignored));
        }
        ObjectNode out = Json.object();
        out.put("$ref", "#/$defs/" + name);
        if (schema.has("description") && schema.get("description").isTextual()) {
            out.put("description", schema.get("description").textValue());
        }
        return out;
    }

    private JsonNode resolvePointer(String target) {
        if (target.equals("#")) {
            return root;
        }
        if (!target.startsWith("#/")) {
            return null;
        }
        JsonNode current = root;
        for (String part : target.substring(2).split("/", -1)) {
            String key = part.replace("~1", "/").replace("~0", "~");
            if (current.isObject()) {
                current = current.get(key);
            } else if (current.isArray()) {
                try {
                    current = current.get(Integer.parseInt(key));
                } catch (NumberFormatException e) {
                    return null;
                }
            } else {
                return null;
            }
            if (current == null) {
                return null;
            }
        }
        return current;
    }

    private static String text(JsonNode schema, String key, String pointer) throws SchemaException {
        JsonNode value = schema.get(key);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual()) {
            throw new SchemaException(pointer + "/" + key, "'" + key + "' must be a string.");
        }
        return value.textValue();
    }

    private static ObjectNode typeNode(String type) {
        ObjectNode node = Json.object();
        node.put("type", type);
        return node;
    }

    private static ObjectNode anyOf(ArrayNode branches) {
        ObjectNode node = Json.object();
        node.set("anyOf", branches);
        return node;
    }

    private static boolean hasNullBranch(ArrayNode branches) {
        for (JsonNode branch : branches) {
            if (branch.equals(typeNode("null"))) {
                return true;
            }
        }
        return false;
    }

    private static void addBranch(ArrayNode branches, ObjectNode branch) {
        if (branch.has("anyOf") && branch.size() == 1) {
            branch.get("anyOf").forEach(branches::add);
        } else {
            branches.add(branch);
        }
    }

    private static String escape(String name) {
        return name.replace("~", "~0").replace("/", "~1");
    }
}
