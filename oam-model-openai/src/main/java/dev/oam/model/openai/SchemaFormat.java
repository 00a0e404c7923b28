package dev.oam.model.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * The ways OpenAI-compatible servers take a JSON Schema that constrains the answer. Servers differ, and some accept a
 * way they do not honour: llama-server b4748 answers {@code response_format: json_schema} with 200 and ignores it,
 * while it honours its own {@code json_object} + {@code schema} and a top-level {@code json_schema}. So an endpoint's
 * way is never assumed: {@link Endpoint} tries them in {@link #CANDIDATES} order and keeps the first whose output
 * validated against the schema sent.
 */
enum SchemaFormat {
    /** OpenAI's own: {@code "response_format": {"type": "json_schema", "json_schema": {"name", "schema"}}}. */
    RESPONSE_FORMAT("response_format json_schema"),
    /** llama.cpp's: {@code "response_format": {"type": "json_object", "schema": …}}. */
    JSON_OBJECT_SCHEMA("response_format json_object + schema"),
    /** llama.cpp's top-level {@code "json_schema": …}. */
    TOP_LEVEL_JSON_SCHEMA("top-level json_schema"),
    /** vLLM's {@code "guided_json": …}. */
    GUIDED_JSON("guided_json"),
    /** Ollama's {@code "format": …}. */
    OLLAMA_FORMAT("format");

    /** The order in which an endpoint's way is looked for: the standard first. */
    static final List<SchemaFormat> CANDIDATES = List.of(values());

    private final String label;

    SchemaFormat(String label) {
        this.label = label;
    }

    /** How logs and messages name it. */
    String label() {
        return label;
    }

    /** Puts {@code schema} (named {@code name} where the format has names) into {@code body}. */
    void apply(ObjectNode body, String name, JsonNode schema) {
        switch (this) {
            case RESPONSE_FORMAT -> {
                ObjectNode format = body.putObject("response_format");
                format.put("type", "json_schema");
                ObjectNode jsonSchema = format.putObject("json_schema");
                jsonSchema.put("name", name);
                jsonSchema.set("schema", schema);
            }
            case JSON_OBJECT_SCHEMA -> {
                ObjectNode format = body.putObject("response_format");
                format.put("type", "json_object");
                format.set("schema", schema);
            }
            case TOP_LEVEL_JSON_SCHEMA -> body.set("json_schema", schema);
            case GUIDED_JSON -> body.set("guided_json", schema);
            case OLLAMA_FORMAT -> body.set("format", schema);
        }
    }
}
