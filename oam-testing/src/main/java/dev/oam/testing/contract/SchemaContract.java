package dev.oam.testing.contract;

import static dev.oam.testing.contract.ContractSupport.BELL_TOOL;
import static dev.oam.testing.contract.ContractSupport.GATE_TOOL;
import static dev.oam.testing.contract.ContractSupport.code;
import static dev.oam.testing.contract.ContractSupport.create;
import static dev.oam.testing.contract.JsonKeys.keys;
import static dev.oam.testing.contract.Schemas.DECISION_SCHEMA;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.Conversation;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The schema part of the structured-output contract (docs/PROTOCOL.md, "Structured output and the generation schema"):
 * JSON Schema conversion, its warnings and errors, and structured turns.
 */
public interface SchemaContract extends ContractFixture {
    // ---------------------------------------------------------------- schema conversion

    @Test
    default void unenforceableConstraintsAreDescribedAndWarnedPerKeyword() throws Exception {
        try (Conversation c = open()) {
            String[][] cases = {
                {"{\"type\":\"string\",\"pattern\":\"^[A-Z]{3}$\"}", "pattern '^[A-Z]{3}$'"},
                {"{\"type\":\"string\",\"format\":\"email\"}", "format 'email'"},
                {"{\"type\":\"string\",\"minLength\":2}", "minLength '2'"},
                {"{\"type\":\"string\",\"maxLength\":8}", "maxLength '8'"},
                {"{\"type\":\"number\",\"multipleOf\":5}", "multipleOf '5'"},
                {"{\"type\":\"number\",\"exclusiveMinimum\":0}", "exclusiveMinimum '0'"},
                {"{\"type\":\"number\",\"exclusiveMaximum\":9}", "exclusiveMaximum '9'"},
                {"{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"uniqueItems\":true}", "uniqueItems 'true'"},
                {"{\"type\":\"object\",\"properties\":{},\"minProperties\":1}", "minProperties '1'"},
                {
                    "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":{\"type\":\"string\"}}",
                    "additionalProperties"
                },
            };
            int id = 0;
            for (String[] item : cases) {
                id++;
                String schema =
                        "{\"type\":\"object\",\"properties\":{\"code\":" + item[0] + "},\"required\":[\"code\"]}";
                JsonNode result = c.call(id, "schema/validate", "{\"schema\":" + schema + ",\"name\":\"Gate\"}");
                assertThat(result.path("warnings").toString())
                        .as(item[0])
                        .contains("Gate: #/properties/code: " + item[1])
                        .contains("described to the model but not enforced");
                assertThat(result.path("generationSchema")
                                .path("properties")
                                .path("code")
                                .path("description")
                                .asText())
                        .as(item[0])
                        .contains(item[1].split(" ")[0]);
            }
            JsonNode tool = c.call(
                    50,
                    "session/create",
                    "{\"model\":\"scripted\",\"tools\":[{\"name\":\"open_gate\",\"description\":\"Open.\","
                            + "\"parameters\":{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\",\"pattern\":\"^[A-Z]{3}$\"}}}}]}");
            assertThat(tool.path("warnings").toString())
                    .contains("open_gate: #/properties/code: pattern '^[A-Z]{3}$' is described to the model "
                            + "but not enforced");
        }
    }

    @Test
    default void everySupportedConstructConvertsToTheGenerationSchema() throws Exception {
        try (Conversation c = open()) {
            String schema = """
                    {"type":"object","properties":{
                      "name":{"type":"string","description":"Who"},
                      "mood":{"type":"string","enum":["calm","angry"]},
                      "kind":{"const":"npc"},
                      "level":{"type":"integer","minimum":1,"maximum":10},
                      "gold":{"type":"number"},
                      "alive":{"type":"boolean"},
                      "items":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3},
                      "target":{"anyOf":[{"type":"string"},{"type":"integer"}]},
                      "pick":{"oneOf":[{"type":"boolean"},{"type":"null"}]},
                      "nickname":{"type":["string","null"]},
                      "title":{"anyOf":[{"type":"string"},{"type":"null"}]},
                      "stats":{"allOf":[{"type":"object","properties":{"hp":{"type":"integer"}},"required":["hp"]},
                                        {"type":"object","properties":{"mp":{"type":"integer"}}}]},
                      "home":{"$ref":"#/$defs/Place"},
                      "old":{"$ref":"#/definitions/Legacy"},
                      "tree":{"$ref":"#/$defs/Node"}},
                     "required":["name","mood"],
                     "$defs":{"Place":{"type":"object","properties":{"town":{"type":"string"}}},
                              "Node":{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}}}},
                     "definitions":{"Legacy":{"type":"string"}}}""".replace("\n", "");
            JsonNode result = c.call(1, "schema/validate", "{\"schema\":" + schema + "}");
            assertThat(result.path("warnings")).isEmpty();
            JsonNode gen = result.path("generationSchema");
            JsonNode props = gen.path("properties");
            assertThat(keys(props))
                    .containsExactly(
                            "name",
                            "mood",
                            "kind",
                            "level",
                            "gold",
                            "alive",
                            "items",
                            "target",
                            "pick",
                            "nickname",
                            "title",
                            "stats",
                            "home",
                            "old",
                            "tree");
            assertThat(gen.path("required").toString()).isEqualTo("[\"name\",\"mood\"]");
            assertThat(props.path("name").path("description").asText()).isEqualTo("Who");
            assertThat(props.path("mood").path("enum").toString()).isEqualTo("[\"calm\",\"angry\"]");
            assertThat(props.path("kind").toString()).isEqualTo("{\"type\":\"string\",\"enum\":[\"npc\"]}");
            assertThat(props.path("level").toString()).isEqualTo("{\"type\":\"integer\",\"minimum\":1,\"maximum\":10}");
            assertThat(props.path("items").path("minItems").asInt()).isEqualTo(1);
            assertThat(props.path("items").path("maxItems").asInt()).isEqualTo(3);
            assertThat(props.path("target").path("anyOf")).hasSize(2);
            assertThat(props.path("pick").path("anyOf")).hasSize(2);
            assertThat(props.path("nickname").toString())
                    .isEqualTo("{\"anyOf\":[{\"type\":\"string\"},{\"type\":\"null\"}]}");
            assertThat(props.path("title").toString())
                    .isEqualTo(props.path("nickname").toString());
            assertThat(keys(props.path("stats").path("properties"))).containsExactly("hp", "mp");
            assertThat(props.path("stats").path("required").toString()).isEqualTo("[\"hp\"]");
            assertThat(props.path("home").path("$ref").asText()).startsWith("#/$defs/");
            assertThat(gen.path("$defs").path("Place").path("properties").has("town"))
                    .isTrue();
            assertThat(gen.path("$defs").path("Legacy").path("type").asText()).isEqualTo("string");
            assertThat(gen.path("$defs")
                            .path("Node")
                            .path("properties")
                            .path("children")
                            .path("items")
                            .path("$ref")
                            .asText())
                    .isEqualTo("#/$defs/Node");
            JsonNode ordered = c.call(
                    2,
                    "schema/validate",
                    "{\"schema\":{\"type\":\"object\",\"properties\":{"
                            + "\"b\":{\"type\":\"string\",\"x-order\":2},\"a\":{\"type\":\"string\",\"x-order\":1}}}}");
            assertThat(keys(ordered.path("generationSchema").path("properties")))
                    .containsExactly("a", "b");
        }
    }

    @Test
    default void invalidSchemasFailWithThePathAndTheSchemaPath() throws Exception {
        try (Conversation c = open()) {
            String[][] cases = {
                {"{\"type\":\"text\"}", "#/type"},
                {"{\"type\":5}", "#/type"},
                {"{\"type\":\"object\",\"properties\":[]}", "#/properties"},
                {"{\"type\":\"object\",\"properties\":{\"a\":5}}", "#/properties/a"},
                {"{\"type\":\"object\",\"properties\":{},\"required\":\"a\"}", "#/required"},
                {"{\"type\":\"object\",\"properties\":{},\"required\":[\"missing\"]}", "#/required/0"},
                {"{\"type\":\"string\",\"enum\":[]}", "#/enum"},
                {"{\"type\":\"string\",\"enum\":[1,2]}", "#/enum"},
                {"{\"type\":\"integer\",\"minimum\":5,\"maximum\":1}", "#/minimum"},
                {"{\"type\":\"integer\",\"minimum\":\"1\"}", "#/minimum"},
                {"{\"type\":\"array\",\"minItems\":3,\"maxItems\":1}", "#/minItems"},
                {"{\"type\":\"array\",\"minItems\":-1}", "#/minItems"},
                {"{\"anyOf\":[]}", "#/anyOf"},
                {"{\"allOf\":[{\"type\":\"string\"}]}", "#/allOf/0"},
                {"{\"$ref\":\"#/$defs/Nope\"}", "#/$ref"},
                {"{\"$ref\":\"http://example.com/schema\"}", "#/$ref"},
                {"{\"type\":\"object\",\"properties\":{\"a\":false}}", "#/properties/a"},
                {
                    "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"description\":7}}}",
                    "#/properties/a/description"
                },
            };
            int id = 0;
            for (String[] bad : cases) {
                id++;
                JsonNode error = c.request(id, "schema/validate", "{\"schema\":" + bad[0] + "}")
                        .error(id);
                assertThat(error.path("code").asInt()).as(bad[0]).isEqualTo(-32007);
                assertThat(code(error)).isEqualTo("invalid_schema");
                assertThat(error.path("data").path("path").asText()).as(bad[0]).isEqualTo("schema");
                assertThat(error.path("data").path("schemaPath").asText())
                        .as(bad[0])
                        .isEqualTo(bad[1]);
            }
            JsonNode tool = c.request(
                            100,
                            "session/create",
                            "{\"model\":\"scripted\",\"tools\":[" + GATE_TOOL + ",{\"name\":\"b\","
                                    + "\"description\":\"B.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"nope\"}}}}]}")
                    .error(100);
            assertThat(tool.path("code").asInt()).isEqualTo(-32007);
            assertThat(tool.path("data").path("path").asText()).isEqualTo("tools[1].parameters");
            assertThat(tool.path("data").path("schemaPath").asText()).isEqualTo("#/properties/x/type");
            JsonNode notObject = c.request(
                            101,
                            "tools/validate",
                            "{\"tools\":[{\"name\":\"a\",\"description\":\"A.\","
                                    + "\"parameters\":{\"type\":\"string\"}}]}")
                    .error(101);
            assertThat(notObject.path("data").path("schemaPath").asText()).isEqualTo("#");
            JsonNode turn = c.call(102, "session/create", "{\"session\":\"t\",\"model\":\"scripted\"}");
            assertThat(turn.path("session").asText()).isEqualTo("t");
            JsonNode respond = c.request(
                            103,
                            "session/respond",
                            "{\"session\":\"t\",\"prompt\":\"x\",\"schema\":{\"type\":\"nope\"}}")
                    .error(103);
            assertThat(respond.path("data").path("path").asText()).isEqualTo("schema");
        }
    }

    @Test
    default void toolsValidateReturnsEachToolsGenerationSchemaAndWarnings() throws Exception {
        try (Conversation c = open()) {
            JsonNode result = c.call(
                    1,
                    "tools/validate",
                    "{\"tools\":[" + GATE_TOOL + ",{\"name\":\"code\",\"parameters\":{\"type\":\"object\","
                            + "\"properties\":{\"pin\":{\"type\":\"string\",\"pattern\":\"[0-9]+\"}}}}]}");
            JsonNode tools = result.path("tools");
            assertThat(tools).hasSize(2);
            assertThat(tools.get(0).path("name").asText()).isEqualTo("open_gate");
            assertThat(tools.get(0).path("warnings")).isEmpty();
            assertThat(tools.get(0).path("generationSchema").path("required").toString())
                    .isEqualTo("[\"gate\"]");
            assertThat(tools.get(1).path("warnings").toString())
                    .contains("code: #/properties/pin: pattern")
                    .contains("code: the tool has no description");
            assertThat(result.path("warnings")).isEmpty();
            assertThat(c.call(2, "initialize", null)
                            .path("capabilities")
                            .path("structuredOutput")
                            .asBoolean())
                    .isTrue();
        }
    }

    // ---------------------------------------------------------------- structured turns

    @Test
    default void aSchemaTurnAnswersWithStructuredValuesInSchemaOrderAndStreamsPartials() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "d",
                    "[" + BELL_TOOL + "]",
                    "{}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},"
                            + "{\"json\":{\"confidence\":75,\"choice\":\"flee\",\"reasoning\":\"Outnumbered.\"},\"chunks\":4}]");
            c.request(
                    2,
                    "session/respond",
                    "{\"session\":\"d\",\"prompt\":\"Fight or flee?\",\"stream\":true,\"schema\":" + DECISION_SCHEMA
                            + "}");
            c.reply(c.toolCall(), "{\"output\":\"ding\"}");
            JsonNode turn = c.result(2);
            assertThat(keys(turn)).containsExactly("session", "text", "structured", "toolCalls", "usage", "steps");
            assertThat(keys(turn.path("structured"))).containsExactly("reasoning", "choice", "confidence");
            assertThat(turn.path("text").asText())
                    .isEqualTo("{\"reasoning\":\"Outnumbered.\",\"choice\":\"flee\",\"confidence\":75}");
            assertThat(turn.path("toolCalls")).hasSize(1);
            List<JsonNode> partials = c.events(2).stream()
                    .filter(e -> e.path("type").asText().equals("partial"))
                    .toList();
            assertThat(partials).hasSizeGreaterThanOrEqualTo(2);
            assertThat(partials.get(partials.size() - 1).path("value")).isEqualTo(turn.path("structured"));
            assertThat(c.events(2).stream().filter(e -> e.path("type").asText().equals("text")))
                    .isEmpty();
        }
    }

    @Test
    default void aJsonTextStepCanAnswerASchemaTurn() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "d",
                    "[]",
                    "{}",
                    "[{\"text\":\"{\\\"choice\\\":\\\"fight\\\",\\\"reasoning\\\":\\\"Brave.\\\"}\",\"chunks\":3}]");
            c.request(
                    2,
                    "session/respond",
                    "{\"session\":\"d\",\"prompt\":\"x\",\"stream\":true,\"schema\":" + DECISION_SCHEMA + "}");
            JsonNode turn = c.result(2);
            assertThat(turn.path("structured").toString()).isEqualTo("{\"reasoning\":\"Brave.\",\"choice\":\"fight\"}");
            assertThat(c.events(2).stream()
                            .anyMatch(e -> e.path("type").asText().equals("partial")))
                    .isTrue();
        }
    }

    @Test
    default void anAnswerThatViolatesTheSchemaFailsNamingTheFirstViolation() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "d",
                    "[]",
                    "{}",
                    "[{\"json\":{\"reasoning\":\"x\",\"choice\":\"dance\"}},{\"json\":{\"choice\":\"flee\"}},"
                            + "{\"text\":\"not "
                            + "json\"},{\"json\":{\"reasoning\":\"ok\",\"choice\":\"flee\",\"confidence\":101}}]");
            JsonNode first = c.request(
                            2,
                            "session/respond",
                            "{\"session\":\"d\",\"prompt\":\"x\",\"schema\":" + DECISION_SCHEMA + "}")
                    .error(2);
            assertThat(first.path("code").asInt()).isEqualTo(-32012);
            assertThat(first.path("message").asText()).contains("#/choice").contains("\"dance\"");
            JsonNode second = c.request(
                            3,
                            "session/respond",
                            "{\"session\":\"d\",\"prompt\":\"x\",\"schema\":" + DECISION_SCHEMA + "}")
                    .error(3);
            assertThat(second.path("message").asText()).contains("missing required property 'reasoning'");
            JsonNode third = c.request(
                            4,
                            "session/respond",
                            "{\"session\":\"d\",\"prompt\":\"x\",\"schema\":" + DECISION_SCHEMA + "}")
                    .error(4);
            assertThat(third.path("message").asText()).contains("not JSON");
            JsonNode fourth = c.request(
                            5,
                            "session/respond",
                            "{\"session\":\"d\",\"prompt\":\"x\",\"schema\":" + DECISION_SCHEMA + "}")
                    .error(5);
            assertThat(fourth.path("message").asText()).contains("#/confidence").contains("maximum");
            assertThat(c.call(6, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("entries")
                            .asInt())
                    .isEqualTo(0);
        }
    }

    @Test
    default void invalidToolArgumentsNeverReachTheEngine() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "g",
                    "[" + GATE_TOOL + "]",
                    "{}",
                    "[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":5}}]},"
                            + "{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{}}]},{\"template\":\"{toolOutputs}\"}]");
            JsonNode turn = c.call(2, "session/respond", "{\"session\":\"g\",\"prompt\":\"x\"}");
            assertThat(turn.path("toolCalls"))
                    .hasSize(2)
                    .allSatisfy(r -> assertThat(r.path("isError").asBoolean()).isTrue());
            assertThat(turn.path("text").asText())
                    .contains("Error: Invalid arguments for 'open_gate': #/gate: expected a string")
                    .contains("missing required property 'gate'");
            assertThat(c.messages().stream()
                            .filter(m -> "tool/call".equals(m.path("method").asText())))
                    .isEmpty();
        }
    }
}
