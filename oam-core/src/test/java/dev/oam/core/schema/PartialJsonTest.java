package dev.oam.core.schema;

import static dev.oam.core.testing.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Reading a JSON prefix that is still being generated. Expected values are written as compact JSON; {@code null} (the
 * word) means "nothing to show yet".
 */
class PartialJsonTest {
    private static @Nullable String read(String prefix) {
        JsonNode value = PartialJson.parse(prefix);
        return value == null ? null : Json.write(value);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                " ",
                "\n\t ",
                "t",
                "tru",
                "f",
                "fals",
                "n",
                "nul",
                "-",
                "1.",
                "1e",
                "1e+",
                "-0.",
                "Hello there",
                "Sure! {\"a\": 1"
            })
    void prefixThatImpliesNoValueYetIsNull(String prefix) {
        assertThat(read(prefix)).isNull();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"line": "Aye, I've go            | {"line":"Aye, I've go"}
            {                                 | {}
            [                                 | []
            {"a": [                           | {"a":[]}
            {"a": {"b": {"c": [[              | {"a":{"b":{"c":[[]]}}}
            "abc                              | "abc"
            ["a", "b                          | ["a","b"]
            ["a", "b"                         | ["a","b"]
            [1, 2,                            | [1,2]
            {"a": 1,                          | {"a":1}
            {"a": 1 ,                         | {"a":1}
            {"a": "}]{[,:                     | {"a":"}]{[,:"}
            {"a": "x", "b": {"c": "y          | {"a":"x","b":{"c":"y"}}
            [{"a": 1}, {"b": 2                | [{"a":1},{"b":2}]
            {"a": {"b": "c"}, "d": [1, [2, 3  | {"a":{"b":"c"},"d":[1,[2,3]]}
            """)
    void openStringsAndContainersAreClosed(String prefix, String expected) {
        assertThat(read(prefix)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"a": 1, "b                   | {"a":1}
            {"a": 1, "bc"                 | {"a":1}
            {"a": 1, "bc":                | {"a":1}
            {"a": 1, "b\\"c               | {"a":1}
            {"ke                          | {}
            [{"a": 1}, {"b                | [{"a":1},{}]
            ["x", {"k                     | ["x",{}]
            {"a": {"b": 1, "c             | {"a":{"b":1}}
            {"a": {}, "b                  | {"a":{}}
            {"a": [], "b                  | {"a":[]}
            """)
    void unfinishedKeyNeverAppears(String prefix, String expected) {
        assertThat(read(prefix)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"a": t         | {}
            {"a": tr        | {}
            {"a": tru       | {}
            {"a": true      | {"a":true}
            {"a": fals      | {}
            {"a": false     | {"a":false}
            {"a": nu        | {}
            {"a": null      | {"a":null}
            {"a": 5, "b": tr | {"a":5}
            [1, tr          | [1]
            [tr             | []
            {"a": ["x", {"b": nul | {"a":["x",{}]}
            true            | true
            null            | null
            """)
    void unfinishedLiteralIsDropped(String prefix, String expected) {
        assertThat(read(prefix)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"a": -          | {}
            {"a": 1.         | {}
            {"a": 1e         | {}
            {"a": 1E-        | {}
            {"a": 0.5e+      | {}
            {"a": 1          | {"a":1}
            {"a": 12         | {"a":12}
            {"a": -3         | {"a":-3}
            {"a": 1.5        | {"a":1.5}
            {"a": 1.50       | {"a":1.50}
            {"a": 2e3        | {"a":2E+3}
            [1, -            | [1]
            12               | 12
            """)
    void numberIsShownAsFarAsItIsValidAndADanglingSignPointOrExponentIsDropped(String prefix, String expected) {
        assertThat(read(prefix)).isEqualTo(expected);
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            {"a": "x\\                 | {"a":"x"}
            {"a": "x\\u                | {"a":"x"}
            {"a": "x\\u0               | {"a":"x"}
            {"a": "x\\u00              | {"a":"x"}
            {"a": "x\\u00e             | {"a":"x"}
            {"a": "x\\u00e9            | {"a":"xé"}
            {"a": "x\\u00e9y           | {"a":"xéy"}
            {"a": "\\u00e9\\u00        | {"a":"é"}
            {"a": "say \\"             | {"a":"say \\""}
            {"a": "say \\"hi\\         | {"a":"say \\"hi"}
            {"a": "x\\\\               | {"a":"x\\\\"}
            {"a": "x\\\\\\             | {"a":"x\\\\"}
            {"a": "x\\n                | {"a":"x\\n"}
            {"a": "tab\\t", "b": "\\/  | {"a":"tab\\t","b":"/"}
            """)
    void escapeCutInTheMiddleIsDroppedUntilItIsComplete(String prefix, String expected) {
        assertThat(read(prefix)).isEqualTo(expected);
    }

    @Test
    void surrogatePairCutAfterItsFirstHalfShowsOnlyThatHalf() {
        JsonNode value = PartialJson.parse("{\"a\": \"ok \\ud83d\\ude");

        assertThat(value).isNotNull();
        assertThat(value.get("a").textValue()).isEqualTo("ok \ud83d");
        assertThat("ok \ud83d\ude00").startsWith(value.get("a").textValue());
    }

    @Test
    void escapedBackslashFollowedByUIsPlainText() {
        assertThat(read("{\"path\": \"C:\\\\u")).isEqualTo("{\"path\":\"C:\\\\u\"}");
        assertThat(read("{\"path\": \"C:\\\\us")).isEqualTo("{\"path\":\"C:\\\\us\"}");
    }

    @Test
    void completeDocumentIsReadAsItself() {
        for (String document : DOCUMENTS) {
            assertThat(PartialJson.parse(document)).as(document).isEqualTo(json(document));
            assertThat(PartialJson.parse("  " + document + "\n")).as(document).isEqualTo(json(document));
        }
    }

    /** Documents whose every prefix is checked; numbers avoid exponents and "-0" (their growth is tested above). */
    private static final List<String> DOCUMENTS = List.of(
            "{\"emotion\": \"angry\", \"line\": \"Halt! \\\"Who\\\" goes\\\\there?\\n\", \"player_options\": "
                    + "[\"Me\", \"Nobody\"], \"ends_conversation\": false}",
            "{\"reasoning\": \"caf\\u00e9 \\u00fcber \\ud83d\\ude00 done\", \"choice\": \"refuse\", \"confidence\": 87.25}",
            "[1, -23, 4.5, 0.125, true, false, null, [[], {}], {\"a\": [1, [2, [3]]]}, \"\"]",
            "{\"a\": {\"b\": {\"c\": [\"x\", {\"d\": null, \"e\": true}]}}, \"f\": 10.5, \"g\": \"}]\\\"{[,:\"}",
            "{ \"a\" : 1 , \"bc\" : [ \"x\" , \"yz\" ] , \"d\" : { } ,\n \"e\" :\t[ ] }",
            "\"just a \\\"string\\\" with \\\\ and \\u0041\"",
            "[\"\\\\\", \"\\\"\", \"a\\/b\", \"\\b\\f\\r\\t\"]",
            "{\"\": \"empty key\", \"k\\\"ey\": {\"nested\\\\\": [\"v\"]}, \"num\": 1234567890123456789012}",
            "[[[[[[\"deep\"]]]]], {\"x\": [{\"y\": [{\"z\": 0}]}]}]");

    @Test
    void everyPrefixIsNothingOrAValueTheFinishedDocumentCompletes() {
        for (String document : DOCUMENTS) {
            JsonNode finished = json(document);
            for (int end = 0; end <= document.length(); end++) {
                String prefix = document.substring(0, end);
                JsonNode partial = PartialJson.parse(prefix);
                if (partial != null) {
                    List<String> problems = new ArrayList<>();
                    completes(partial, finished, "#", true, problems);
                    assertThat(problems)
                            .as("prefix %s read as %s", prefix, Json.write(partial))
                            .isEmpty();
                }
            }
        }
    }

    @Test
    void partialValueOfEveryPrefixOfAnObjectIsAnObject() {
        String document = DOCUMENTS.get(0);
        for (int end = 1; end <= document.length(); end++) {
            JsonNode value = PartialJson.parse(document.substring(0, end));
            assertThat(value != null && value.isObject())
                    .as(document.substring(0, end))
                    .isTrue();
        }
    }

    /**
     * Whether {@code finished} completes {@code partial}: everything but the last member or element is already final;
     * the last one may still grow (a string by appending, a number by more digits, a container by more members).
     */
    private static void completes(
            JsonNode partial, JsonNode finished, String at, boolean mayGrow, List<String> problems) {
        if (!mayGrow) {
            if (!partial.equals(finished)) {
                problems.add(at + ": " + Json.write(partial) + " is not the final " + Json.write(finished));
            }
            return;
        }
        if (partial.isObject()) {
            if (!finished.isObject()) {
                problems.add(at + ": an object where the document has " + Json.write(finished));
                return;
            }
            Iterator<String> finalKeys = finished.fieldNames();
            List<String> keys = new ArrayList<>();
            partial.fieldNames().forEachRemaining(keys::add);
            for (int i = 0; i < keys.size(); i++) {
                String key = keys.get(i);
                if (!finalKeys.hasNext() || !finalKeys.next().equals(key)) {
                    problems.add(at + ": key '" + key + "' is not the document's next key");
                    return;
                }
                completes(partial.get(key), finished.get(key), at + "/" + key, i == keys.size() - 1, problems);
            }
        } else if (partial.isArray()) {
            if (!finished.isArray() || partial.size() > finished.size()) {
                problems.add(at + ": " + Json.write(partial) + " does not start " + Json.write(finished));
                return;
            }
            for (int i = 0; i < partial.size(); i++) {
                completes(partial.get(i), finished.get(i), at + "/" + i, i == partial.size() - 1, problems);
            }
        } else if (partial.isTextual()) {
            if (!finished.isTextual() || !finished.textValue().startsWith(partial.textValue())) {
                problems.add(at + ": \"" + partial.textValue() + "\" does not start " + Json.write(finished));
            }
        } else if (partial.isNumber()) {
            if (!finished.isNumber()
                    || !finished.decimalValue()
                            .toPlainString()
                            .startsWith(partial.decimalValue().toPlainString())) {
                problems.add(at + ": " + partial + " is not the start of " + finished);
            }
        } else if (!partial.equals(finished)) {
            problems.add(at + ": " + partial + " is not " + finished);
        }
    }
}
