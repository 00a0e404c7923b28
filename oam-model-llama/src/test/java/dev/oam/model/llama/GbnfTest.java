package dev.oam.model.llama;

import static dev.oam.model.llama.Fixtures.schema;
import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.schema.GenerationSchema;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.Term;
import java.util.Collections;
import org.junit.jupiter.api.Test;

/** Every schema node kind as GBNF, checked by parsing the grammar and matching samples against it. */
class GbnfTest {
    private static GbnfChecker grammar(String schemaJson, int maxString) {
        GenerationSchema schema = schema(schemaJson);
        Gbnf gbnf = new Gbnf(maxString);
        Grammar text = gbnf.build(gbnf.schema(schema.json()).root());
        return GbnfChecker.parse(text);
    }

    private static GbnfChecker grammar(String schemaJson) {
        return grammar(schemaJson, 32);
    }

    @Test
    void objectsAreCompactInSchemaOrderWithRequiredAlwaysAndOptionalMaybe() {
        GbnfChecker g = grammar("""
                {"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"boolean"},
                 "d":{"type":"null"}},"required":["a","c"],"additionalProperties":false}""");
        assertThat(g.acceptsCompact("{\"a\":\"x\",\"c\":true}")).isTrue();
        assertThat(g.acceptsCompact("{\"a\":\"x\",\"b\":5,\"c\":false,\"d\":null}"))
                .isTrue();
        assertThat(g.acceptsCompact("{\"a\":\"\",\"c\":true,\"d\":null}")).isTrue();
        assertThat(g.acceptsCompact("{\"c\":true,\"a\":\"x\"}"))
                .as("schema order")
                .isFalse();
        assertThat(g.acceptsCompact("{\"a\":\"x\"}")).as("required c").isFalse();
        assertThat(g.acceptsCompact("{\"a\":\"x\",\"c\":true,\"e\":1}"))
                .as("extra key")
                .isFalse();
        assertThat(g.accepts("{\"a\":\"x\", \"c\": true}"))
                .as("one space after each colon and comma")
                .isFalse();
        assertThat(g.acceptsCompact("{\"a\":\"x\",,\"c\":true}")).isFalse();
    }

    @Test
    void objectsWithOnlyOptionalPropertiesNeverGetStrayCommas() {
        GbnfChecker g = grammar("""
                {"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}}}""");
        for (String ok :
                new String[] {"{}", "{\"a\":1}", "{\"b\":2}", "{\"a\":1,\"c\":3}", "{\"a\":1,\"b\":2,\"c\":3}"}) {
            assertThat(g.acceptsCompact(ok)).as(ok).isTrue();
        }
        for (String bad : new String[] {"{,}", "{,\"b\":2}", "{\"a\":1,}", "{\"b\":2,\"a\":1}", "{\"a\":1,\"a\":1}"}) {
            assertThat(g.acceptsCompact(bad)).as(bad).isFalse();
        }
        assertThat(grammar("{\"type\":\"object\",\"properties\":{}}").acceptsCompact("{}"))
                .isTrue();
    }

    @Test
    void decisionEnumsAllowOnlyTheListedValuesAndTheRange() {
        GbnfChecker g = grammar(Fixtures.DECISION);
        assertThat(g.acceptsCompact("{\"reasoning\":\"Outnumbered.\",\"choice\":\"flee\",\"confidence\":80}"))
                .isTrue();
        assertThat(g.acceptsCompact("{\"reasoning\":\"\",\"choice\":\"fight\",\"confidence\":0}"))
                .isTrue();
        assertThat(g.acceptsCompact("{\"reasoning\":\"\",\"choice\":\"fight\",\"confidence\":100}"))
                .isTrue();
        assertThat(g.acceptsCompact("{\"reasoning\":\"\",\"choice\":\"dance\",\"confidence\":80}"))
                .isFalse();
        assertThat(g.acceptsCompact("{\"reasoning\":\"\",\"choice\":\"flee\",\"confidence\":101}"))
                .isFalse();
        assertThat(g.acceptsCompact("{\"reasoning\":\"\",\"choice\":\"flee\",\"confidence\":-1}"))
                .isFalse();
        assertThat(g.acceptsCompact("{\"reasoning\":\"\",\"choice\":\"flee\",\"confidence\":07}"))
                .isFalse();
    }

    @Test
    void stringsAreBoundedAndEscapedAsJson() {
        GbnfChecker g = grammar("{\"type\":\"string\"}", 8);
        assertThat(g.acceptsCompact("\"12345678\"")).isTrue();
        assertThat(g.acceptsCompact("\"123456789\"")).isFalse();
        assertThat(g.acceptsCompact("\"a\\\"b\\n\\u00e9\"")).isTrue();
        assertThat(g.acceptsCompact("\"café 🐉\"")).isTrue();
        assertThat(g.acceptsCompact("\"a\nb\"")).as("raw control character").isFalse();
        assertThat(g.acceptsCompact("\"a\\qb\"")).as("unknown escape").isFalse();
        assertThat(g.acceptsCompact("\"open")).as("unterminated").isFalse();
    }

    @Test
    void aMinLengthTheGameLayerAddsIsHeldToAndNeverExceedsTheMaximum() throws Exception {
        // The schema converter only describes minLength in a client's schema; the game layer adds one to its own
        // schemas after conversion (a decision's reason), so the grammar reads it from the generation schema as is.
        Gbnf gbnf = new Gbnf(8);
        GbnfChecker g = GbnfChecker.parse(
                gbnf.build(gbnf.schema((com.fasterxml.jackson.databind.node.ObjectNode) dev.oam.core.json.Json.parse(
                                "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"minLength\":3},"
                                        + "\"b\":{\"type\":\"string\",\"minLength\":50}},\"required\":[\"a\",\"b\"],"
                                        + "\"additionalProperties\":false}"))
                        .root()));
        assertThat(g.acceptsCompact("{\"a\":\"abc\",\"b\":\"12345678\"}")).isTrue();
        assertThat(g.acceptsCompact("{\"a\":\"ab\",\"b\":\"12345678\"}"))
                .as("under the minimum")
                .isFalse();
        assertThat(g.acceptsCompact("{\"a\":\"a\\\"c\",\"b\":\"12345678\"}"))
                .as("an escape counts as one")
                .isTrue();
        assertThat(g.acceptsCompact("{\"a\":\"abc\",\"b\":\"1234567\"}"))
                .as("a minimum above maxString is lowered to it")
                .isFalse();
    }

    @Test
    void numbersHaveBoundedDigitsNoExponentAndRespectSigns() {
        GbnfChecker integer = grammar("{\"type\":\"integer\"}");
        assertThat(integer.acceptsCompact("-12")).isTrue();
        assertThat(integer.acceptsCompact("0")).isTrue();
        assertThat(integer.acceptsCompact("01")).isFalse();
        assertThat(integer.acceptsCompact("1.5")).isFalse();
        assertThat(integer.acceptsCompact("1e5")).isFalse();
        assertThat(integer.acceptsCompact("1".repeat(Gbnf.MAX_DIGITS))).isTrue();
        assertThat(integer.acceptsCompact("1".repeat(Gbnf.MAX_DIGITS + 1))).isFalse();
        GbnfChecker number = grammar("{\"type\":\"number\",\"minimum\":0}");
        assertThat(number.acceptsCompact("3.25")).isTrue();
        assertThat(number.acceptsCompact("7")).isTrue();
        assertThat(number.acceptsCompact("-0.5")).as("minimum 0: no sign").isFalse();
        assertThat(number.acceptsCompact("1.")).isFalse();
        assertThat(number.acceptsCompact(".5")).isFalse();
        assertThat(grammar("{\"type\":\"integer\",\"maximum\":-1}").acceptsCompact("5"))
                .as("maximum < 0: sign required")
                .isFalse();
        GbnfChecker wide = grammar("{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000}");
        assertThat(wide.acceptsCompact("99999")).isTrue();
        assertThat(wide.acceptsCompact("100000")).isTrue();
        assertThat(wide.acceptsCompact("100001")).as("above the maximum").isFalse();
        assertThat(wide.acceptsCompact("1000000")).isFalse();
    }

    /** An integer range of any size accepts exactly its own values: a wide one (a maximum of 10000) as well. */
    @Test
    void integerRangesOfAnySizeAreExact() {
        java.util.SplittableRandom random = new java.util.SplittableRandom(7);
        long[][] ranges = {
            {0, 10000},
            {1, 999},
            {0, 300},
            {250, 1000},
            {-5000, 5000},
            {-300, -20},
            {37, 88888},
            {1000, 1000000},
            {-1000000, -999},
            {0, 999_999_999_999_999L}
        };
        for (long[] range : ranges) {
            long lo = range[0];
            long hi = range[1];
            GbnfChecker g = grammar("{\"type\":\"integer\",\"minimum\":" + lo + ",\"maximum\":" + hi + "}");
            java.util.List<Long> probes = new java.util.ArrayList<>(java.util.List.of(
                    lo, hi, lo - 1, hi + 1, 0L, -1L, 1L, 9L, 10L, 99L, 100L, 999L, 1000L, 9999L, 10000L, 10001L, 12000L,
                    -12000L));
            for (int i = 0; i < 300; i++) {
                probes.add(lo + random.nextLong(Math.max(1, hi - lo + 1)));
                probes.add(random.nextLong(-2_000_000, 2_000_000));
            }
            for (long value : probes) {
                assertThat(g.acceptsCompact(Long.toString(value)))
                        .as("%d in [%d, %d]", value, lo, hi)
                        .isEqualTo(value >= lo && value <= hi);
            }
            assertThat(g.acceptsCompact("0" + hi)).as("leading zero").isFalse();
            assertThat(g.acceptsCompact("-0")).isFalse();
        }
    }

    @Test
    void smallWholeNumberRangesAreExact() {
        GbnfChecker range = grammar("{\"type\":\"number\",\"minimum\":2,\"maximum\":30}");
        assertThat(range.acceptsCompact("2")).isTrue();
        assertThat(range.acceptsCompact("29.999")).isTrue();
        assertThat(range.acceptsCompact("30")).isTrue();
        assertThat(range.acceptsCompact("30.00")).isTrue();
        assertThat(range.acceptsCompact("30.5")).as("above the maximum").isFalse();
        assertThat(range.acceptsCompact("88.85")).isFalse();
        assertThat(range.acceptsCompact("1.9")).as("below the minimum").isFalse();
        assertThat(range.acceptsCompact("02")).isFalse();
        assertThat(grammar("{\"type\":\"number\",\"minimum\":-1,\"maximum\":1}").acceptsCompact("-0.5"))
                .as("other ranges: digits only")
                .isTrue();
    }

    @Test
    void arraysRespectMinAndMaxItemsWithADefaultBound() {
        GbnfChecker g = grammar("{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":1,\"maxItems\":3}");
        assertThat(g.acceptsCompact("[]")).isFalse();
        assertThat(g.acceptsCompact("[1]")).isTrue();
        assertThat(g.acceptsCompact("[1,2,3]")).isTrue();
        assertThat(g.acceptsCompact("[1,2,3,4]")).isFalse();
        assertThat(g.acceptsCompact("[1,]")).isFalse();
        GbnfChecker unbounded = grammar("{\"type\":\"array\",\"items\":{\"type\":\"boolean\"}}");
        String eight = "[" + String.join(",", Collections.nCopies(Gbnf.DEFAULT_MAX_ITEMS, "true")) + "]";
        String nine = "[" + String.join(",", Collections.nCopies(Gbnf.DEFAULT_MAX_ITEMS + 1, "true")) + "]";
        assertThat(unbounded.acceptsCompact("[]")).isTrue();
        assertThat(unbounded.acceptsCompact(eight)).isTrue();
        assertThat(unbounded.acceptsCompact(nine)).isFalse();
        GbnfChecker none = grammar("{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"maxItems\":0}");
        assertThat(none.acceptsCompact("[]")).isTrue();
        assertThat(none.acceptsCompact("[1]")).isFalse();
    }

    @Test
    void anyOfAndNullableAcceptEachBranch() {
        GbnfChecker g = grammar("{\"type\":[\"string\",\"null\"]}");
        assertThat(g.acceptsCompact("\"x\"")).isTrue();
        assertThat(g.acceptsCompact("null")).isTrue();
        assertThat(g.acceptsCompact("1")).isFalse();
        GbnfChecker mixed = grammar(
                "{\"anyOf\":[{\"type\":\"integer\"},{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"boolean\"}},\"required\":[\"x\"]}]}");
        assertThat(mixed.acceptsCompact("5")).isTrue();
        assertThat(mixed.acceptsCompact("{\"x\":false}")).isTrue();
        assertThat(mixed.acceptsCompact("{}")).isFalse();
    }

    @Test
    void recursiveReferencesAreUnrolledToABoundedDepth() {
        GbnfChecker g = grammar("""
                {"$defs":{"Node":{"type":"object","properties":{"name":{"type":"string"},
                  "children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["name"]}},
                 "$ref":"#/$defs/Node"}""");
        assertThat(g.acceptsCompact("{\"name\":\"a\"}")).isTrue();
        assertThat(
                        g.acceptsCompact(
                                "{\"name\":\"a\",\"children\":[{\"name\":\"b\",\"children\":[{\"name\":\"c\"}]},{\"name\":\"d\"}]}"))
                .isTrue();
        assertThat(g.acceptsCompact("{\"name\":\"a\",\"children\":[{\"nom\":\"b\"}]}"))
                .isFalse();
        String deep = "{\"name\":\"x\"}";
        for (int i = 0; i < Gbnf.MAX_REF_DEPTH + 2; i++) {
            deep = "{\"name\":\"x\",\"children\":[" + deep + "]}";
        }
        assertThat(g.acceptsCompact(deep)).as("deeper than the bound").isFalse();
    }

    @Test
    void anythingIsAnyJsonValueNestedAFewLevels() {
        GbnfChecker g = grammar("{\"type\":\"object\",\"properties\":{\"extra\":{}},\"required\":[\"extra\"]}");
        assertThat(g.acceptsCompact("{\"extra\":null}")).isTrue();
        assertThat(g.acceptsCompact("{\"extra\":{\"k\":[1,\"two\",true]}}")).isTrue();
        assertThat(g.acceptsCompact("{\"extra\":[[[[1]]]]}"))
                .as("deeper than " + Gbnf.ANY_DEPTH)
                .isFalse();
        assertThat(g.acceptsCompact("{\"extra\":undefined}")).isFalse();
    }

    @Test
    void enumLiteralsWithQuotesBackslashesAndNonAsciiAreEscapedForGbnf() {
        String schemaJson =
                "{\"type\":\"string\",\"enum\":[\"say \\\"hi\\\"\",\"back\\\\slash\",\"café\",\"🐉\",\"two\\nlines\"]}";
        Gbnf gbnf = new Gbnf(16);
        String text = gbnf.build(gbnf.schema(schema(schemaJson).json()).root()).gbnf();
        assertThat(text)
                .contains("caf\\xE9")
                .contains("\\U0001F409")
                .doesNotContain("é")
                .doesNotContain("🐉");
        GbnfChecker g = GbnfChecker.parse(text);
        assertThat(g.acceptsCompact("\"say \\\"hi\\\"\"")).isTrue();
        assertThat(g.acceptsCompact("\"back\\\\slash\"")).isTrue();
        assertThat(g.acceptsCompact("\"café\"")).isTrue();
        assertThat(g.acceptsCompact("\"🐉\"")).isTrue();
        assertThat(g.acceptsCompact("\"two\\nlines\"")).isTrue();
        assertThat(g.acceptsCompact("\"cafe\"")).isFalse();
    }

    @Test
    void literalEscapesEveryCharacterGbnfCouldMisread() {
        assertThat(Term.literal("a\"b\\c\n\u0001é\u20AC").gbnf()).isEqualTo("\"a\\\"b\\\\c\\x0A\\x01\\xE9\\u20AC\"");
    }

    @Test
    void theCheckerRefusesWhatLlamaCppWouldNotParse() {
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> GbnfChecker.parse("root ::= missing\n")))
                .hasMessageContaining("undefined");
        assertThat(org.assertj.core.api.Assertions.catchThrowable(
                        () -> GbnfChecker.parse("root ::= a_b\na_b ::= \"x\"\n")))
                .isNotNull();
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> GbnfChecker.parse("root ::= \"\\q\"\n")))
                .hasMessageContaining("escape");
        assertThat(org.assertj.core.api.Assertions.catchThrowable(() -> GbnfChecker.parse("item ::= \"x\"\n")))
                .hasMessageContaining("root");
        assertThat(GbnfChecker.parse("root ::= \"a\" [b-d]{1,2} (\"x\" | \"y\")?\n")
                        .acceptsCompact("acdx"))
                .isTrue();
    }
}
