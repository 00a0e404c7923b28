package dev.oam.core.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The {@code $defs} of one conversion: each local reference's target is named once, converted once (so a recursive
 * schema stays finite) and emitted under {@code #/$defs/NAME}.
 */
final class SchemaDefinitions {
    private static final String PREFIX = "#/$defs/";

    private final JsonNode root;
    private final Map<String, String> names = new HashMap<>(); // source pointer → def name
    private final Map<String, ObjectNode> defs = new LinkedHashMap<>(); // def name → converted (null while converting)

    SchemaDefinitions(JsonNode root) {
        this.root = root;
    }

    /**
     * The def name for the reference in {@code schema} at {@code pointer}, converting its target with {@code converter}
     * the first time it is referenced.
     */
    String name(JsonNode schema, String pointer, int depth, SchemaConverter converter) throws SchemaException {
        JsonNode refNode = schema.get("$ref");
        if (!refNode.isTextual() || !refNode.textValue().startsWith("#")) {
            throw new SchemaException(pointer + "/$ref", "Only local references ('#/$defs/Name') are supported.");
        }
        String target = refNode.textValue();
        JsonNode resolved = resolvePointer(target);
        if (resolved == null) {
            throw new SchemaException(pointer + "/$ref", "The reference '" + target + "' does not resolve.");
        }
        String name = names.get(target);
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
            for (int n = 2; defs.containsKey(name) || names.containsValue(name); n++) {
                name = base + n;
            }
            names.put(target, name);
            defs.put(name, null);
            ObjectNode converted = converter.node(resolved, target, depth + 1);
            defs.put(name, converted);
        }
        return name;
    }

    /** A {@code $ref} node's definition (a copy), or the node itself when it is no reference. */
    ObjectNode resolved(ObjectNode node) {
        if (node.has("$ref")) {
            ObjectNode def = defs.get(node.get("$ref").asText().substring(PREFIX.length()));
            if (def != null) {
                return def.deepCopy();
            }
        }
        return node;
    }

    /** Whether {@code node}, or the definition it refers to, is an object schema. */
    boolean isObjectSchema(ObjectNode node) {
        if (node.has("$ref")) {
            String name = node.get("$ref").asText().substring(PREFIX.length());
            ObjectNode def = defs.get(name);
            return def != null && "object".equals(def.path("type").asText());
        }
        return "object".equals(node.path("type").asText());
    }

    /** Puts the converted definitions, if any, under {@code $defs} in {@code out}. */
    void writeTo(ObjectNode out) {
        if (!defs.isEmpty()) {
            ObjectNode defsNode = out.putObject("$defs");
            defs.forEach(defsNode::set);
        }
    }

    /** A chain of references that only leads to other references never reaches a schema to generate. */
    void checkReferenceCycles() throws SchemaException {
        for (Map.Entry<String, String> def : names.entrySet()) {
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
                name = node.get("$ref").asText().substring(PREFIX.length());
            }
        }
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
}
