package dev.oam.core.schema;

import static dev.oam.core.testing.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import dev.oam.core.json.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Checking values against a generation schema ({@code firstViolation}) and putting their keys in schema order
 * ({@code reorder}). Schemas go through the converter first, as in the agent.
 */
class SchemaValidatorTest {
    private static GenerationSchema schema(String schema) {
        try {
            return GenerationSchema.convert(json(schema), "T");
        } catch (SchemaException e) {
            throw new AssertionError(e.schemaPath() + ": " + e.getMessage(), e);
        }
    }

    /** The first violation, or "ok". */
    private static String check(String schema, String value) {
        return schema(schema).firstViolation(json(value)).orElse("ok");
    }

    private static String reorder(String schema, String value) {
        return Json.write(schema(schema).reorder(json(value)));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            3                          | ok
            -7                         | ok
            3.0                        | ok
            3.000                      | ok
            1e2                        | ok
            1.5e1                      | ok
            -0                         | ok
            300000000000000000000000   | ok
            3.5                        | #: expected an integer but got the number 3.5
            1.5e-1                     | #: expected an integer but got the number 0.15
            0.1e1                      | ok
            "3"                        | #: expected an integer but got a string
            true                       | #: expected an integer but got true
            null                       | #: expected an integer but got null
            []                         | #: expected an integer but got an array
            {}                         | #: expected an integer but got an object
            """)
    void integerIsAnyNumberWithoutAFraction(String value, String expected) {
        assertThat(check("{\"type\": \"integer\"}", value)).isEqualTo(expected);
    }

    @Test
    void integerFromADoubleValueIsJudgedByItsValue() {
        GenerationSchema integer = schema("{\"type\": \"integer\"}");

        assertThat(integer.firstViolation(DoubleNode.valueOf(3.0))).isEmpty();
        assertThat(integer.firstViolation(DoubleNode.valueOf(3.25)))
                .contains("#: expected an integer but got the number 3.25");
        assertThat(integer.firstViolation(DoubleNode.valueOf(Double.POSITIVE_INFINITY)))
                .isPresent();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            3      | ok
            3.5    | ok
            -1e-9  | ok
            "3.5"  | #: expected a number but got a string
            false  | #: expected a number but got false
            """)
    void numberIsAnyNumber(String value, String expected) {
        assertThat(check("{\"type\": \"number\"}", value)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"type": "integer", "minimum": 1, "maximum": 10}    | 1     | ok
            {"type": "integer", "minimum": 1, "maximum": 10}    | 10    | ok
            {"type": "integer", "minimum": 1, "maximum": 10}    | 10.0  | ok
            {"type": "integer", "minimum": 1, "maximum": 10}    | 0     | #: 0 is less than the minimum 1
            {"type": "integer", "minimum": 1, "maximum": 10}    | 11    | #: 11 is greater than the maximum 10
            {"type": "integer", "minimum": 1, "maximum": 10}    | 5.5   | #: expected an integer but got the number 5.5
            {"type": "number", "minimum": 0.5, "maximum": 1.5}  | 0.50  | ok
            {"type": "number", "minimum": 0.5, "maximum": 1.5}  | 1.500 | ok
            {"type": "number", "minimum": 0.5, "maximum": 1.5}  | 0.49  | #: 0.49 is less than the minimum 0.5
            {"type": "number", "minimum": 0.5, "maximum": 1.5}  | 1.51  | #: 1.51 is greater than the maximum 1.5
            {"type": "number", "minimum": -1e3}                 | -1000 | ok
            {"type": "number", "minimum": -1e3}                 | -1001 | #: -1001 is less than the minimum -1E+3
            {"type": "integer", "maximum": 9007199254740993}    | 9007199254740994 | #: 9007199254740994 is greater than the maximum 9007199254740993
            """)
    void boundsAreInclusiveAndCompareExactDecimals(String schema, String value, String expected) {
        assertThat(check(schema, value)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"enum": [1, 2]}                         | 1.0      | ok
            {"enum": [1, 2]}                         | 2.00     | ok
            {"enum": [1, 2]}                         | 2e0      | ok
            {"enum": [1, 2]}                         | 3        | #: 3 is not one of [1,2]
            {"enum": [1, 2]}                         | "1"      | #: expected an integer but got a string
            {"type": "number", "enum": [1.5, 2]}     | 1.50     | ok
            {"type": "number", "enum": [1.5, 2]}     | 2.1      | #: 2.1 is not one of [1.5,2]
            {"enum": [1, "a", null]}                 | 1.0      | ok
            {"enum": [1, "a", null]}                 | null     | ok
            {"enum": [1, "a", null]}                 | "A"      | #: "A" is not one of [1,"a",null]
            {"enum": [1, "a", null]}                 | true     | #: true is not one of [1,"a",null]
            {"enum": [{"a": 1}, [1, 2]]}             | {"a": 1} | ok
            {"enum": [{"a": 1}, [1, 2]]}             | [1, 2]   | ok
            {"enum": [{"a": 1}, [1, 2]]}             | [2, 1]   | #: [2,1] is not one of [{"a":1},[1,2]]
            {"const": "x"}                           | "x"      | ok
            {"const": "x"}                           | "x "     | #: "x " is not one of ["x"]
            """)
    void enumComparesNumbersByValueAndEverythingElseExactly(String schema, String value, String expected) {
        assertThat(check(schema, value)).isEqualTo(expected);
    }

    @Test
    void enumComparesNestedNumbersByValueToo() {
        assertThat(check("{\"enum\": [{\"a\": 1}]}", "{\"a\": 1.0}")).isEqualTo("ok");
        assertThat(check("{\"enum\": [[1, 2]]}", "[1.0, 2]")).isEqualTo("ok");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            "x"   | ok
            7     | ok
            5     | ok
            3     | #: matches none of the allowed alternatives (#: expected a string but got the number 3)
            true  | #: matches none of the allowed alternatives (#: expected a string but got true)
            null  | #: matches none of the allowed alternatives (#: expected a string but got null)
            """)
    void anyOfTakesTheFirstBranchThatMatchesAndReportsTheFirstBranchOtherwise(String value, String expected) {
        assertThat(check("{\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"integer\", \"minimum\": 5}]}", value))
                .isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"type": ["string", "null"]}         | null | ok
            {"type": "string", "nullable": true} | null | ok
            {"type": "string", "nullable": true} | "s"  | ok
            {"type": "string"}                   | null | #: expected a string but got null
            {"type": "null"}                     | null | ok
            {"type": "null"}                     | 0    | #: expected a null but got the number 0
            """)
    void nullIsAllowedOnlyWhereTheSchemaSaysSo(String schema, String value, String expected) {
        assertThat(check(schema, value)).isEqualTo(expected);
    }

    private static final String OBJECT = """
            {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"},
                                              "c/d~e": {"type": "boolean"}},
             "required": ["a", "b"]}""";

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"a": "x", "b": 1}                         | ok
            {"b": 1, "a": "x", "extra": [1]}           | ok
            {"a": "x"}                                 | #: missing required property 'b'
            {}                                         | #: missing required property 'a'
            {"b": "1"}                                 | #: missing required property 'a'
            {"a": null, "b": 1}                        | #/a: expected a string but got null
            {"b": "1", "a": 2}                         | #/b: expected an integer but got a string
            {"a": "x", "b": 1, "c/d~e": "yes"}         | #/c~1d~0e: expected a boolean but got a string
            []                                         | #: expected an object but got an array
            """)
    void objectChecksRequiredFirstThenPropertiesInTheValuesOrder(String value, String expected) {
        assertThat(check(OBJECT, value)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"a": "x"}                       | ok
            {}                               | ok
            {"a": "x", "b": 1}               | #/b: unknown property 'b'
            {"z/1": 1, "a": 2}               | #/z~11: unknown property 'z/1'
            """)
    void closedObjectRejectsUnknownProperties(String value, String expected) {
        assertThat(check(
                        "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}, \"additionalProperties\": false}",
                        value))
                .isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            [1]            | ok
            [1, 2]         | ok
            []             | #: expected at least 1 items but got 0
            [1, 2, 3]      | #: expected at most 2 items but got 3
            [1, "x"]       | #/1: expected an integer but got a string
            ["x", 1, 2]    | #: expected at most 2 items but got 3
            {}             | #: expected an array but got an object
            """)
    void arrayChecksItsLengthBeforeItsItems(String value, String expected) {
        assertThat(check(
                        "{\"type\": \"array\", \"items\": {\"type\": \"integer\"}, \"minItems\": 1, \"maxItems\": 2}",
                        value))
                .isEqualTo(expected);
    }

    private static final String TREE = """
            {"$ref": "#/$defs/Node",
             "$defs": {"Node": {"type": "object",
                                "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                                "required": ["v"]}}}""";

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"v": 1}                                                | ok
            {"kids": [{"v": 2, "kids": [{"v": 3}]}], "v": 1}        | ok
            {"v": 1, "kids": [{"v": 2, "kids": [{"v": "x"}]}]}      | #/kids/0/kids/0/v: expected an integer but got a string
            {"v": 1, "kids": [{"kids": []}]}                        | #/kids/0: missing required property 'v'
            {"v": 1, "kids": {"v": 2}}                              | #/kids: expected an array but got an object
            """)
    void refsAreResolvedAtEveryDepth(String value, String expected) {
        assertThat(check(TREE, value)).isEqualTo(expected);
    }

    @Test
    void refThroughAnotherRefAndADefinitionsRefResolve() {
        String schema = """
                {"type": "object", "properties": {"a": {"$ref": "#/definitions/A"}},
                 "definitions": {"A": {"$ref": "#/definitions/B"}, "B": {"type": "string", "enum": ["x"]}}}""";

        assertThat(check(schema, "{\"a\": \"x\"}")).isEqualTo("ok");
        assertThat(check(schema, "{\"a\": \"y\"}")).isEqualTo("#/a: \"y\" is not one of [\"x\"]");
    }

    @Test
    void valueNestedDeeperThanTheValidatorGoesIsAViolationNotACrash() {
        GenerationSchema lists = schema(
                "{\"$ref\": \"#/$defs/L\", \"$defs\": {\"L\": {\"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/L\"}}}}");
        ArrayNode root = Json.array();
        ArrayNode current = root;
        for (int i = 0; i < 1000; i++) {
            current = current.addArray();
        }

        assertThat(lists.firstViolation(root)).hasValueSatisfying(violation -> {
            assertThat(violation).startsWith("#/0/0/0/").endsWith(": the value is nested too deeply");
        });
    }

    @Test
    void emptySchemaAcceptsAnything() {
        for (String value : new String[] {"1", "\"s\"", "null", "[1, {}]", "{\"a\": {}}"}) {
            assertThat(check("{}", value)).isEqualTo("ok");
        }
    }

    // ---- reorder ----

    @Test
    void reorderPutsKeysInSchemaOrderAtEveryDepthAndKeepsUnknownKeysAtTheEndInTheirOrder() {
        String schema = """
                {"type": "object", "properties": {
                   "z": {"type": "object", "properties": {"b": {"type": "string"}, "a": {"type": "string"}}},
                   "y": {"type": "array", "items": {"type": "object", "properties": {"q": {"type": "integer"}, "p": {"type": "integer"}}}}}}""";

        assertThat(
                        reorder(
                                schema,
                                "{\"extra2\": 2, \"y\": [{\"p\": 1, \"r\": 3, \"q\": 2}, {}], \"extra1\": 1, \"z\": {\"a\": \"1\", \"b\": \"2\"}}"))
                .isEqualTo(
                        "{\"z\":{\"b\":\"2\",\"a\":\"1\"},\"y\":[{\"q\":2,\"p\":1,\"r\":3},{}],\"extra2\":2,\"extra1\":1}");
    }

    @Test
    void reorderFollowsRefsAndTheMatchingAnyOfBranch() {
        assertThat(reorder(TREE, "{\"kids\": [{\"kids\": [], \"v\": 2}], \"v\": 1}"))
                .isEqualTo("{\"v\":1,\"kids\":[{\"v\":2,\"kids\":[]}]}");
        String alternatives = """
                {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                            "required": ["a"], "additionalProperties": false},
                           {"type": "object", "properties": {"d": {"type": "string"}, "c": {"type": "string"}}}]}""";
        assertThat(reorder(alternatives, "{\"b\": \"1\", \"a\": \"2\"}")).isEqualTo("{\"a\":\"2\",\"b\":\"1\"}");
        assertThat(reorder(alternatives, "{\"c\": \"1\", \"d\": \"2\"}")).isEqualTo("{\"d\":\"2\",\"c\":\"1\"}");
        assertThat(reorder(alternatives, "{\"c\": \"1\", \"d\": 2}")).isEqualTo("{\"c\":\"1\",\"d\":2}");
    }

    @Test
    void reorderLeavesScalarsAndItsInputAlone() {
        GenerationSchema schema = schema("{\"type\": \"object\", \"properties\": {\"a\": {}, \"b\": {}}}");
        JsonNode value = json("{\"b\": 1.50, \"a\": [3, \"x\"]}");
        JsonNode before = value.deepCopy();

        JsonNode ordered = schema.reorder(value);

        assertThat(Json.write(ordered)).isEqualTo("{\"a\":[3,\"x\"],\"b\":1.50}");
        assertThat(Json.write(value)).isEqualTo(Json.write(before));
        assertThat(Json.write(schema.reorder(json("\"s\"")))).isEqualTo("\"s\"");
    }
}
