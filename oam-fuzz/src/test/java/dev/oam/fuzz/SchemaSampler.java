package dev.oam.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Builds a random value that the generation schema's grammar allows (docs/PROTOCOL.md, "Structured output and the
 * generation schema"): one alternative of an {@code anyOf}, one member of an {@code enum}, a number within
 * {@code minimum}/{@code maximum}, an array within {@code minItems}/{@code maxItems}, an object with its required
 * properties and some optional ones. The value is written as JSON text and parsed back, as a model's answer is. Returns
 * {@code null} when the grammar cannot produce a value within the sampler's depth and size (a recursion that does not
 * bottom out quickly, or an empty range) — that is not what this sampler checks.
 */
final class SchemaSampler {
    private static final int MAX_DEPTH = 24;
    /**
     * Values per sample. Without it a recursive schema whose arrays need several items ({@code minItems: 5} of the
     * schema itself) makes the sample grow exponentially with the depth: fuzzing found that as an out-of-memory in the
     * harness (seed crash-sampler-exponential-recursion).
     */
    private static final int MAX_VALUES = 2_000;

    private static final String[] STRINGS = {"", "a", "Gorm", "ünïcödé", "line\nbreak", "quote\"", "\\", "😀", " x "};

    private final ObjectNode root;
    private final Random random;
    private int values;

    SchemaSampler(ObjectNode root, Random random) {
        this.root = root;
        this.random = random;
    }

    @Nullable
    JsonNode sample() {
        StringBuilder out = new StringBuilder();
        try {
            write(root, out, 0);
        } catch (Unproducible e) {
            return null;
        }
        try {
            return Json.parse(out.toString());
        } catch (Exception e) {
            throw new AssertionError("the sampler wrote JSON that does not parse: " + out, e);
        }
    }

    // Package-private with a package-private constructor: a private nested class is reached through a nestmate
    // access check, and HotSpot 25 crashes in that check on classes Jazzer has instrumented (docs/RELIABILITY.md).
    static final class Unproducible extends RuntimeException {
        Unproducible() {
            super(null, null, false, false);
        }
    }

    private ObjectNode resolve(ObjectNode schema) {
        ObjectNode current = schema;
        for (int i = 0; i < 32 && current.has("$ref"); i++) {
            String ref = current.get("$ref").asText();
            JsonNode def =
                    ref.startsWith("#/$defs/") ? root.path("$defs").get(ref.substring("#/$defs/".length())) : null;
            if (!(def instanceof ObjectNode next)) {
                throw new AssertionError("the generation schema has the dangling reference " + ref + ": " + root);
            }
            current = next;
        }
        if (current.has("$ref")) {
            throw new Unproducible();
        }
        return current;
    }

    private void write(ObjectNode raw, StringBuilder out, int depth) {
        if (depth > MAX_DEPTH || ++values > MAX_VALUES) {
            throw new Unproducible();
        }
        ObjectNode schema = resolve(raw);
        JsonNode anyOf = schema.get("anyOf");
        if (anyOf != null) {
            if (!anyOf.isArray() || anyOf.isEmpty()) {
                throw new AssertionError("an empty or malformed anyOf in a generation schema: " + root);
            }
            // Try the branches from a random one on, so a branch that cannot bottom out does not doom the sample.
            int start = random.nextInt(anyOf.size());
            for (int i = 0; i < anyOf.size(); i++) {
                int mark = out.length();
                try {
                    write((ObjectNode) anyOf.get((start + i) % anyOf.size()), out, depth + 1);
                    return;
                } catch (Unproducible e) {
                    out.setLength(mark);
                }
            }
            throw new Unproducible();
        }
        JsonNode values = schema.get("enum");
        if (values != null) {
            if (values.isEmpty()) {
                throw new AssertionError("an empty enum in a generation schema: " + root);
            }
            out.append(Json.write(values.get(random.nextInt(values.size()))));
            return;
        }
        String type = schema.path("type").asText("");
        switch (type) {
            case "object" -> object(schema, out, depth);
            case "array" -> array(schema, out, depth);
            case "string" ->
                out.append(Json.write(Json.mapper().getNodeFactory().textNode(string())));
            case "integer" -> out.append(integer(schema));
            case "number" -> out.append(number(schema));
            case "boolean" -> out.append(random.nextBoolean());
            case "null" -> out.append("null");
            case "" -> anything(out);
            default -> throw new AssertionError("the unknown type '" + type + "' in a generation schema: " + root);
        }
    }

    private void object(ObjectNode schema, StringBuilder out, int depth) {
        JsonNode properties = schema.path("properties");
        Set<String> required = new HashSet<>();
        schema.path("required").forEach(name -> required.add(name.asText()));
        List<String> names = new ArrayList<>();
        for (Iterator<String> it = properties.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            if (required.contains(name) || random.nextBoolean()) {
                names.add(name);
            }
        }
        List<String> members = new ArrayList<>();
        for (String name : names) {
            StringBuilder member = new StringBuilder();
            member.append(Json.write(Json.mapper().getNodeFactory().textNode(name)))
                    .append(':');
            try {
                write((ObjectNode) properties.get(name), member, depth + 1);
            } catch (Unproducible e) {
                if (required.contains(name)) {
                    throw e;
                }
                continue;
            }
            members.add(member.toString());
        }
        out.append('{').append(String.join(",", members));
        boolean first = members.isEmpty();
        if (!schema.path("additionalProperties").isBoolean() && random.nextInt(4) == 0) {
            String extra = "extra" + random.nextInt(1000);
            if (!properties.has(extra)) {
                out.append(first ? "" : ",").append('"').append(extra).append("\":");
                anything(out);
            }
        }
        out.append('}');
    }

    private void array(ObjectNode schema, StringBuilder out, int depth) {
        long min = schema.has("minItems") ? schema.get("minItems").asLong() : 0;
        long max = schema.has("maxItems") ? schema.get("maxItems").asLong() : min + 3;
        if (min > 64 || max < min) {
            throw new Unproducible();
        }
        long count = min + random.nextInt((int) Math.min(max - min, 3) + 1);
        JsonNode items = schema.get("items");
        out.append('[');
        for (long i = 0; i < count; i++) {
            if (i > 0) {
                out.append(',');
            }
            if (items instanceof ObjectNode itemSchema) {
                write(itemSchema, out, depth + 1);
            } else {
                anything(out);
            }
        }
        out.append(']');
    }

    private String integer(ObjectNode schema) {
        BigDecimal min = schema.has("minimum") ? schema.get("minimum").decimalValue() : null;
        BigDecimal max = schema.has("maximum") ? schema.get("maximum").decimalValue() : null;
        BigInteger lo =
                min == null ? null : min.setScale(0, RoundingMode.CEILING).toBigIntegerExact();
        BigInteger hi = max == null ? null : max.setScale(0, RoundingMode.FLOOR).toBigIntegerExact();
        if (lo == null && hi == null) {
            lo = BigInteger.valueOf(-1000);
            hi = BigInteger.valueOf(1000);
        } else if (lo == null) {
            lo = hi.subtract(BigInteger.valueOf(1000));
        } else if (hi == null) {
            hi = lo.add(BigInteger.valueOf(1000));
        }
        if (lo.compareTo(hi) > 0) {
            throw new Unproducible();
        }
        BigInteger span = hi.subtract(lo);
        BigInteger pick = switch (random.nextInt(3)) {
            case 0 -> lo;
            case 1 -> hi;
            default -> lo.add(new BigInteger(span.bitLength() + 8, random).mod(span.add(BigInteger.ONE)));
        };
        return pick.toString();
    }

    private String number(ObjectNode schema) {
        BigDecimal min = schema.has("minimum") ? schema.get("minimum").decimalValue() : null;
        BigDecimal max = schema.has("maximum") ? schema.get("maximum").decimalValue() : null;
        if (min == null && max == null) {
            return BigDecimal.valueOf(random.nextInt(200_001) - 100_000, 2).toPlainString();
        }
        if (min == null) {
            min = max.subtract(BigDecimal.valueOf(1000));
        } else if (max == null) {
            max = min.add(BigDecimal.valueOf(1000));
        }
        if (min.compareTo(max) > 0) {
            throw new Unproducible();
        }
        BigDecimal pick = switch (random.nextInt(3)) {
            case 0 -> min;
            case 1 -> max;
            default -> min.add(max.subtract(min).multiply(BigDecimal.valueOf(random.nextInt(1001), 3)));
        };
        return pick.toString();
    }

    private String string() {
        return STRINGS[random.nextInt(STRINGS.length)];
    }

    private void anything(StringBuilder out) {
        switch (random.nextInt(6)) {
            case 0 -> out.append("null");
            case 1 -> out.append(random.nextBoolean());
            case 2 -> out.append(random.nextInt(100) - 50);
            case 3 -> out.append(Json.write(Json.mapper().getNodeFactory().textNode(string())));
            case 4 -> out.append("[]");
            default -> out.append("{}");
        }
    }
}
