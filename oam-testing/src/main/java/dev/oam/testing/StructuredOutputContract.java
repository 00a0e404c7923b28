package dev.oam.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The contract for structured output, JSON Schema conversion, transcripts and history restore,
 * compaction and context trimming (PROTOCOL.md §5, §9; TRANSCRIPT.md).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class StructuredOutputContract extends ContractSupport {
    private static final String DECISION_SCHEMA = """
            {"type":"object","properties":{"reasoning":{"type":"string"},"choice":{"type":"string","enum":["fight","flee"]},
             "confidence":{"type":"integer","minimum":0,"maximum":100}},"required":["reasoning","choice"]}""".replace("\n", "");

    /** For the test class that runs this contract against its transport. */
    protected StructuredOutputContract() {}

    private static List<String> keys(JsonNode node) {
        List<String> keys = new ArrayList<>();
        node.fieldNames().forEachRemaining(keys::add);
        return keys;
    }

    // ---------------------------------------------------------------- schema conversion (§9)

    @Test
    void unenforceableConstraintsAreDescribedAndWarnedPerKeyword() throws Exception {
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
                    .contains(
                            "open_gate: #/properties/code: pattern '^[A-Z]{3}$' is described to the model but not enforced");
        }
    }

    @Test
    void everySupportedConstructConvertsToTheGenerationSchema() throws Exception {
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
    void invalidSchemasFailWithThePathAndTheSchemaPath() throws Exception {
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
    void toolsValidateReturnsEachToolsGenerationSchemaAndWarnings() throws Exception {
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
    void aSchemaTurnAnswersWithStructuredValuesInSchemaOrderAndStreamsPartials() throws Exception {
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
    void aJsonTextStepCanAnswerASchemaTurn() throws Exception {
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
    void anAnswerThatViolatesTheSchemaFailsNamingTheFirstViolation() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "d",
                    "[]",
                    "{}",
                    "[{\"json\":{\"reasoning\":\"x\",\"choice\":\"dance\"}},{\"json\":{\"choice\":\"flee\"}},"
                            + "{\"text\":\"not json\"},{\"json\":{\"reasoning\":\"ok\",\"choice\":\"flee\",\"confidence\":101}}]");
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
    void invalidToolArgumentsNeverReachTheEngine() throws Exception {
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

    // ---------------------------------------------------------------- transcripts

    @Test
    void theTranscriptHasTheFoundationModelsForm() throws Exception {
        try (Conversation c = open()) {
            c.call(
                    1,
                    "session/create",
                    "{\"session\":\"g\",\"instructions\":\"You are a guard.\",\"tools\":[" + GATE_TOOL + "],\"model\":"
                            + scripted(
                                    "[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"north\"},\"id\":\"call_1\"}]},"
                                            + "{\"text\":\"It is jammed.\"},{\"json\":{\"reasoning\":\"r\",\"choice\":\"flee\"}}]")
                            + "}");
            c.request(2, "session/respond", "{\"session\":\"g\",\"prompt\":\"Open the north gate.\"}");
            c.reply(c.toolCall(), "{\"output\":{\"opened\":false}}");
            c.result(2);
            c.call(3, "session/respond", "{\"session\":\"g\",\"prompt\":\"Now?\",\"schema\":" + DECISION_SCHEMA + "}");
            JsonNode result = c.call(4, "session/transcript", "{\"session\":\"g\"}");
            assertThat(result.path("session").asText()).isEqualTo("g");
            JsonNode transcript = result.path("transcript");
            assertThat(transcript.path("type").asText()).isEqualTo("FoundationModels.Transcript");
            assertThat(transcript.path("version").asText()).isEqualTo("1.1");
            JsonNode entries = transcript.path("transcript").path("entries");
            assertThat(entries).hasSize(7);
            assertThat(entries)
                    .extracting(e -> e.path("role").asText())
                    .containsExactly("instructions", "user", "response", "tool", "response", "user", "response");
            assertThat(entries)
                    .allSatisfy(e -> assertThat(e.path("id").asText()).matches("[0-9A-F-]{36}"));
            assertThat(entries.get(0).path("contents").get(0).path("text").asText())
                    .isEqualTo("You are a guard.");
            assertThat(entries.get(0).path("tools").get(0).path("type").asText())
                    .isEqualTo("function");
            assertThat(entries.get(0)
                            .path("tools")
                            .get(0)
                            .path("function")
                            .path("name")
                            .asText())
                    .isEqualTo("open_gate");
            assertThat(entries.get(1).path("contents").get(0).path("text").asText())
                    .isEqualTo("Open the north gate.");
            assertThat(entries.get(1).has("responseFormat")).isFalse();
            JsonNode call = entries.get(2).path("toolCalls").get(0);
            assertThat(call.path("id").asText()).isEqualTo("call_1");
            assertThat(call.path("arguments").isTextual()).isTrue();
            assertThat(call.path("arguments").asText()).isEqualTo("{\"gate\":\"north\"}");
            assertThat(entries.get(3).path("toolName").asText()).isEqualTo("open_gate");
            assertThat(entries.get(3).path("toolCallID").asText()).isEqualTo("call_1");
            assertThat(entries.get(3).path("contents").get(0).path("text").asText())
                    .isEqualTo("{\"opened\":false}");
            assertThat(entries.get(4).path("contents").get(0).path("text").asText())
                    .isEqualTo("It is jammed.");
            assertThat(entries.get(5).path("responseFormat").path("type").asText())
                    .isEqualTo("jsonSchema");
            assertThat(entries.get(5)
                            .path("responseFormat")
                            .path("jsonSchema")
                            .path("name")
                            .asText())
                    .isEqualTo("Response");
            JsonNode structure = entries.get(6).path("contents").get(0);
            assertThat(structure.path("type").asText()).isEqualTo("structure");
            assertThat(structure.path("structure").path("content").toString())
                    .isEqualTo("{\"reasoning\":\"r\",\"choice\":\"flee\"}");
            assertThat(c.call(5, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("entries")
                            .asInt())
                    .isEqualTo(6);
        }
    }

    @Test
    void theTranscriptDuringARunningTurnShowsTheTurnInProgress() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "g",
                    "[" + BELL_TOOL + "]",
                    "{}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"text\":\"done\"}]");
            c.request(2, "session/respond", "{\"session\":\"g\",\"prompt\":\"Ring.\"}");
            c.reply(c.toolCall(), "{\"output\":\"one\"}");
            c.toolCall();
            JsonNode entries = c.call(3, "session/transcript", "{\"session\":\"g\"}")
                    .path("transcript")
                    .path("transcript")
                    .path("entries");
            assertThat(entries)
                    .extracting(e -> e.path("role").asText())
                    .containsExactly("instructions", "user", "response", "tool");
            assertThat(c.call(4, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("entries")
                            .asInt())
                    .isEqualTo(0);
        }
    }

    @Test
    void historyRestoresFromEitherFormAndRoundTripsExactly() throws Exception {
        try (Conversation c = open()) {
            c.call(
                    1,
                    "session/create",
                    "{\"session\":\"a\",\"instructions\":\"Guard.\",\"tools\":[" + GATE_TOOL + "],\"model\":"
                            + scripted(
                                    "[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"n\"}}]},{\"text\":\"Done.\"},"
                                            + "{\"json\":{\"reasoning\":\"r\",\"choice\":\"fight\"}}]")
                            + "}");
            c.request(2, "session/respond", "{\"session\":\"a\",\"prompt\":\"Open.\"}");
            c.reply(c.toolCall(), "{\"output\":\"Chain jammed.\",\"isError\":true}");
            c.result(2);
            c.call(
                    3,
                    "session/respond",
                    "{\"session\":\"a\",\"prompt\":\"Decide.\",\"schema\":" + DECISION_SCHEMA + "}");
            JsonNode whole = c.call(4, "session/transcript", "{\"session\":\"a\"}");
            c.call(
                    5,
                    "session/create",
                    "{\"session\":\"b\",\"history\":" + Json.write(whole.path("transcript"))
                            + ",\"model\":\"scripted\"}");
            c.call(
                    6,
                    "session/create",
                    "{\"session\":\"c\",\"history\":" + Json.write(whole) + ",\"model\":\"scripted\"}");
            JsonNode b = c.call(7, "session/transcript", "{\"session\":\"b\"}").path("transcript");
            JsonNode cc = c.call(8, "session/transcript", "{\"session\":\"c\"}").path("transcript");
            assertThat(b).isEqualTo(whole.path("transcript"));
            assertThat(cc).isEqualTo(whole.path("transcript"));
            JsonNode list = c.call(9, "session/list", null).path("sessions");
            assertThat(list.get(1).path("instructions").asText()).isEqualTo("Guard.");
            assertThat(list.get(1).path("tools").toString()).isEqualTo("[\"open_gate\"]");
            assertThat(list.get(1).path("entries").asInt()).isEqualTo(6);
        }
    }

    @Test
    void aPresentKeyWinsOverTheSavedOneEvenWhenNullOrEmpty() throws Exception {
        try (Conversation c = open("--tool-timeout", "0.2")) {
            c.call(
                    1,
                    "session/create",
                    "{\"session\":\"a\",\"instructions\":\"Guard.\",\"tools\":[" + GATE_TOOL
                            + "],\"model\":\"scripted\"}");
            c.call(2, "session/respond", "{\"session\":\"a\",\"prompt\":\"Hi.\"}");
            String saved = Json.write(
                    c.call(3, "session/transcript", "{\"session\":\"a\"}").path("transcript"));
            c.call(
                    4,
                    "session/create",
                    "{\"session\":\"nulls\",\"history\":" + saved
                            + ",\"instructions\":null,\"tools\":[],\"model\":\"scripted\"}");
            c.call(
                    5,
                    "session/create",
                    "{\"session\":\"own\",\"history\":" + saved + ",\"instructions\":\"Mine.\",\"tools\":[" + BELL_TOOL
                            + "],\"model\":\"scripted\"}");
            c.call(
                    6,
                    "session/create",
                    "{\"session\":\"restored\",\"history\":" + saved + ",\"model\":"
                            + scripted(
                                    "[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"x\"}}]},{\"template\":\"{toolOutput}\"}]")
                            + "}");
            JsonNode sessions = c.call(7, "session/list", null).path("sessions");
            assertThat(sessions.get(1).has("instructions")).isFalse();
            assertThat(sessions.get(1).path("tools")).isEmpty();
            assertThat(sessions.get(1).path("entries").asInt()).isEqualTo(2);
            assertThat(sessions.get(2).path("instructions").asText()).isEqualTo("Mine.");
            assertThat(sessions.get(2).path("tools").toString()).isEqualTo("[\"ring_bell\"]");
            assertThat(sessions.get(3).path("instructions").asText()).isEqualTo("Guard.");
            assertThat(sessions.get(3).path("tools").toString()).isEqualTo("[\"open_gate\"]");
            JsonNode turn = c.call(8, "session/respond", "{\"session\":\"restored\",\"prompt\":\"Open.\"}");
            assertThat(turn.path("text").asText())
                    .as("a restored tool is a client tool with the session's default timeout")
                    .isEqualTo("Error: Tool 'open_gate' timed out after 0.2s.");
        }
    }

    @Test
    void aMalformedHistoryNamesTheBadFieldAndCreatesNothing() throws Exception {
        try (Conversation c = open()) {
            String[][] cases = {
                {"5", "'history'"},
                {"{\"transcript\":{\"entries\":5}}", "'history.transcript.entries'"},
                {
                    "{\"type\":\"FoundationModels.Transcript\",\"version\":\"2\",\"transcript\":{\"entries\":[]}}",
                    "'history.version'"
                },
                {"{\"entries\":[{\"role\":\"wizard\",\"contents\":[]}]}", "'history.entries[0].role'"},
                {"{\"entries\":[{\"contents\":[]}]}", "'history.entries[0].role'"},
                {
                    "{\"entries\":[{\"role\":\"user\",\"contents\":[{\"type\":\"text\"}]}]}",
                    "'history.entries[0].contents[0].text'"
                },
                {
                    "{\"entries\":[{\"role\":\"tool\",\"toolCallID\":\"c\",\"contents\":[]}]}",
                    "'history.entries[0].toolName'"
                },
                {
                    "{\"entries\":[{\"role\":\"response\",\"toolCalls\":[{\"name\":\"a\",\"arguments\":\"{oops\"}]}]}",
                    "'history.entries[0].toolCalls[0].arguments'"
                },
                {
                    "{\"entries\":[{\"role\":\"user\",\"contents\":[]},{\"role\":\"instructions\",\"contents\":[]}]}",
                    "'history.entries[1].role'"
                },
                {
                    "{\"entries\":[{\"role\":\"instructions\",\"contents\":[],\"tools\":[{\"name\":\"bad name\"}]}]}",
                    "'history (saved tools)[0].name'"
                },
            };
            int id = 0;
            for (String[] bad : cases) {
                id++;
                JsonNode error = c.request(
                                id,
                                "session/create",
                                "{\"session\":\"x\",\"model\":\"scripted\",\"history\":" + bad[0] + "}")
                        .error(id);
                assertThat(error.path("code").asInt()).as(bad[0]).isEqualTo(-32602);
                assertThat(error.path("message").asText()).as(bad[0]).contains(bad[1]);
            }
            assertThat(c.call(99, "session/list", null).path("sessions")).isEmpty();
            JsonNode lenient = c.call(
                    100,
                    "session/create",
                    "{\"session\":\"x\",\"model\":\"scripted\",\"history\":{\"type\":\"FoundationModels.Transcript\","
                            + "\"version\":\"1\",\"extra\":true,\"transcript\":{\"entries\":[{\"role\":\"user\",\"contents\":[{\"type\":\"text\",\"text\":\"Hi\"}],"
                            + "\"unknown\":1},{\"role\":\"response\",\"contents\":[{\"type\":\"text\",\"text\":\"Hello\"}]}]}}}");
            assertThat(lenient.path("session").asText()).isEqualTo("x");
            assertThat(c.call(101, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("entries")
                            .asInt())
                    .isEqualTo(2);
        }
    }

    // ---------------------------------------------------------------- compaction

    @Test
    void compactionSummarizesOlderTurnsIntoTheContextNote() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "k",
                    "[]",
                    "{}",
                    "[{\"text\":\"a1\"},{\"text\":\"a2\"},{\"text\":\"a3\"},{\"text\":\"The player asked twice.\"},{\"text\":\"next\"}]");
            for (int i = 1; i <= 3; i++) {
                c.call(i, "session/respond", "{\"session\":\"k\",\"prompt\":\"p" + i + "\"}");
            }
            JsonNode compacted = c.call(
                    10,
                    "session/compact",
                    "{\"session\":\"k\",\"keepRecentTurns\":1,\"summaryInstructions\":\"Summarize.\"}");
            assertThat(compacted.toString()).isEqualTo("{\"session\":\"k\",\"summary\":\"The player asked twice.\"}");
            assertThat(c.call(11, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("entries")
                            .asInt())
                    .isEqualTo(2);
            JsonNode entries = c.call(12, "session/transcript", "{\"session\":\"k\"}")
                    .path("transcript")
                    .path("transcript")
                    .path("entries");
            assertThat(entries.get(0).path("contents").get(0).path("text").asText())
                    .isEqualTo("p3");
            JsonNode nothing = c.call(13, "session/compact", "{\"session\":\"k\"}");
            assertThat(nothing.has("summary")).isTrue();
            assertThat(nothing.get("summary").isNull()).isTrue();
            assertThat(c.call(14, "session/respond", "{\"session\":\"k\",\"prompt\":\"p4\"}")
                            .path("text")
                            .asText())
                    .as("nothing to compact calls no model")
                    .isEqualTo("next");
            assertThat(c.request(15, "session/compact", "{\"session\":\"k\",\"keepRecentTurns\":-1}")
                            .error(15)
                            .path("message")
                            .asText())
                    .contains("'keepRecentTurns'");
        }
    }

    @Test
    void aCancelledCompactionChangesNothing() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "k",
                    "[]",
                    "{}",
                    "[{\"text\":\"a1\"},{\"text\":\"a2\"},{\"text\":\"a3\"},{\"text\":\"summary\",\"delayMs\":60000}]");
            for (int i = 1; i <= 3; i++) {
                c.call(i, "session/respond", "{\"session\":\"k\",\"prompt\":\"p" + i + "\"}");
            }
            c.request(10, "session/compact", "{\"session\":\"k\"}");
            JsonNode busy = c.call(11, "session/list", null).path("sessions").get(0);
            // Failed once over stdio (2026-12-04): session/list read busy and pending one after the other, and the
            // queue's
            // worker started the compaction in between (OperationQueue.load reads both at once; OperationQueueTest).
            assertThat(busy.path("busy").asBoolean()
                            || busy.path("pendingOperations").asInt() == 1)
                    .as("the session right after session/compact: %s", busy)
                    .isTrue();
            assertThat(c.call(12, "session/cancel", "{\"session\":\"k\"}")
                            .path("cancelled")
                            .asInt())
                    .isEqualTo(1);
            assertThat(c.error(10).path("code").asInt()).isEqualTo(-32009);
            assertThat(c.call(13, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("entries")
                            .asInt())
                    .isEqualTo(6);
        }
    }

    // ---------------------------------------------------------------- context trimming

    @Test
    void aLongConversationHidesItsOldestTurnsFromTheModel() throws Exception {
        try (Conversation c = open()) {
            create(c, "long", "[]", "{}", "[]");
            String words = "word ".repeat(1600);
            List<Integer> trimmed = new ArrayList<>();
            for (int i = 1; i <= 8; i++) {
                JsonNode turn =
                        c.call(i, "session/respond", "{\"session\":\"long\",\"prompt\":\"" + i + " " + words + "\"}");
                trimmed.add(turn.path("steps").get(0).path("trimmedEntries").asInt());
            }
            assertThat(trimmed.get(0)).isZero();
            assertThat(trimmed.get(7)).isPositive();
            assertThat(trimmed.get(7) % 2).as("whole turns are hidden").isZero();
            assertThat(trimmed).isSorted();
            assertThat(c.call(20, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("entries")
                            .asInt())
                    .as("the transcript keeps everything")
                    .isEqualTo(16);
            create(c, "strict", "[]", "{\"trimHistory\":false}", "[]");
            JsonNode error = null;
            for (int i = 1; i <= 8 && error == null; i++) {
                JsonNode response = c.request(
                                30 + i, "session/respond", "{\"session\":\"strict\",\"prompt\":\"" + words + "\"}")
                        .response(30 + i);
                error = response.get("error");
            }
            assertThat(error).isNotNull();
            assertThat(code(error)).isEqualTo("context_size_exceeded");
            create(c, "reserved", "[]", "{\"reservedResponseTokens\":7000}", "[]");
            JsonNode reserved = c.request(
                            50, "session/respond", "{\"session\":\"reserved\",\"prompt\":\"" + words + "\"}")
                    .error(50);
            assertThat(reserved.path("code").asInt()).isEqualTo(-32004);
        }
    }
}
