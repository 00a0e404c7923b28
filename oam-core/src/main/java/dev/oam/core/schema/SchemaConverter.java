package dev.oam.core.schema;

import static dev.oam.core.schema.SchemaKeywords.ANNOTATIONS;
import static dev.oam.core.schema.SchemaKeywords.TYPES;
import static dev.oam.core.schema.SchemaKeywords.UNENFORCED;
import static dev.oam.core.schema.SchemaKeywords.count;
import static dev.oam.core.schema.SchemaKeywords.enumValues;
import static dev.oam.core.schema.SchemaKeywords.escape;
import static dev.oam.core.schema.SchemaKeywords.inRange;
import static dev.oam.core.schema.SchemaKeywords.inferTypes;
import static dev.oam.core.schema.SchemaKeywords.known;
import static dev.oam.core.schema.SchemaKeywords.nullable;
import static dev.oam.core.schema.SchemaKeywords.range;
import static dev.oam.core.schema.SchemaKeywords.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** JSON Schema → generation schema. One converter for tools, structured turns and game methods. */
final class SchemaConverter {
    private static final int MAX_DEPTH = 64;

    private final String subject;
    private final SchemaDefinitions definitions;
    private final Set<String> warnings = new LinkedHashSet<>();
    /**
     * Object and array nodes with an {@code enum}, with their source pointers: checked against the whole result at the
     * end.
     */
    private final List<Map.Entry<ObjectNode, String>> structuredEnums = new ArrayList<>();
    /**
     * Set while converting the top object of an {@code allOf} part: its {@code required} may name another part's
     * properties.
     */
    private boolean deferRequired;

    private SchemaConverter(JsonNode root, String subject) {
        this.subject = subject;
        this.definitions = new SchemaDefinitions(root);
    }

    static GenerationSchema convert(JsonNode schema, String subject, boolean objectRoot) throws SchemaException {
        SchemaConverter converter = new SchemaConverter(schema, subject);
        ObjectNode out = converter.node(schema, "#", 0);
        if (objectRoot && !converter.definitions.isObjectSchema(out)) {
            throw new SchemaException("#", "Tool parameters must be an object schema (\"type\": \"object\").");
        }
        converter.definitions.writeTo(out);
        converter.definitions.checkReferenceCycles();
        converter.checkStructuredEnums(out);
        return new GenerationSchema(out, List.copyOf(converter.warnings));
    }

    /**
     * An object or array {@code enum}/{@code const} value that breaks the node's own {@code properties}, {@code items}
     * or counts would be offered by the grammar (which emits enum values literally) and then refused by the validator.
     * Such values are dropped with a warning, and a node left without one is refused. This runs on the finished schema
     * because the node may refer to {@code $defs} that were still being converted when it was made.
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

    /** Converts {@code schema}, found at {@code pointer}, {@code depth} levels below the root. */
    ObjectNode node(JsonNode schema, String pointer, int depth) throws SchemaException {
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

    private ObjectNode ref(JsonNode schema, String pointer, int depth) throws SchemaException {
        String name = definitions.name(schema, pointer, depth, this);
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
            pieces.add(definitions.resolved(node(parts.get(i), pointer + "/allOf/" + i, depth + 1)));
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
}
