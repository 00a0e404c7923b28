package dev.oam.model.llama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.model.llama.prompt.CallFormat;
import dev.oam.model.llama.prompt.SchemaWords;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Writes GBNF grammars for llama.cpp: one rule per line, rule names of {@code [a-z0-9-]}, literals with
 * every non-printable or non-ASCII code point escaped, and the JSON of a generation schema with one space after
 * each colon and comma ({@link CallFormat#spaced} writes the same).
 *
 * <p>Everything is bounded so that the language of every grammar is finite and a constrained step
 * ends on its own: strings at {@code maxString} characters, arrays at {@code maxItems} (default
 * {@value #DEFAULT_MAX_ITEMS}, never more than {@value #MAX_ITEMS}), numbers at {@value #MAX_DIGITS}
 * integer and {@value #FRACTION_DIGITS} fraction digits, {@code $ref} chains at {@value #MAX_REF_DEPTH}
 * and {@code {}} values at {@value #ANY_DEPTH} levels of nesting. llama.cpp silently ignores a grammar
 * it cannot parse (LLAMA-JAVA.md §6.5), so the shapes emitted here are deliberately few; the tests
 * check every one of them with their own GBNF matcher.
 *
 * <p>Not thread-safe: one instance builds one grammar.
 */
final class Gbnf {
    static final int DEFAULT_MAX_ITEMS = 8;
    static final int MAX_ITEMS = 32;
    static final int MAX_DIGITS = 15;
    static final int FRACTION_DIGITS = 6;
    static final int MAX_REF_DEPTH = 6;
    static final int ANY_DEPTH = 3;
    /** Integer ranges up to this many values are listed value by value, so the grammar enforces them exactly. */
    static final int ENUMERATED_RANGE = 256;
    /** Between items and members: JSON as usually printed, which small models read and write more surely than compact JSON. */
    static final String COMMA = "\", \"";
    /** Between a key and its value. */
    static final String COLON = "\": \"";

    private final int maxString;
    private final Map<String, String> rules = new LinkedHashMap<>(); // name -> body
    private final Map<String, String> byBody = new HashMap<>(); // body -> name
    private int counter;

    Gbnf(int maxString) {
        if (maxString < 1) {
            throw new IllegalArgumentException("maxString must be at least 1");
        }
        this.maxString = maxString;
    }

    int maxString() {
        return maxString;
    }

    /** Adds {@code root ::= body} and returns the whole grammar text. */
    String build(String rootBody) {
        StringBuilder out = new StringBuilder("root ::= ").append(rootBody).append('\n');
        rules.forEach(
                (name, body) -> out.append(name).append(" ::= ").append(body).append('\n'));
        return out.toString();
    }

    /** A rule for {@code body} (identical bodies share one rule); returns its name. */
    String rule(String hint, String body) {
        String existing = byBody.get(body);
        if (existing != null) {
            return existing;
        }
        String name = hint + "-" + counter++;
        rules.put(name, body);
        byBody.put(body, name);
        return name;
    }

    /** A fixed-name rule (defined once). */
    private String named(String name, String body) {
        rules.putIfAbsent(name, body);
        return name;
    }

    /** {@code text} as a GBNF string literal. */
    static String literal(String text) {
        StringBuilder out = new StringBuilder("\"");
        text.codePoints().forEach(cp -> {
            switch (cp) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (cp >= 0x20 && cp < 0x7F) {
                        out.appendCodePoint(cp);
                    } else if (cp < 0x100) {
                        out.append(String.format("\\x%02X", cp));
                    } else if (cp < 0x10000) {
                        out.append(String.format("\\u%04X", cp));
                    } else {
                        out.append(String.format("\\U%08X", cp));
                    }
                }
            }
        });
        return out.append('"').toString();
    }

    /** The compact JSON text of {@code value} as a literal. */
    static String jsonLiteral(JsonNode value) {
        return literal(Json.write(value));
    }

    // ---- shared leaves ----

    /** A JSON string of at most {@code maxString} characters (an escape counts as one). */
    String string() {
        return string(maxString);
    }

    /** A JSON string of at most {@code max} characters (and never more than {@code maxString}). */
    String string(int max) {
        return string(0, max);
    }

    /**
     * A JSON string of {@code min} to {@code max} characters (an escape counts as one), never more than
     * {@code maxString}; a {@code min} above the maximum is lowered to it.
     */
    String string(int min, int max) {
        int length = Math.max(0, Math.min(max, maxString));
        int least = Math.max(0, Math.min(min, length));
        named("char", "[^\"\\\\\\x7F\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4})");
        String name = least == 0 ? "string-" + length : "string-" + least + "-" + length;
        return named(name, length == 0 ? "\"\\\"\\\"\"" : "\"\\\"\" char{" + least + "," + length + "} \"\\\"\"");
    }

    String bool() {
        return named("boolean", "\"true\" | \"false\"");
    }

    /** Any JSON value, nested at most {@link #ANY_DEPTH} levels. */
    String any() {
        return any(0);
    }

    private String any(int depth) {
        String name = "any-" + depth;
        if (rules.containsKey(name)) {
            return name;
        }
        String scalars = string() + " | " + number(null, null, false) + " | " + bool() + " | \"null\"";
        if (depth >= ANY_DEPTH) {
            return named(name, scalars);
        }
        rules.put(name, ""); // reserve the name so the order stays readable
        String inner = any(depth + 1);
        String more = repeat(COMMA + " " + inner, 0, DEFAULT_MAX_ITEMS - 1);
        String member = string() + " " + COLON + " " + inner;
        String memberMore = repeat(COMMA + " " + member, 0, DEFAULT_MAX_ITEMS - 1);
        rules.put(
                name, scalars + " | \"[\" (" + inner + more + ")? \"]\" | \"{\" (" + member + memberMore + ")? \"}\"");
        return name;
    }

    /** {@code (element){lo,hi}} with a leading space, or "" when {@code hi} is 0. */
    private static String repeat(String element, int lo, int hi) {
        if (hi <= 0) {
            return "";
        }
        return " (" + element + ")" + (lo == hi ? "{" + lo + "}" : "{" + lo + "," + hi + "}");
    }

    /**
     * A JSON number: an optional sign (none when {@code min ≥ 0}, required when {@code max < 0}), at most
     * {@link #MAX_DIGITS} integer digits without leading zeros, and for non-integers an optional fraction.
     * No exponent. A non-integer range with whole, non-negative bounds at most {@value #ENUMERATED_RANGE}
     * apart is exact: each integer part below the maximum with any fraction, or the maximum itself. Other
     * ranges are enforced by validating the output (and a retry with the same seed is likely to repeat it).
     */
    String number(@Nullable BigDecimal min, @Nullable BigDecimal max, boolean integer) {
        if (!integer
                && min != null
                && max != null
                && min.signum() >= 0
                && isWhole(min)
                && isWhole(max)
                && max.compareTo(min) > 0
                && max.subtract(min).compareTo(BigDecimal.valueOf(ENUMERATED_RANGE)) <= 0) {
            BigInteger lo = min.toBigIntegerExact();
            BigInteger hi = max.toBigIntegerExact();
            List<String> below = new ArrayList<>();
            for (BigInteger i = lo; i.compareTo(hi) < 0; i = i.add(BigInteger.ONE)) {
                below.add(literal(i.toString()));
            }
            String fraction = "(\".\" [0-9]{1," + FRACTION_DIGITS + "})?";
            return rule(
                    "number-range",
                    "(" + String.join(" | ", below) + ") " + fraction + " | " + literal(hi.toString())
                            + " (\".\" \"0\"{1," + FRACTION_DIGITS + "})?");
        }
        String sign = min != null && min.signum() >= 0 ? "" : max != null && max.signum() < 0 ? "\"-\" " : "\"-\"? ";
        int digits = MAX_DIGITS;
        if (min != null && max != null) {
            BigInteger bound =
                    min.abs().max(max.abs()).setScale(0, RoundingMode.CEILING).toBigInteger();
            digits = Math.min(MAX_DIGITS, Math.max(1, bound.toString().length()));
        }
        String intPart = digits == 1 ? "[0-9]" : "(\"0\" | [1-9] [0-9]{0," + (digits - 1) + "})";
        String body = (sign + intPart + (integer ? "" : " (\".\" [0-9]{1," + FRACTION_DIGITS + "})?")).strip();
        return rule(integer ? "integer" : "number", body);
    }

    private static boolean isWhole(BigDecimal value) {
        return value.signum() == 0 || value.stripTrailingZeros().scale() <= 0;
    }

    /**
     * An integer; closed ranges are exact: small ones listed value by value, larger ones (within
     * {@link #MAX_DIGITS} digits) written digit by digit ({@link #digitRange}), so a model cannot write 12000 for a
     * maximum of 10000 and fail the turn's validation on every retry.
     */
    String integer(@Nullable BigDecimal min, @Nullable BigDecimal max) {
        if (min != null && max != null) {
            BigInteger lo = min.setScale(0, RoundingMode.CEILING).toBigInteger();
            BigInteger hi = max.setScale(0, RoundingMode.FLOOR).toBigInteger();
            if (hi.subtract(lo).compareTo(BigInteger.valueOf(ENUMERATED_RANGE)) < 0 && hi.compareTo(lo) >= 0) {
                List<String> values = new ArrayList<>();
                for (BigInteger i = lo; i.compareTo(hi) <= 0; i = i.add(BigInteger.ONE)) {
                    values.add(literal(i.toString()));
                }
                return rule("range", String.join(" | ", values));
            }
            if (hi.compareTo(lo) >= 0
                    && lo.abs().toString().length() <= MAX_DIGITS
                    && hi.abs().toString().length() <= MAX_DIGITS) {
                List<String> parts = new ArrayList<>();
                if (lo.signum() < 0) { // the negatives: "-" and the magnitudes from |min(hi, -1)| to |lo|
                    BigInteger top = hi.min(BigInteger.ONE.negate());
                    parts.add("\"-\" (" + digitRange(top.negate(), lo.negate()) + ")");
                }
                if (hi.signum() >= 0) {
                    parts.add("(" + digitRange(lo.max(BigInteger.ZERO), hi) + ")");
                }
                return rule("range", String.join(" | ", parts));
            }
        }
        return number(min, max, true);
    }

    /** The decimal numerals (no leading zeros) of the integers from {@code lo} to {@code hi}, both ≥ 0, as GBNF. */
    static String digitRange(BigInteger lo, BigInteger hi) {
        String a = lo.toString();
        String b = hi.toString();
        List<String> byLength = new ArrayList<>();
        for (int length = a.length(); length <= b.length(); length++) {
            String from = length == a.length() ? a : length == 1 ? "0" : "1" + "0".repeat(length - 1);
            String to = length == b.length() ? b : "9".repeat(length);
            byLength.add(sameLength(from, to));
        }
        return String.join(" | ", byLength);
    }

    /** The numerals of {@code from.length()} digits from {@code from} to {@code to} (same length, from ≤ to). */
    private static String sameLength(String from, String to) {
        if (from.isEmpty()) {
            return "\"\"";
        }
        if (from.equals(to)) {
            return "\"" + from + "\"";
        }
        char first = from.charAt(0);
        char last = to.charAt(0);
        String restFrom = from.substring(1);
        String restTo = to.substring(1);
        if (first == last) {
            return "\"" + first + "\" (" + sameLength(restFrom, restTo) + ")";
        }
        int rest = restFrom.length();
        String any = rest == 0 ? "" : rest == 1 ? " [0-9]" : " [0-9]{" + rest + "}";
        List<String> options = new ArrayList<>();
        options.add("\"" + first + "\"" + (rest == 0 ? "" : " (" + sameLength(restFrom, "9".repeat(rest)) + ")"));
        if (last - first > 1) {
            options.add("[" + (char) (first + 1) + "-" + (char) (last - 1) + "]" + any);
        }
        options.add("\"" + last + "\"" + (rest == 0 ? "" : " (" + sameLength("0".repeat(rest), restTo) + ")"));
        return String.join(" | ", options);
    }

    /** A translator for the schema {@code root} (whose {@code $defs} its references resolve into). */
    Schema schema(ObjectNode root) {
        return new Schema(root);
    }

    /** Translates one generation schema document; rules go into the enclosing grammar. */
    final class Schema {
        private final ObjectNode root;
        private final Map<String, @Nullable String> refs = new HashMap<>(); // "name@depth" -> expression or null

        private Schema(ObjectNode root) {
            this.root = root;
        }

        /** The expression of the root, or {@code null} when the schema has no value within the bounds. */
        @Nullable
        String root() {
            return value(root, 0);
        }

        /** The expression matching {@code node}'s values, or {@code null} when no bounded value exists. */
        @Nullable
        String value(JsonNode node, int depth) {
            if (!(node instanceof ObjectNode schema)) {
                return any();
            }
            if (schema.has("$ref")) {
                return ref(schema.get("$ref").asText(), depth);
            }
            JsonNode values = schema.get("enum");
            if (values != null && values.isArray()) {
                List<String> alternatives = new ArrayList<>();
                for (JsonNode value : values) {
                    alternatives.add(jsonLiteral(value));
                }
                return alternatives.isEmpty() ? null : rule("enum", String.join(" | ", alternatives));
            }
            JsonNode anyOf = schema.get("anyOf");
            if (anyOf != null && anyOf.isArray()) {
                List<String> alternatives = new ArrayList<>();
                for (JsonNode branch : anyOf) {
                    String expression = value(branch, depth);
                    if (expression != null && !alternatives.contains(expression)) {
                        alternatives.add(expression);
                    }
                }
                return alternatives.isEmpty()
                        ? null
                        : alternatives.size() == 1
                                ? alternatives.get(0)
                                : rule("any-of", String.join(" | ", alternatives));
            }
            String type = schema.path("type").asText("");
            return switch (type) {
                case "string" -> string(length(schema, "minLength", 0), length(schema, "maxLength", maxString));
                case "integer" -> integer(decimal(schema, "minimum"), decimal(schema, "maximum"));
                case "number" -> number(decimal(schema, "minimum"), decimal(schema, "maximum"), false);
                case "boolean" -> bool();
                case "null" -> "\"null\"";
                case "object" -> object(schema, depth);
                case "array" -> array(schema, depth);
                default -> any();
            };
        }

        private @Nullable String ref(String ref, int depth) {
            if (depth >= MAX_REF_DEPTH || !ref.startsWith("#/$defs/")) {
                return null;
            }
            String name = ref.substring("#/$defs/".length());
            String key = name + "@" + depth;
            if (refs.containsKey(key)) {
                return refs.get(key);
            }
            JsonNode definition = root.path("$defs").get(name);
            String expression = definition == null ? null : value(definition, depth + 1);
            refs.put(key, expression);
            return expression;
        }

        /**
         * Properties in schema order. Required ones are always present; optional ones may be
         * left out, so {@code first(i)} (nothing written yet) and {@code rest(i)} (a comma comes first)
         * are built from the last property back, one rule each.
         */
        private @Nullable String object(ObjectNode schema, int depth) {
            List<String> members = new ArrayList<>();
            List<Boolean> required = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> it =
                            schema.path("properties").properties().iterator();
                    it.hasNext(); ) {
                Map.Entry<String, JsonNode> property = it.next();
                boolean isRequired = SchemaWords.isRequired(schema, property.getKey());
                String value = value(property.getValue(), depth);
                if (value == null) {
                    if (isRequired) {
                        return null;
                    }
                    continue;
                }
                members.add(literal(Json.write(Json.mapper().getNodeFactory().textNode(property.getKey())) + ": ") + " "
                        + value);
                required.add(isRequired);
            }
            if (members.isEmpty()) {
                return literal("{}");
            }
            String first = "";
            String rest = "";
            for (int i = members.size() - 1; i >= 0; i--) {
                String member = members.get(i);
                String restAfter = rest.isEmpty() ? "" : " " + rest;
                String withComma = COMMA + " " + member + restAfter;
                String newFirst;
                String newRest;
                if (required.get(i)) {
                    newFirst = member + restAfter;
                    newRest = withComma;
                } else {
                    newFirst = first.isEmpty() ? "(" + member + restAfter + ")?" : member + restAfter + " | " + first;
                    newRest = rest.isEmpty() ? "(" + withComma + ")?" : withComma + " | " + rest;
                }
                // a required member's form is used at most once (by the object or one optional predecessor)
                first = required.get(i) ? newFirst : rule("members", newFirst);
                rest = i > 0 ? rule("more", newRest) : "";
            }
            return rule("object", "\"{\" " + first + " \"}\"");
        }

        private @Nullable String array(ObjectNode schema, int depth) {
            int min = schema.path("minItems").asInt(0);
            int max = schema.has("maxItems")
                    ? Math.min(schema.get("maxItems").asInt(), Math.max(min, MAX_ITEMS))
                    : Math.max(min, DEFAULT_MAX_ITEMS);
            if (max == 0) {
                return literal("[]");
            }
            String item = value(schema.has("items") ? schema.get("items") : Json.object(), depth);
            if (item == null) {
                return min == 0 ? literal("[]") : null;
            }
            String body = min == 0
                    ? "\"[\" (" + item + repeat(COMMA + " " + item, 0, max - 1) + ")? \"]\""
                    : "\"[\" " + item + repeat(COMMA + " " + item, min - 1, max - 1) + " \"]\"";
            return rule("array", body);
        }
    }

    /** A string length keyword's value, {@code otherwise} when it is absent, negative or not a whole number. */
    private static int length(ObjectNode schema, String field, int otherwise) {
        JsonNode value = schema.get(field);
        return value != null && value.canConvertToInt() && value.isIntegralNumber() && value.asInt() >= 0
                ? value.asInt()
                : otherwise;
    }

    private static @Nullable BigDecimal decimal(ObjectNode schema, String field) {
        JsonNode value = schema.get(field);
        return value != null && value.isNumber() ? value.decimalValue() : null;
    }
}
