package dev.oam.model.llama;

import static dev.oam.model.llama.grammar.Term.between;
import static dev.oam.model.llama.grammar.Term.chars;
import static dev.oam.model.llama.grammar.Term.choice;
import static dev.oam.model.llama.grammar.Term.group;
import static dev.oam.model.llama.grammar.Term.literal;
import static dev.oam.model.llama.grammar.Term.notChars;
import static dev.oam.model.llama.grammar.Term.optional;
import static dev.oam.model.llama.grammar.Term.ref;
import static dev.oam.model.llama.grammar.Term.sequence;
import static dev.oam.model.llama.grammar.Term.times;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.Term;
import dev.oam.model.llama.grammar.Term.CharClass.Span;
import dev.oam.model.llama.grammar.Term.RuleRef;
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
 * Builds grammars ({@link Grammar}, trees of {@link Term}) for JSON: rule names of {@code [a-z0-9-]}, identical bodies
 * sharing one rule, and the JSON of a generation schema with one space after each colon and comma
 * ({@link CallFormat#spaced} writes the same).
 *
 * <p>Everything is bounded so that the language of every grammar is finite and a constrained step ends on its own:
 * strings at {@code maxString} characters, arrays at {@code maxItems} (default {@value #DEFAULT_MAX_ITEMS}, never more
 * than {@value #MAX_ITEMS}), numbers at {@value #MAX_DIGITS} integer and {@value #FRACTION_DIGITS} fraction digits,
 * {@code $ref} chains at {@value #MAX_REF_DEPTH} and {@code {}} values at {@value #ANY_DEPTH} levels of nesting.
 * llama.cpp silently ignores a grammar it cannot parse (the step then runs unconstrained), so the shapes emitted here
 * are deliberately few; the tests check every one of them with their own GBNF matcher.
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
    /**
     * Between items and members: JSON as usually printed, which small models read and write more surely than compact
     * JSON.
     */
    static final Term COMMA = literal(", ");
    /** Between a key and its value. */
    static final Term COLON = literal(": ");

    private static final Term DIGIT = chars(Span.range('0', '9'));
    private static final Term FRACTION = optional(group(sequence(literal("."), between(DIGIT, 1, FRACTION_DIGITS))));

    private final int maxString;
    private final Map<String, Term> rules = new LinkedHashMap<>(); // name -> body
    private final Map<Term, String> byBody = new HashMap<>(); // body -> name
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

    /** Adds {@code root ::= body} and returns the whole grammar. */
    Grammar build(Term rootBody) {
        Map<String, Term> all = new LinkedHashMap<>();
        all.put(Grammar.ROOT, rootBody);
        all.putAll(rules);
        return Grammar.of(all);
    }

    /** A rule for {@code body} (identical bodies share one rule); returns a reference to it. */
    RuleRef rule(String hint, Term body) {
        String existing = byBody.get(body);
        if (existing != null) {
            return ref(existing);
        }
        String name = hint + "-" + counter++;
        rules.put(name, body);
        byBody.put(body, name);
        return ref(name);
    }

    /** A fixed-name rule (defined once). */
    private RuleRef named(String name, Term body) {
        rules.putIfAbsent(name, body);
        return ref(name);
    }

    /** The compact JSON text of {@code value} as a literal. */
    static Term jsonLiteral(JsonNode value) {
        return literal(Json.write(value));
    }

    // ---- shared leaves ----

    /** A JSON string of at most {@code maxString} characters (an escape counts as one). */
    RuleRef string() {
        return string(maxString);
    }

    /** A JSON string of at most {@code max} characters (and never more than {@code maxString}). */
    RuleRef string(int max) {
        return string(0, max);
    }

    /**
     * A JSON string of {@code min} to {@code max} characters (an escape counts as one), never more than
     * {@code maxString}; a {@code min} above the maximum is lowered to it.
     */
    RuleRef string(int min, int max) {
        int length = Math.max(0, Math.min(max, maxString));
        int least = Math.max(0, Math.min(min, length));
        named(
                "char",
                choice(
                        notChars(Span.of('"'), Span.of('\\'), Span.of(0x7F), Span.range(0x00, 0x1F)),
                        sequence(
                                literal("\\"),
                                group(choice(
                                        chars(
                                                Span.of('"'),
                                                Span.of('\\'),
                                                Span.of('/'),
                                                Span.of('b'),
                                                Span.of('f'),
                                                Span.of('n'),
                                                Span.of('r'),
                                                Span.of('t')),
                                        sequence(
                                                literal("u"),
                                                times(
                                                        chars(
                                                                Span.range('0', '9'),
                                                                Span.range('a', 'f'),
                                                                Span.range('A', 'F')),
                                                        4)))))));
        String name = least == 0 ? "string-" + length : "string-" + least + "-" + length;
        return named(
                name,
                length == 0
                        ? literal("\"\"")
                        : sequence(literal("\""), between(ref("char"), least, length), literal("\"")));
    }

    RuleRef bool() {
        return named("boolean", choice(literal("true"), literal("false")));
    }

    /** Any JSON value, nested at most {@link #ANY_DEPTH} levels. */
    RuleRef any() {
        return any(0);
    }

    private RuleRef any(int depth) {
        String name = "any-" + depth;
        if (rules.containsKey(name)) {
            return ref(name);
        }
        Term scalars = choice(string(), number(null, null, false), bool(), literal("null"));
        if (depth >= ANY_DEPTH) {
            return named(name, scalars);
        }
        rules.put(name, literal("")); // reserve the name so the order stays readable
        Term inner = any(depth + 1);
        Term more = repeat(sequence(COMMA, inner), 0, DEFAULT_MAX_ITEMS - 1);
        Term member = sequence(string(), COLON, inner);
        Term memberMore = repeat(sequence(COMMA, member), 0, DEFAULT_MAX_ITEMS - 1);
        rules.put(
                name,
                choice(
                        scalars,
                        sequence(literal("["), optional(group(sequence(inner, more))), literal("]")),
                        sequence(literal("{"), optional(group(sequence(member, memberMore))), literal("}"))));
        return ref(name);
    }

    /** {@code (element){lo,hi}}, or null when {@code hi} is 0. */
    private static @Nullable Term repeat(Term element, int lo, int hi) {
        if (hi <= 0) {
            return null;
        }
        return lo == hi ? times(group(element), lo) : between(group(element), lo, hi);
    }

    /**
     * A JSON number: an optional sign (none when {@code min ≥ 0}, required when {@code max < 0}), at most
     * {@link #MAX_DIGITS} integer digits without leading zeros, and for non-integers an optional fraction. No exponent.
     * A non-integer range with whole, non-negative bounds at most {@value #ENUMERATED_RANGE} apart is exact: each
     * integer part below the maximum with any fraction, or the maximum itself. Other ranges are enforced by validating
     * the output (and a retry with the same seed is likely to repeat it).
     */
    RuleRef number(@Nullable BigDecimal min, @Nullable BigDecimal max, boolean integer) {
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
            List<Term> below = new ArrayList<>();
            for (BigInteger i = lo; i.compareTo(hi) < 0; i = i.add(BigInteger.ONE)) {
                below.add(literal(i.toString()));
            }
            return rule(
                    "number-range",
                    choice(
                            sequence(group(choice(below)), FRACTION),
                            sequence(
                                    literal(hi.toString()),
                                    optional(group(
                                            sequence(literal("."), between(literal("0"), 1, FRACTION_DIGITS)))))));
        }
        Term sign = min != null && min.signum() >= 0
                ? null
                : max != null && max.signum() < 0 ? literal("-") : optional(literal("-"));
        int digits = MAX_DIGITS;
        if (min != null && max != null) {
            BigInteger bound =
                    min.abs().max(max.abs()).setScale(0, RoundingMode.CEILING).toBigInteger();
            digits = Math.min(MAX_DIGITS, Math.max(1, bound.toString().length()));
        }
        Term intPart = digits == 1
                ? DIGIT
                : group(choice(literal("0"), sequence(chars(Span.range('1', '9')), between(DIGIT, 0, digits - 1))));
        return rule(integer ? "integer" : "number", sequence(sign, intPart, integer ? null : FRACTION));
    }

    private static boolean isWhole(BigDecimal value) {
        return value.signum() == 0 || value.stripTrailingZeros().scale() <= 0;
    }

    /**
     * An integer; closed ranges are exact: small ones listed value by value, larger ones (within {@link #MAX_DIGITS}
     * digits) written digit by digit ({@link #digitRange}), so a model cannot write 12000 for a maximum of 10000 and
     * fail the turn's validation on every retry.
     */
    RuleRef integer(@Nullable BigDecimal min, @Nullable BigDecimal max) {
        if (min != null && max != null) {
            BigInteger lo = min.setScale(0, RoundingMode.CEILING).toBigInteger();
            BigInteger hi = max.setScale(0, RoundingMode.FLOOR).toBigInteger();
            if (hi.subtract(lo).compareTo(BigInteger.valueOf(ENUMERATED_RANGE)) < 0 && hi.compareTo(lo) >= 0) {
                List<Term> values = new ArrayList<>();
                for (BigInteger i = lo; i.compareTo(hi) <= 0; i = i.add(BigInteger.ONE)) {
                    values.add(literal(i.toString()));
                }
                return rule("range", choice(values));
            }
            if (hi.compareTo(lo) >= 0
                    && lo.abs().toString().length() <= MAX_DIGITS
                    && hi.abs().toString().length() <= MAX_DIGITS) {
                List<Term> parts = new ArrayList<>();
                if (lo.signum() < 0) { // the negatives: "-" and the magnitudes from |min(hi, -1)| to |lo|
                    BigInteger top = hi.min(BigInteger.ONE.negate());
                    parts.add(sequence(literal("-"), group(digitRange(top.negate(), lo.negate()))));
                }
                if (hi.signum() >= 0) {
                    parts.add(group(digitRange(lo.max(BigInteger.ZERO), hi)));
                }
                return rule("range", choice(parts));
            }
        }
        return number(min, max, true);
    }

    /** The decimal numerals (no leading zeros) of the integers from {@code lo} to {@code hi}, both ≥ 0. */
    static Term digitRange(BigInteger lo, BigInteger hi) {
        String a = lo.toString();
        String b = hi.toString();
        List<Term> byLength = new ArrayList<>();
        for (int length = a.length(); length <= b.length(); length++) {
            String from = length == a.length() ? a : length == 1 ? "0" : "1" + "0".repeat(length - 1);
            String to = length == b.length() ? b : "9".repeat(length);
            byLength.add(sameLength(from, to));
        }
        return choice(byLength);
    }

    /** The numerals of {@code from.length()} digits from {@code from} to {@code to} (same length, from ≤ to). */
    private static Term sameLength(String from, String to) {
        if (from.isEmpty() || from.equals(to)) {
            return literal(from);
        }
        char first = from.charAt(0);
        char last = to.charAt(0);
        String restFrom = from.substring(1);
        String restTo = to.substring(1);
        if (first == last) {
            return sequence(literal(String.valueOf(first)), group(sameLength(restFrom, restTo)));
        }
        int rest = restFrom.length();
        Term any = rest == 0 ? null : rest == 1 ? DIGIT : times(DIGIT, rest);
        List<Term> options = new ArrayList<>();
        options.add(sequence(
                literal(String.valueOf(first)), rest == 0 ? null : group(sameLength(restFrom, "9".repeat(rest)))));
        if (last - first > 1) {
            options.add(sequence(chars(Span.range(first + 1, last - 1)), any));
        }
        options.add(sequence(
                literal(String.valueOf(last)), rest == 0 ? null : group(sameLength("0".repeat(rest), restTo))));
        return choice(options);
    }

    /** A translator for the schema {@code root} (whose {@code $defs} its references resolve into). */
    Schema schema(ObjectNode root) {
        return new Schema(root);
    }

    /** Translates one generation schema document; rules go into the enclosing grammar. */
    final class Schema {
        private final ObjectNode root;
        private final Map<String, @Nullable Term> refs = new HashMap<>(); // "name@depth" -> expression or null

        private Schema(ObjectNode root) {
            this.root = root;
        }

        /** The expression of the root, or {@code null} when the schema has no value within the bounds. */
        @Nullable
        Term root() {
            return value(root, 0);
        }

        /** The expression matching {@code node}'s values, or {@code null} when no bounded value exists. */
        @Nullable
        Term value(JsonNode node, int depth) {
            if (!(node instanceof ObjectNode schema)) {
                return any();
            }
            if (schema.has("$ref")) {
                return ref(schema.get("$ref").asText(), depth);
            }
            JsonNode values = schema.get("enum");
            if (values != null && values.isArray()) {
                List<Term> alternatives = new ArrayList<>();
                for (JsonNode value : values) {
                    alternatives.add(jsonLiteral(value));
                }
                return alternatives.isEmpty() ? null : rule("enum", choice(alternatives));
            }
            JsonNode anyOf = schema.get("anyOf");
            if (anyOf != null && anyOf.isArray()) {
                List<Term> alternatives = new ArrayList<>();
                for (JsonNode branch : anyOf) {
                    Term expression = value(branch, depth);
                    if (expression != null && !alternatives.contains(expression)) {
                        alternatives.add(expression);
                    }
                }
                return alternatives.isEmpty()
                        ? null
                        : alternatives.size() == 1 ? alternatives.get(0) : rule("any-of", choice(alternatives));
            }
            String type = schema.path("type").asText("");
            return switch (type) {
                case "string" -> string(length(schema, "minLength", 0), length(schema, "maxLength", maxString));
                case "integer" -> integer(decimal(schema, "minimum"), decimal(schema, "maximum"));
                case "number" -> number(decimal(schema, "minimum"), decimal(schema, "maximum"), false);
                case "boolean" -> bool();
                case "null" -> literal("null");
                case "object" -> object(schema, depth);
                case "array" -> array(schema, depth);
                default -> any();
            };
        }

        private @Nullable Term ref(String ref, int depth) {
            if (depth >= MAX_REF_DEPTH || !ref.startsWith("#/$defs/")) {
                return null;
            }
            String name = ref.substring("#/$defs/".length());
            String key = name + "@" + depth;
            if (refs.containsKey(key)) {
                return refs.get(key);
            }
            JsonNode definition = root.path("$defs").get(name);
            Term expression = definition == null ? null : value(definition, depth + 1);
            refs.put(key, expression);
            return expression;
        }

        /**
         * Properties in schema order. Required ones are always present; optional ones may be left out, so
         * {@code first(i)} (nothing written yet) and {@code rest(i)} (a comma comes first) are built from the last
         * property back, one rule each.
         */
        private @Nullable Term object(ObjectNode schema, int depth) {
            List<Term> members = new ArrayList<>();
            List<Boolean> required = new ArrayList<>();
            for (Iterator<Map.Entry<String, JsonNode>> it =
                            schema.path("properties").properties().iterator();
                    it.hasNext(); ) {
                Map.Entry<String, JsonNode> property = it.next();
                boolean isRequired = SchemaWords.isRequired(schema, property.getKey());
                Term value = value(property.getValue(), depth);
                if (value == null) {
                    if (isRequired) {
                        return null;
                    }
                    continue;
                }
                members.add(sequence(
                        literal(Json.write(Json.mapper().getNodeFactory().textNode(property.getKey())) + ": "), value));
                required.add(isRequired);
            }
            if (members.isEmpty()) {
                return literal("{}");
            }
            Term first = null;
            Term rest = null;
            for (int i = members.size() - 1; i >= 0; i--) {
                Term memberRest = sequence(members.get(i), rest);
                Term withComma = sequence(COMMA, memberRest);
                Term newFirst;
                Term newRest;
                if (required.get(i)) {
                    newFirst = memberRest;
                    newRest = withComma;
                } else {
                    newFirst = first == null ? optional(group(memberRest)) : choice(memberRest, first);
                    newRest = rest == null ? optional(group(withComma)) : choice(withComma, rest);
                }
                // a required member's form is used at most once (by the object or one optional predecessor)
                first = required.get(i) ? newFirst : rule("members", newFirst);
                rest = i > 0 ? rule("more", newRest) : null;
            }
            return rule("object", sequence(literal("{"), first, literal("}")));
        }

        private @Nullable Term array(ObjectNode schema, int depth) {
            int min = schema.path("minItems").asInt(0);
            int max = schema.has("maxItems")
                    ? Math.min(schema.get("maxItems").asInt(), Math.max(min, MAX_ITEMS))
                    : Math.max(min, DEFAULT_MAX_ITEMS);
            if (max == 0) {
                return literal("[]");
            }
            Term item = value(schema.has("items") ? schema.get("items") : Json.object(), depth);
            if (item == null) {
                return min == 0 ? literal("[]") : null;
            }
            Term body = min == 0
                    ? sequence(
                            literal("["),
                            optional(group(sequence(item, repeat(sequence(COMMA, item), 0, max - 1)))),
                            literal("]"))
                    : sequence(literal("["), item, repeat(sequence(COMMA, item), min - 1, max - 1), literal("]"));
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
