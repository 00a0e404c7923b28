package dev.oam.core.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Optional;

/**
 * The schema a model generates from: a closed, normalized subset of JSON Schema (documented in docs/PROTOCOL.md). It is
 * what {@code schema/validate} and {@code tools/validate} return, what the validator checks answers and tool arguments
 * against, and what grammar builders walk.
 *
 * @param json the normalized schema
 * @param warnings constraints that are described to the model but not enforced, and ignored keywords
 */
public record GenerationSchema(ObjectNode json, List<String> warnings) {
    public GenerationSchema {
        json = json.deepCopy();
        warnings = List.copyOf(warnings);
    }

    /** Converts a JSON Schema; {@code subject} prefixes the warnings (a tool name, or the schema's name). */
    public static GenerationSchema convert(JsonNode schema, String subject) throws SchemaException {
        return SchemaConverter.convert(schema, subject, false);
    }

    /** Converts a tool's parameters schema, whose root must be an object. */
    public static GenerationSchema convertParameters(JsonNode schema, String subject) throws SchemaException {
        return SchemaConverter.convert(schema, subject, true);
    }

    /** The first way {@code value} violates this schema, as {@code #/pointer: message}. */
    public Optional<String> firstViolation(JsonNode value) {
        return SchemaValidator.firstViolation(json, value);
    }

    /**
     * {@code value} without the members that objects closed by {@code additionalProperties: false} do not define
     * (recursively); everything else is kept as it is, so the result may still break the schema in other ways.
     */
    public JsonNode withoutUnknownKeys(JsonNode value) {
        return SchemaValidator.withoutUnknownKeys(json, json, value, 0);
    }

    /**
     * {@code value} with object keys in schema property order (recursively); unknown keys keep their place at the end.
     */
    public JsonNode reorder(JsonNode value) {
        return SchemaValidator.reorder(json, json, value);
    }
}
