package dev.oam.core.schema;

import static dev.oam.core.testing.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * JSON Schema → generation schema (docs/PROTOCOL.md, "Structured output and the generation schema"). Expected schemas
 * are compared as compact JSON, so key order matters.
 */
class SchemaConverterTest {
    private static GenerationSchema convert(String schema) throws SchemaException {
        return GenerationSchema.convert(json(schema), "T");
    }

    /** The generation schema as compact JSON. */
    private static String generated(String schema) throws SchemaException {
        return Json.write(convert(schema).json());
    }

    private static String compact(String json) {
        return Json.write(json(json));
    }

    private static SchemaException failure(String schema) {
        SchemaException error = catchThrowableOfType(SchemaException.class, () -> convert(schema));
        assertThat(error).as("converting %s", schema).isNotNull();
        return error;
    }

    // ---- objects, arrays, scalars ----

    @Test
    void objectKeepsPropertiesInDocumentOrderWithRequiredAndClosedness() throws Exception {
        assertThat(generated("""
                {"type": "object", "title": "Decision", "$comment": "c",
                 "properties": {"z": {"type": "string"}, "a": {"type": "integer", "minimum": 0, "maximum": 10},
                                "m": {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 3}},
                 "required": ["a", "z", "a"], "additionalProperties": false}""")).isEqualTo(compact("""
                        {"type": "object",
                         "properties": {"z": {"type": "string"}, "a": {"type": "integer", "minimum": 0, "maximum": 10},
                                        "m": {"type": "array", "items": {"type": "boolean"}, "minItems": 1, "maxItems": 3}},
                         "required": ["a", "z"], "additionalProperties": false}"""));
    }

    @Test
    void openObjectHasAnEmptyRequiredListAndNoAdditionalPropertiesKey() throws Exception {
        assertThat(generated("{\"type\": \"object\", \"additionalProperties\": true}"))
                .isEqualTo("{\"type\":\"object\",\"properties\":{},\"required\":[]}");
    }

    @Test
    void arrayWithoutItemsTakesAnything() throws Exception {
        assertThat(generated("{\"type\": \"array\"}")).isEqualTo("{\"type\":\"array\",\"items\":{}}");
        assertThat(generated("{\"type\": \"array\", \"items\": true}")).isEqualTo("{\"type\":\"array\",\"items\":{}}");
        assertThat(generated("{\"type\": \"array\", \"minItems\": 2.0}"))
                .isEqualTo("{\"type\":\"array\",\"items\":{},\"minItems\":2}");
    }

    @Test
    void trueAndEmptySchemaTakeAnything() throws Exception {
        assertThat(Json.write(GenerationSchema.convert(json("true"), "T").json()))
                .isEqualTo("{}");
        assertThat(generated("{}")).isEqualTo("{}");
        assertThat(generated("{\"description\": \"anything\"}")).isEqualTo("{\"description\":\"anything\"}");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"properties": {"a": {}}}       | {"type":"object","properties":{"a":{}},"required":[]}
            {"required": []}                | {"type":"object","properties":{},"required":[]}
            {"items": {"type": "string"}}   | {"type":"array","items":{"type":"string"}}
            {"maxItems": 2}                 | {"type":"array","items":{},"maxItems":2}
            {"minimum": 1}                  | {"type":"number","minimum":1}
            {"enum": ["a", "b"]}            | {"type":"string","enum":["a","b"]}
            {"enum": [1, 2]}                | {"type":"integer","enum":[1,2]}
            {"enum": [1.5, 2.5]}            | {"type":"number","enum":[1.5,2.5]}
            {"enum": [true]}                | {"type":"boolean","enum":[true]}
            {"enum": [1, 2.5]}              | {"enum":[1,2.5]}
            {"enum": [1, "a", null]}        | {"enum":[1,"a",null]}
            {"const": "x"}                  | {"type":"string","enum":["x"]}
            {"const": 3}                    | {"type":"integer","enum":[3]}
            {"const": 3.5}                  | {"type":"number","enum":[3.5]}
            {"const": null}                 | {"type":"null"}
            {"const": {"a": 1}}             | {"enum":[{"a":1}]}
            {"const": [1]}                  | {"enum":[[1]]}
            """)
    void missingTypeIsInferredFromTheKeywords(String schema, String expected) throws Exception {
        assertThat(generated(schema)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"type": "string", "const": "a", "enum": ["b"]}                | {"type":"string","enum":["a"]}
            {"type": "integer", "enum": [1, 2.0, 2.5, "x"]}               | {"type":"integer","enum":[1,2.0]}
            {"type": "number", "enum": [1, 2.5, "x"]}                     | {"type":"number","enum":[1,2.5]}
            {"type": ["string", "integer"], "enum": ["a", 1, true]}       | {"anyOf":[{"type":"string","enum":["a"]},{"type":"integer","enum":[1]}]}
            {"type": ["string", "null"], "enum": ["a"]}                   | {"anyOf":[{"type":"string","enum":["a"]},{"type":"null"}]}
            {"type": "null", "enum": [null]}                              | {"type":"null"}
            """)
    void enumAndConstKeepOnlyTheValuesOfEachType(String schema, String expected) throws Exception {
        assertThat(generated(schema)).isEqualTo(expected);
    }

    // ---- nullable, anyOf, oneOf ----

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"type": ["string", "null"]}                    | {"anyOf":[{"type":"string"},{"type":"null"}]}
            {"type": "string", "nullable": true}            | {"anyOf":[{"type":"string"},{"type":"null"}]}
            {"type": ["string", "null"], "nullable": true}  | {"anyOf":[{"type":"string"},{"type":"null"}]}
            {"type": ["null", "string"]}                    | {"anyOf":[{"type":"null"},{"type":"string"}]}
            {"type": "null", "nullable": true}              | {"type":"null"}
            {"type": "string", "nullable": false}           | {"type":"string"}
            {"type": "string", "nullable": "yes"}           | {"type":"string"}
            {"enum": ["a"], "nullable": true}               | {"anyOf":[{"type":"string","enum":["a"]},{"type":"null"}]}
            {"type": ["string", "string"]}                  | {"type":"string"}
            """)
    void nullableIsWrittenEitherWayAndMeansTheSame(String schema, String expected) throws Exception {
        assertThat(generated(schema)).isEqualTo(expected);
    }

    @Test
    void nullableObjectKeepsItsShapeInTheObjectBranch() throws Exception {
        assertThat(generated("""
                {"type": "object", "nullable": true, "properties": {"a": {"type": "string"}}, "required": ["a"]}""")).isEqualTo(compact("""
                        {"anyOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                                   {"type": "null"}]}"""));
    }

    @Test
    void typeArrayAppliesTheSharedKeywordsToEveryBranch() throws Exception {
        assertThat(generated("{\"type\": [\"integer\", \"number\"], \"minimum\": 0, \"description\": \"n\"}"))
                .isEqualTo(compact("""
                        {"description": "n", "anyOf": [{"type": "integer", "minimum": 0}, {"type": "number", "minimum": 0}]}"""));
    }

    @Test
    void nestedAlternativesAreFlattenedAndASingleOneIsUnwrapped() throws Exception {
        assertThat(generated("""
                {"oneOf": [{"type": "string"}, {"anyOf": [{"type": "integer"}, {"type": ["boolean", "null"]}]}]}""")).isEqualTo(compact("""
                        {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {"type": "null"}]}"""));
        assertThat(generated("{\"anyOf\": [{\"type\": \"string\"}]}")).isEqualTo("{\"type\":\"string\"}");
        assertThat(generated("{\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"integer\"}], \"nullable\": true}"))
                .isEqualTo(compact(
                        "{\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"integer\"}, {\"type\": \"null\"}]}"));
    }

    @Test
    void nullableAnyOfThatAlreadyAllowsNullGetsNoSecondNullBranch() throws Exception {
        assertThat(generated("{\"anyOf\": [{\"type\": \"string\"}, {\"type\": \"null\"}], \"nullable\": true}"))
                .isEqualTo("{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]}");
    }

    // ---- allOf ----

    @Test
    void allOfMergesObjectPartsInOrder() throws Exception {
        assertThat(generated("""
                {"description": "Merged",
                 "allOf": [{"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                           {"properties": {"b": {"type": "integer"}}, "required": ["b"], "additionalProperties": false},
                           {"$ref": "#/$defs/Base"}],
                 "properties": {"own": {"type": "boolean"}}, "required": ["own"],
                 "$defs": {"Base": {"type": "object", "properties": {"c": {"type": "null"}}, "required": ["c"]}}}""")).isEqualTo(compact("""
                        {"type": "object", "description": "Merged",
                         "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {"type": "null"},
                                        "own": {"type": "boolean"}},
                         "required": ["a", "b", "c", "own"], "additionalProperties": false,
                         "$defs": {"Base": {"type": "object", "properties": {"c": {"type": "null"}}, "required": ["c"]}}}"""));
    }

    @Test
    void allOfKeepsTheWarningsOfItsParts() throws Exception {
        GenerationSchema schema = convert("""
                {"allOf": [{"type": "object", "properties": {"a": {"type": "string", "pattern": "x"}}}]}""");

        assertThat(schema.warnings())
                .containsExactly("T: #/allOf/0/properties/a: pattern 'x' is described to the model but not enforced");
        assertThat(Json.write(schema.json())).isEqualTo(compact("""
                {"type": "object", "properties": {"a": {"type": "string", "description": "(pattern: x)"}}, "required": []}"""));
    }

    @Test
    void allOfRequiredMayNameAPropertyOfAnotherPart() throws Exception {
        String expected = compact(
                "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}, \"required\": [\"a\"]}");

        assertThat(generated("""
                {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}], "required": ["a"]}""")).isEqualTo(expected);
        assertThat(generated("""
                {"allOf": [{"type": "object", "properties": {"a": {"type": "string"}}}, {"required": ["a"]}]}""")).isEqualTo(expected);
    }

    // ---- $ref ----

    @Test
    void refsIntoDefsAndDefinitionsBecomeDefsOfTheGenerationSchema() throws Exception {
        assertThat(generated("""
                {"type": "object",
                 "properties": {"a": {"$ref": "#/definitions/Mood"}, "b": {"$ref": "#/definitions/Mood", "description": "B"},
                                "c": {"$ref": "#/$defs/Mood"}},
                 "definitions": {"Mood": {"enum": ["calm", "angry"]}, "Unused": {"type": "string"}},
                 "$defs": {"Mood": {"type": "integer"}}}""")).isEqualTo(compact("""
                        {"type": "object",
                         "properties": {"a": {"$ref": "#/$defs/Mood"}, "b": {"$ref": "#/$defs/Mood", "description": "B"},
                                        "c": {"$ref": "#/$defs/Mood2"}},
                         "required": [],
                         "$defs": {"Mood": {"type": "string", "enum": ["calm", "angry"]}, "Mood2": {"type": "integer"}}}"""));
    }

    @Test
    void recursiveDefinitionIsKeptAsARecursiveRef() throws Exception {
        assertThat(generated("""
                {"$ref": "#/$defs/Node",
                 "$defs": {"Node": {"type": "object",
                                    "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                                    "required": ["v"]}}}""")).isEqualTo(compact("""
                        {"$ref": "#/$defs/Node",
                         "$defs": {"Node": {"type": "object",
                                            "properties": {"v": {"type": "integer"},
                                                           "kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                                            "required": ["v"]}}}"""));
    }

    @Test
    void mutuallyRecursiveDefinitionsAreBothKept() throws Exception {
        assertThat(generated("""
                {"$ref": "#/$defs/A",
                 "$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                           "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}}}}""")).isEqualTo(compact("""
                        {"$ref": "#/$defs/A",
                         "$defs": {"A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}, "required": []},
                                   "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "required": []}}}"""));
    }

    @Test
    void refToTheRootBecomesARootDef() throws Exception {
        assertThat(generated("""
                {"type": "object", "properties": {"name": {"type": "string"}, "next": {"$ref": "#"}}}""")).isEqualTo(compact("""
                        {"type": "object", "properties": {"name": {"type": "string"}, "next": {"$ref": "#/$defs/Root"}},
                         "required": [],
                         "$defs": {"Root": {"type": "object",
                                            "properties": {"name": {"type": "string"}, "next": {"$ref": "#/$defs/Root"}},
                                            "required": []}}}"""));
    }

    @Test
    void refMayPointAnywhereInTheDocumentWithEscapedSegments() throws Exception {
        assertThat(generated("""
                {"type": "object", "properties": {"a": {"$ref": "#/properties/b"}, "b": {"type": "string"},
                                                  "c": {"$ref": "#/$defs/x~1y~0z/properties/n"}},
                 "$defs": {"x/y~z": {"type": "object", "properties": {"n": {"type": "integer"}}}}}""")).isEqualTo(compact("""
                        {"type": "object", "properties": {"a": {"$ref": "#/$defs/b"}, "b": {"type": "string"},
                                                          "c": {"$ref": "#/$defs/n"}},
                         "required": [], "$defs": {"b": {"type": "string"}, "n": {"type": "integer"}}}"""));
    }

    @Test
    void refToADefinitionWithASlashInItsNameIsAValidPointer() throws Exception {
        assertThat(generated("{\"$ref\": \"#/$defs/a~1b\", \"$defs\": {\"a/b\": {\"type\": \"string\"}}}"))
                .isEqualTo(compact("{\"$ref\": \"#/$defs/a_b\", \"$defs\": {\"a_b\": {\"type\": \"string\"}}}"));
    }

    @Test
    void keywordsBesideARefAreNotDroppedSilently() throws Exception {
        GenerationSchema schema = convert("""
                {"type": "object", "properties": {"a": {"$ref": "#/$defs/S", "enum": ["x"], "minLength": 2}},
                 "$defs": {"S": {"type": "string"}}}""");

        assertThat(schema.warnings()).anySatisfy(warning -> assertThat(warning).contains("enum"));
        assertThat(schema.warnings()).anySatisfy(warning -> assertThat(warning).contains("minLength"));
    }

    @Test
    void refCycleWithoutASchemaIsRejected() {
        assertThat(failure(
                                "{\"$ref\": \"#/$defs/A\", \"$defs\": {\"A\": {\"$ref\": \"#/$defs/B\"}, \"B\": {\"$ref\": \"#/$defs/A\"}}}")
                        .schemaPath())
                .startsWith("#/$defs/");
        assertThat(failure("{\"type\": \"object\", \"properties\": {\"a\": {\"$ref\": \"#/properties/a\"}}}")
                        .schemaPath())
                .startsWith("#/properties/a");
    }

    // ---- x-order and descriptions ----

    @Test
    void xOrderSortsPropertiesAndTiesAndUnorderedOnesKeepDocumentOrder() throws Exception {
        assertThat(generated("""
                {"type": "object", "properties": {
                   "b": {"type": "string", "x-order": 2}, "u1": {"type": "string"}, "a": {"type": "string", "x-order": 1.5},
                   "d": {"type": "string", "x-order": -1}, "t1": {"type": "string", "x-order": 2},
                   "s": {"type": "string", "x-order": "1"}, "u2": {"type": "string"}}}""")).isEqualTo(compact("""
                        {"type": "object", "properties": {"d": {"type": "string"}, "a": {"type": "string"},
                          "b": {"type": "string"}, "t1": {"type": "string"}, "u1": {"type": "string"},
                          "s": {"type": "string"}, "u2": {"type": "string"}}, "required": []}"""));
    }

    @Test
    void unenforcedConstraintsAreDescribedAfterTheDescriptionAndWarnedWithSubjectAndPointer() throws Exception {
        GenerationSchema schema = convert("""
                {"type": "object", "description": "Root", "minProperties": 1,
                 "properties": {"code": {"description": "The code", "type": "string", "pattern": "^[0-9]+$",
                                         "maxLength": 4, "format": "digits"},
                                "n": {"type": "number", "multipleOf": 0.5, "exclusiveMinimum": 0},
                                "tags": {"type": "array", "items": [{"type": "string"}], "uniqueItems": true},
                                "map": {"type": "object", "additionalProperties": {"type": "integer"}},
                                "no": {"type": "string", "not": {"const": "x"}}}}""");

        assertThat(Json.write(schema.json())).isEqualTo(compact("""
                {"type": "object", "description": "Root (minProperties: 1)",
                 "properties": {
                   "code": {"type": "string", "description": "The code (pattern: ^[0-9]+$; maxLength: 4; format: digits)"},
                   "n": {"type": "number", "description": "(multipleOf: 0.5; exclusiveMinimum: 0)"},
                   "tags": {"type": "array", "description": "(items: [{\\"type\\":\\"string\\"}]; uniqueItems: true)", "items": {}},
                   "map": {"type": "object", "description": "(additionalProperties: {\\"type\\":\\"integer\\"})",
                           "properties": {}, "required": []},
                   "no": {"type": "string", "description": "(not: {\\"const\\":\\"x\\"})"}},
                 "required": []}"""));
        assertThat(schema.warnings())
                .containsExactly(
                        "T: #: minProperties '1' is described to the model but not enforced",
                        "T: #/properties/code: pattern '^[0-9]+$' is described to the model but not enforced",
                        "T: #/properties/code: maxLength '4' is described to the model but not enforced",
                        "T: #/properties/code: format 'digits' is described to the model but not enforced",
                        "T: #/properties/n: multipleOf '0.5' is described to the model but not enforced",
                        "T: #/properties/n: exclusiveMinimum '0' is described to the model but not enforced",
                        "T: #/properties/tags: items '[{\"type\":\"string\"}]' is described to the model but not enforced",
                        "T: #/properties/tags: uniqueItems 'true' is described to the model but not enforced",
                        "T: #/properties/map: additionalProperties '{\"type\":\"integer\"}' is described to the model but not enforced",
                        "T: #/properties/no: not '{\"const\":\"x\"}' is described to the model but not enforced");
    }

    @Test
    void unknownKeywordsAreWarnedWhileAnnotationsAndExtensionsAreNot() throws Exception {
        GenerationSchema schema = convert("""
                {"type": "object", "title": "t", "default": {}, "examples": [], "$schema": "s", "$id": "i", "$comment": "c",
                 "readOnly": false, "writeOnly": false, "deprecated": false, "$anchor": "a", "$vocabulary": {},
                 "x-vendor": 1, "strict": true,
                 "properties": {"a": {"type": "string", "minLenght": 2}}}""");

        assertThat(schema.warnings())
                .containsExactly(
                        "T: #: unknown keyword 'strict' is ignored",
                        "T: #/properties/a: unknown keyword 'minLenght' is ignored");
        assertThat(Json.write(schema.json()))
                .isEqualTo("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"required\":[]}");
    }

    @Test
    void warningsOfADefinitionNameTheDefinition() throws Exception {
        GenerationSchema schema = GenerationSchema.convert(json("""
                {"$ref": "#/$defs/Code", "$defs": {"Code": {"type": "string", "pattern": "z"}}}"""), "open_gate");

        assertThat(schema.warnings())
                .containsExactly("open_gate: #/$defs/Code: pattern 'z' is described to the model but not enforced");
    }

    @Test
    void prefixItemsIsWarnedOnce() throws Exception {
        assertThat(convert("{\"type\": \"array\", \"prefixItems\": [{\"type\": \"string\"}]}")
                        .warnings())
                .containsExactly(
                        "T: #: prefixItems '[{\"type\":\"string\"}]' is described to the model but not enforced");
    }

    @Test
    void recursionThroughTheRootWarnsOnce() throws Exception {
        assertThat(convert("""
                {"type": "object", "properties": {"code": {"type": "string", "pattern": "p"}, "next": {"$ref": "#"}}}""").warnings())
                .containsExactly("T: #/properties/code: pattern 'p' is described to the model but not enforced");
    }

    // ---- invalid schemas ----

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            false                                                              | #                                  | The schema 'false' matches nothing, so nothing can be generated.
            3                                                                  | #                                  | A schema must be an object (or true).
            {"type": "object", "properties": {"a": false}}                     | #/properties/a                     | The schema 'false' matches nothing, so nothing can be generated.
            {"type": "object", "properties": {"a": "string"}}                  | #/properties/a                     | A schema must be an object (or true).
            {"type": "strin"}                                                  | #/type                             | Unknown type 'strin' (use object, array, string, integer, number, boolean or null).
            {"type": ["string", 3]}                                            | #/type                             | 'type' must be a type name or an array of type names.
            {"type": []}                                                       | #/type                             | 'type' must be a type name or an array of type names.
            {"type": {"a": 1}}                                                 | #/type                             | 'type' must be a type name or an array of type names.
            {"type": "object", "properties": {"a/b~c": {"type": "strng"}}}     | #/properties/a~1b~0c/type          | Unknown type 'strng' (use object, array, string, integer, number, boolean or null).
            {"type": "object", "properties": []}                               | #/properties                       | 'properties' must be an object of schemas.
            {"type": "object", "properties": {"a": {}}, "required": "a"}       | #/required                         | 'required' must be an array of property names.
            {"type": "object", "properties": {"a": {}}, "required": ["a", 1]}  | #/required/1                       | 'required' must be an array of property names.
            {"type": "object", "properties": {"a": {}}, "required": ["a", "b"]} | #/required/1                      | Required property 'b' is not defined in 'properties', so it cannot be generated.
            {"type": "array", "items": false}                                  | #/items                            | The schema 'false' matches nothing, so nothing can be generated.
            {"type": "array", "items": {"type": "strng"}}                      | #/items/type                       | Unknown type 'strng' (use object, array, string, integer, number, boolean or null).
            {"type": "array", "minItems": 3, "maxItems": 2}                    | #/minItems                         | 'minItems' (3) is larger than 'maxItems' (2).
            {"type": "array", "minItems": -1}                                  | #/minItems                         | 'minItems' must be a non-negative integer.
            {"type": "array", "minItems": 1.5}                                 | #/minItems                         | 'minItems' must be a non-negative integer.
            {"type": "array", "maxItems": "2"}                                 | #/maxItems                         | 'maxItems' must be a non-negative integer.
            {"type": "array", "maxItems": 3000000000}                          | #/maxItems                         | 'maxItems' must be a non-negative integer.
            {"type": "integer", "minimum": 5, "maximum": 1}                    | #/minimum                          | 'minimum' is larger than 'maximum'.
            {"type": "integer", "minimum": 1.2, "maximum": 1.8}                | #/minimum                          | No integer lies between 'minimum' and 'maximum'.
            {"type": "number", "minimum": "1"}                                 | #/minimum                          | 'minimum' must be a number.
            {"type": "number", "maximum": null}                                | #/maximum                          | 'maximum' must be a number.
            {"type": "string", "description": 5}                               | #/description                      | 'description' must be a string.
            {"enum": []}                                                       | #/enum                             | 'enum' must be a non-empty array.
            {"enum": "a"}                                                      | #/enum                             | 'enum' must be a non-empty array.
            {"type": "string", "enum": [1, 2]}                                 | #/enum                             | No value of 'enum'/'const' is of type string.
            {"type": "boolean", "const": "true"}                               | #/enum                             | No value of 'enum'/'const' is of type boolean.
            {"anyOf": []}                                                      | #/anyOf                            | anyOf/oneOf must be a non-empty array of schemas.
            {"oneOf": {}}                                                      | #/oneOf                            | anyOf/oneOf must be a non-empty array of schemas.
            {"oneOf": [true, false]}                                           | #/oneOf/1                          | The schema 'false' matches nothing, so nothing can be generated.
            {"anyOf": [{"type": "string"}, {"properties": {"x": {"type": "bogus"}}}]} | #/anyOf/1/properties/x/type | Unknown type 'bogus' (use object, array, string, integer, number, boolean or null).
            {"allOf": []}                                                      | #/allOf                            | 'allOf' must be a non-empty array of object schemas.
            {"allOf": {}}                                                      | #/allOf                            | 'allOf' must be a non-empty array of object schemas.
            {"allOf": [{"type": "string"}]}                                    | #/allOf/0                          | 'allOf' is supported for object schemas only.
            {"allOf": [{"type": "object"}, {"anyOf": [{"type": "object"}, {"type": "null"}]}]} | #/allOf/1         | 'allOf' is supported for object schemas only.
            {"$ref": "http://example.com/s.json"}                              | #/$ref                             | Only local references ('#/$defs/Name') are supported.
            {"$ref": 5}                                                        | #/$ref                             | Only local references ('#/$defs/Name') are supported.
            {"$ref": "#/$defs/Missing"}                                        | #/$ref                             | The reference '#/$defs/Missing' does not resolve.
            {"$ref": "#/$defs/A/x", "$defs": {"A": "s"}}                       | #/$ref                             | The reference '#/$defs/A/x' does not resolve.
            {"$ref": "#/items/first", "items": [{}]}                           | #/$ref                             | The reference '#/items/first' does not resolve.
            {"type": "object", "properties": {"a": {"type": "array", "items": {"$ref": "#/x"}}}} | #/properties/a/items/$ref | The reference '#/x' does not resolve.
            {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {"properties": {"b": {"type": "strng"}}}}} | #/$defs/A/properties/b/type | Unknown type 'strng' (use object, array, string, integer, number, boolean or null).
            """)
    void invalidSchemaFailsWithItsPath(String schema, String path, String message) {
        SchemaException error = failure(schema);

        assertThat(error.schemaPath()).isEqualTo(path);
        assertThat(error.getMessage()).isEqualTo(message);
    }

    @Test
    void nestingDeeperThanSixtyFourLevelsIsRejectedAtTheFirstLevelTooDeep() throws Exception {
        assertThat(convert(nested(64)).json()).isNotNull();

        SchemaException error = failure(nested(65));

        assertThat(error.schemaPath()).isEqualTo("#" + "/properties/a".repeat(65));
        assertThat(error.getMessage()).isEqualTo("The schema is nested too deeply (more than 64 levels).");
    }

    private static String nested(int levels) {
        return "{\"type\": \"object\", \"properties\": {\"a\": ".repeat(levels) + "{\"type\": \"string\"}"
                + "}}".repeat(levels);
    }

    // ---- tool parameters ----

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"type": "object"}
            {"properties": {"gate": {"type": "string"}}}
            {"$ref": "#/$defs/P", "$defs": {"P": {"type": "object"}}}
            {"allOf": [{"type": "object"}]}
            """)
    void toolParametersMayBeAnyObjectSchema(String schema) throws Exception {
        assertThat(GenerationSchema.convertParameters(json(schema), "open_gate").json())
                .isNotNull();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {}
            {"type": "string"}
            {"type": ["object", "null"]}
            {"type": "object", "nullable": true}
            {"$ref": "#/$defs/P", "$defs": {"P": {"type": "array"}}}
            """)
    void toolParametersThatAreNotAnObjectSchemaAreRejectedAtTheRoot(String schema) {
        SchemaException error = catchThrowableOfType(
                SchemaException.class, () -> GenerationSchema.convertParameters(json(schema), "open_gate"));

        assertThat(error.schemaPath()).isEqualTo("#");
        assertThat(error.getMessage()).isEqualTo("Tool parameters must be an object schema (\"type\": \"object\").");
    }

    // ---- the result ----

    @Test
    void conversionLeavesItsInputAloneAndTheResultIsACopy() throws Exception {
        ObjectNode input = (ObjectNode) json("""
                {"type": "object", "properties": {"a": {"type": "string", "pattern": "x", "x-order": 1}}, "$defs": {}}""");
        JsonNode before = input.deepCopy();

        GenerationSchema schema = GenerationSchema.convert(input, "T");
        ObjectNode output = schema.json();
        output.put("changed", true);

        assertThat(input).isEqualTo(before);
        assertThat(new GenerationSchema(output, List.of()).json()).isNotSameAs(output);
        assertThatThrownBy(() -> schema.warnings().add("x")).isInstanceOf(UnsupportedOperationException.class);
    }

    // ---- found by fuzzing (oam-fuzz SchemaFuzzTest) ----

    @Test
    void enumValuesOutsideMinimumAndMaximumAreDroppedSoEveryGeneratedValueValidates() throws Exception {
        GenerationSchema schema = convert("""
                {"type": "number", "enum": [1, 5, 2.5], "maximum": 2.5}""");
        assertThat(Json.write(schema.json())).isEqualTo(compact("""
                {"type": "number", "maximum": 2.5, "enum": [1, 2.5]}"""));
        assertThat(schema.warnings()).containsExactly("T: #: enum values outside minimum/maximum are dropped: 5");
        for (JsonNode value : schema.json().get("enum")) {
            assertThat(schema.firstViolation(value)).isEmpty();
        }
    }

    @Test
    void aConstOutsideMinimumAndMaximumIsRefused() {
        SchemaException error = failure("""
                {"const": 5, "maximum": 2.5}""");
        assertThat(error.schemaPath()).isEqualTo("#/enum");
        assertThat(error.getMessage()).isEqualTo("No value of 'enum'/'const' lies between 'minimum' and 'maximum'.");
    }

    @Test
    void objectAndArrayEnumValuesThatBreakTheirOwnSchemaAreDroppedSoEveryGeneratedValueValidates() throws Exception {
        GenerationSchema schema = convert("""
                {"type": "object", "properties": {"children": {"type": "array", "maxItems": 1}}, "required": ["children"],
                 "enum": [{"children": []}, {"children": [1, 2]}, {"children": "none"}, {}]}""");
        assertThat(schema.json().get("enum")).isEqualTo(Json.parse("[{\"children\": []}]"));
        assertThat(schema.warnings())
                .containsExactly(
                        "T: #: enum values that break the schema's other keywords are dropped: {\"children\":[1,2]}, {\"children\":\"none\"}, {}");
        for (JsonNode value : schema.json().get("enum")) {
            assertThat(schema.firstViolation(value)).isEmpty();
        }
        GenerationSchema array = convert("""
                {"type": "array", "items": {"type": "integer"}, "enum": [[1, 2], ["x"]]}""");
        assertThat(array.json().get("enum")).isEqualTo(Json.parse("[[1, 2]]"));
    }

    /** The fuzzing finding: a recursive node whose const breaks the node's own properties (through a $ref). */
    @Test
    void anObjectConstThatBreaksItsPropertiesIsRefused() {
        SchemaException error = failure("""
                {"$defs": {"Node": {"type": "object", "properties": {"children": {"type": "array",
                  "items": {"$ref": "#/$defs/Node"}, "maxItems": 0}}, "const": {"children": [{}]}}},
                 "$ref": "#/$defs/Node"}""");
        assertThat(error.schemaPath()).isEqualTo("#/$defs/Node/enum");
        assertThat(error.getMessage()).startsWith("No value of 'enum'/'const' fits the schema's other keywords (");
    }
}
