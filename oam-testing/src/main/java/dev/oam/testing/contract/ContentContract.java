package dev.oam.testing.contract;

import static dev.oam.testing.contract.ContractSupport.code;
import static dev.oam.testing.contract.JsonKeys.keys;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import org.junit.jupiter.api.Test;

/**
 * The {@code content/generate} part of the decision contract (docs/GAMES.md, "Content"): schema-shaped content, its
 * warnings, errors and client tools, played with scripted models.
 */
public interface ContentContract extends ContractFixture {
    /** A client tool the scripted models call. */
    String SCOUT_TOOL = "{\"name\":\"scout\",\"description\":\"Look around. Returns what is near.\"}";

    /** A step calling {@link #SCOUT_TOOL}. */
    String SCOUT_CALL = "{\"toolCalls\":[{\"name\":\"scout\",\"arguments\":{}}]}";

    /** A weapon: nested objects and an array, keys required. */
    String ITEM_SCHEMA = """
            {"type": "object", "properties": {
               "name": {"type": "string"}, "price": {"type": "integer", "minimum": 0},
               "stats": {"type": "object", "properties": {"attack": {"type": "integer"}, "weight": {"type": "number"}},
                         "required": ["attack", "weight"]},
               "tags": {"type": "array", "items": {"type": "string"}}},
             "required": ["name", "price", "stats", "tags"]}""";

    @Test
    default void contentComesBackInSchemaOrderWithoutWarnings() throws Exception {
        try (Conversation c = open()) {
            JsonNode result = c.call(1, "content/generate", line("""
                    {"prompt": "A weapon for the blacksmith's shop.", "schema": %s, "context": {"town": "Ashford"},
                     "instructions": "Write loot.", "temperature": 0.8,
                     "model": {"type": "scripted", "steps": [{"json": {"tags": ["sharp"], "stats": {"weight": 2.5, "attack": 7},
                                                                        "price": 45, "name": "Iron sword"}}]}}
                    """.formatted(ITEM_SCHEMA)));
            assertThat(keys(result)).containsExactly("content");
            JsonNode content = result.path("content");
            assertThat(keys(content)).containsExactly("name", "price", "stats", "tags");
            assertThat(keys(content.path("stats"))).containsExactly("attack", "weight");
            assertThat(content.toString())
                    .isEqualTo("{\"name\":\"Iron "
                            + "sword\",\"price\":45,\"stats\":{\"attack\":7,\"weight\":2.5},\"tags\":[\"sharp\"]}");
        }
    }

    @Test
    default void contentDropsKeysAClosedSchemaDoesNotAllowAndKeepsThemOtherwise() throws Exception {
        try (Conversation c = open()) {
            JsonNode closed = c.call(1, "content/generate", line("""
                    {"prompt": "A potion.",
                     "schema": {"type": "object", "additionalProperties": false, "required": ["name", "effect"],
                                "properties": {"name": {"type": "string"},
                                               "effect": {"type": "object", "additionalProperties": false,
                                                          "properties": {"hp": {"type": "integer"}}}}},
                     "model": {"type": "scripted", "steps": [{"json": {"rarity": "rare", "effect": {"hp": 20, "note": "fizzy"},
                                                                        "name": "Red potion"}}]}}"""));
            assertThat(closed.path("content").toString()).isEqualTo("{\"name\":\"Red potion\",\"effect\":{\"hp\":20}}");
            JsonNode open = c.call(2, "content/generate", line("""
                    {"prompt": "A potion.", "schema": {"type": "object", "properties": {"name": {"type": "string"}}},
                     "model": {"type": "scripted", "steps": [{"json": {"rarity": "rare", "name": "Red potion"}}]}}"""));
            assertThat(open.path("content").toString()).isEqualTo("{\"name\":\"Red potion\",\"rarity\":\"rare\"}");
        }
    }

    @Test
    default void contentWarnsAboutUnknownParametersAndUnenforcedConstraints() throws Exception {
        try (Conversation c = open()) {
            JsonNode result = c.call(1, "content/generate", line("""
                    {"prompt": "A rumor.", "temprature": 1,
                     "schema": {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}, "required": ["code"]},
                     "model": {"type": "scripted", "steps": [{"json": {"code": "ABC"}}]}}"""));
            assertThat(keys(result)).containsExactly("content", "warnings");
            assertThat(result.path("content").toString()).isEqualTo("{\"code\":\"ABC\"}");
            assertThat(result.path("warnings")).hasSize(2);
            assertThat(result.path("warnings").get(0).asText())
                    .isEqualTo("Unknown parameter 'temprature' was ignored.");
            assertThat(result.path("warnings").get(1).asText())
                    .contains("#/properties/code: pattern '^[A-Z]{3}$' is described to the model but not enforced");
        }
    }

    @Test
    default void contentWithAnInvalidSchemaFailsWithInvalidSchema() throws Exception {
        try (Conversation c = open()) {
            JsonNode error = c.request(1, "content/generate", line("""
                    {"prompt": "x", "schema": {"type": "object", "properties": {"a": {"type": "text"}}}, "model": "scripted"}""")).error(1);
            assertThat(error.path("code").asInt()).isEqualTo(-32007);
            assertThat(code(error)).isEqualTo("invalid_schema");
            assertThat(error.path("data").path("path").asText()).isEqualTo("schema");
            assertThat(error.path("data").path("schemaPath").asText()).isEqualTo("#/properties/a/type");
            JsonNode tool = c.request(2, "content/generate", line("""
                    {"prompt": "x", "schema": {"type": "object"},
                     "tools": [{"name": "scout", "description": "d", "parameters": {"type": "string"}}]}""")).error(2);
            assertThat(tool.path("code").asInt()).isEqualTo(-32007);
            assertThat(tool.path("data").path("path").asText()).isEqualTo("tools[0].parameters");
        }
    }

    @Test
    default void contentParameterErrorsNameTheParameter() throws Exception {
        try (Conversation c = open()) {
            String[][] cases = {
                {"{\"schema\": {\"type\": \"object\"}}", "'prompt'"},
                {"{\"prompt\": 5, \"schema\": {\"type\": \"object\"}}", "'prompt'"},
                {"{\"prompt\": \"x\"}", "'schema'"},
                {"{\"prompt\": \"x\", \"schema\": \"object\"}", "'schema'"},
                {
                    "{\"prompt\": \"x\", \"schema\": {\"type\": \"object\"}, \"toolTimeoutSeconds\": -1}",
                    "'toolTimeoutSeconds'"
                },
                {"{\"prompt\": \"x\", \"schema\": {\"type\": \"object\"}, \"temperature\": \"hot\"}", "'temperature'"},
                {"{\"prompt\": \"x\", \"schema\": {\"type\": \"object\"}, \"instructions\": []}", "'instructions'"},
                {"{\"prompt\": \"x\", \"schema\": {\"type\": \"object\"}, \"tools\": [{}]}", "'tools[0].name'"},
                {
                    "{\"prompt\": \"x\", \"schema\": {\"type\": \"object\"}, \"model\": {\"type\": \"nope\"}}",
                    "'model.type'"
                },
            };
            int id = 0;
            for (String[] bad : cases) {
                id++;
                JsonNode error = c.request(id, "content/generate", line(bad[0])).error(id);
                assertThat(error.path("code").asInt()).as(bad[0]).isEqualTo(-32602);
                assertThat(error.path("message").asText()).as(bad[0]).contains(bad[1]);
            }
        }
    }

    @Test
    default void contentMayCallClientToolsFirst() throws Exception {
        try (Conversation c = open()) {
            c.request(1, "content/generate", line("""
                    {"prompt": "An item from the shop's stock.", "tools": [%s],
                     "schema": {"type": "object", "properties": {"name": {"type": "string"}, "price": {"type": "integer"}}},
                     "model": {"type": "scripted", "steps": [%s, %s]}}""".formatted(
                            SCOUT_TOOL, SCOUT_CALL, template("{\"price\":3,\"name\":\"{toolOutput}\"}"))));
            JsonNode call = c.toolCall();
            assertThat(keys(call.path("params"))).containsExactly("requestId", "call");
            c.reply(call, "{\"output\":\"Axe\"}");
            assertThat(c.result(1).path("content").toString()).isEqualTo("{\"name\":\"Axe\",\"price\":3}");
        }
    }

    @Test
    default void contentFailuresComeBackAsTheyAre() throws Exception {
        try (Conversation c = open()) {
            String params = "{\"prompt\": \"x\", \"schema\": {\"type\": \"object\", \"properties\": {\"name\": "
                    + "{\"type\": \"string\"}},"
                    + " \"required\": [\"name\"]}, \"model\": {\"type\": \"scripted\", \"steps\": [%s]}}";
            JsonNode blocked = c.request(
                            1, "content/generate", line(params.formatted("{\"error\": \"guardrail_violation\"}")))
                    .error(1);
            assertThat(blocked.path("code").asInt()).isEqualTo(-32002);
            JsonNode invalid = c.request(
                            2, "content/generate", line(params.formatted("{\"json\": {\"title\": \"x\"}}")))
                    .error(2);
            assertThat(invalid.path("code").asInt()).isEqualTo(-32012);
            assertThat(invalid.path("message").asText()).contains("name");
        }
    }

    private static String template(String text) {
        return "{\"template\":" + Json.write(TextNode.valueOf(text)) + "}";
    }

    /** The JSON text on one line (requests are written as readable text blocks). */
    private static String line(String json) {
        return Json.write(Conversation.object(json));
    }
}
