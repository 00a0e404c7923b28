package dev.oam.core.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.Map;

/**
 * The one JSON configuration of the project. Floats are read as exact decimals so that ids and numbers can be checked
 * without rounding; nesting and sizes are bounded so hostile input is a parse error, never a crash.
 */
public final class Json {
    /** Longest string value accepted inside a message (characters). */
    public static final int MAX_STRING_LENGTH = 128 * 1024 * 1024;
    /** Deepest nesting accepted inside a message. */
    public static final int MAX_NESTING_DEPTH = 512;

    private static final ObjectMapper MAPPER = createMapper();

    private Json() {}

    private static ObjectMapper createMapper() {
        JsonFactory factory = JsonFactory.builder()
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNestingDepth(MAX_NESTING_DEPTH)
                        .maxStringLength(MAX_STRING_LENGTH)
                        .maxNumberLength(1000)
                        .build())
                .build();
        ObjectMapper mapper = new ObjectMapper(factory);
        mapper.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
        mapper.enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);
        mapper.configure(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES, false);
        return mapper;
    }

    public static ObjectMapper mapper() {
        return MAPPER;
    }

    public static ObjectNode object() {
        return MAPPER.createObjectNode();
    }

    public static ArrayNode array() {
        return MAPPER.createArrayNode();
    }

    public static ArrayNode strings(Collection<String> values) {
        ArrayNode array = array();
        values.forEach(array::add);
        return array;
    }

    /** Parses one JSON document; throws {@link JsonProcessingException} on malformed input. */
    public static JsonNode parse(byte[] bytes, int offset, int length) throws IOException {
        return MAPPER.readTree(bytes, offset, length);
    }

    public static JsonNode parse(String text) throws JsonProcessingException {
        return MAPPER.readTree(text);
    }

    /** Compact single-line JSON text. */
    public static String write(JsonNode node) {
        try {
            return MAPPER.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** What a model sees of a JSON value: strings as their text, anything else as compact JSON. */
    public static String text(JsonNode node) {
        return node.isTextual() ? node.textValue() : write(node);
    }

    /** JSON equality where numbers compare by value ({@code 1 = 1.0}, at any depth) and objects ignore key order. */
    public static boolean sameValue(JsonNode a, JsonNode b) {
        if (a.isNumber() && b.isNumber()) {
            if (!finite(a) || !finite(b)) {
                return a.equals(b);
            }
            return a.decimalValue().compareTo(b.decimalValue()) == 0;
        }
        if (a.getNodeType() != b.getNodeType()) {
            return false;
        }
        if (a.isObject()) {
            if (a.size() != b.size()) {
                return false;
            }
            for (Map.Entry<String, JsonNode> member : a.properties()) {
                JsonNode other = b.get(member.getKey());
                if (other == null || !sameValue(member.getValue(), other)) {
                    return false;
                }
            }
            return true;
        }
        if (a.isArray()) {
            if (a.size() != b.size()) {
                return false;
            }
            for (int i = 0; i < a.size(); i++) {
                if (!sameValue(a.get(i), b.get(i))) {
                    return false;
                }
            }
            return true;
        }
        return a.equals(b);
    }

    private static boolean finite(JsonNode number) {
        return !(number.isDouble() || number.isFloat()) || Double.isFinite(number.doubleValue());
    }
}
