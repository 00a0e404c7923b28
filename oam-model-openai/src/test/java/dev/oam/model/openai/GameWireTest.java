package dev.oam.model.openai;

import static dev.oam.testing.openai.FakeOpenAIServer.call;
import static dev.oam.testing.openai.FakeOpenAIServer.error;
import static dev.oam.testing.openai.FakeOpenAIServer.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import dev.oam.testing.openai.FakeOpenAIServer.Filtered;
import dev.oam.testing.openai.FakeOpenAIServer.Recorded;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The game methods on an OpenAI-compatible server, through the wire: a streamed NPC conversation (grounding tool,
 * structured and text replies, content-filter fallbacks, local memory tools) and decisions.
 */
@Timeout(60)
class GameWireTest extends WireSupport {
    static final String GORM =
            "{\"name\":\"Gorm\",\"role\":\"the village blacksmith\",\"personality\":\"Gruff but fair.\"}";
    static final String FALLBACK = "Gorm grunts and turns back to his anvil.";

    /** A structured NPC reply as the model writes it inside an emulated step's {@code {"answer": …}}. */
    static String answer(String emotion, String line, String... options) {
        return "{\"answer\":" + reply(emotion, line, options) + "}";
    }

    static String reply(String emotion, String line, String... options) {
        return "{\"emotion\":\"" + emotion + "\",\"line\":\"" + line + "\",\"player_options\":"
                + Json.write(Json.strings(List.of(options))) + ",\"ends_conversation\":false}";
    }

    @Test
    void aStreamedNpcConversation() throws Exception {
        open();
        JsonNode created = c.call(
                "create",
                "npc/create",
                "{\"npc\":\"gorm\",\"persona\":" + GORM + ",\"tools\":[" + STOCK_TOOL + "],"
                        + "\"options\":{\"groundingTool\":\"check_inventory\",\"memoryTools\":\"all\",\"maxToolRounds\":3,"
                        + "\"compactAfterTurns\":0,\"fallbackLines\":[\"" + FALLBACK + "\"]},\"model\":" + fake.spec("")
                        + "}");
        assertThat(created.path("tools"))
                .extracting(JsonNode::asText)
                .containsExactly("check_inventory", "remember_fact", "change_relationship");

        // Turn 1: the grounding tool is forced on the first step, then a structured reply streams.
        String line1 = "Aye, three iron swords, 45 gold each.";
        fake.then(
                call("check_inventory", "{\"item\":\"iron sword\"}"),
                text(answer("proud", line1, "Buy one", "Too pricey", "Anything else?")));
        c.request(1, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Got any iron swords?\",\"stream\":true}");
        JsonNode toolCall = c.toolCall();
        assertThat(toolCall.path("params").path("npc").asText()).isEqualTo("gorm");
        assertThat(toolCall.path("params").path("call").path("name").asText()).isEqualTo("check_inventory");
        assertThat(toolCall.path("params").path("call").path("arguments"))
                .isEqualTo(Json.parse("{\"item\":\"iron sword\"}"));
        c.reply(toolCall, "{\"output\":{\"item\":\"iron sword\",\"stock\":3,\"price_gold\":45}}");
        JsonNode turn1 = c.result(1);

        Recorded forced = fake.chat(0);
        assertThat(forced.body().path("tool_choice"))
                .isEqualTo(Json.parse("{\"type\":\"function\",\"function\":{\"name\":\"check_inventory\"}}"));
        assertThat(forced.toolNames()).containsExactly("check_inventory");
        assertThat(forced.body().has("response_format"))
                .as("a forced step cannot answer")
                .isFalse();
        assertThat(forced.streamed()).isTrue();
        assertThat(forced.messages().get(0).path("content").asText()).contains("Gorm");
        assertThat(forced.messages()
                        .get(forced.messages().size() - 1)
                        .path("content")
                        .asText())
                .contains("Got any iron swords?");

        Recorded reply1 = fake.chat(1);
        assertThat(reply1.body().has("tool_choice"))
                .as("no forced choice after the first step")
                .isFalse();
        assertThat(reply1.body().path("response_format").path("type").asText()).isEqualTo("json_schema");
        JsonNode branches = reply1.body()
                .path("response_format")
                .path("json_schema")
                .path("schema")
                .path("anyOf");
        JsonNode replySchema =
                branches.get(branches.size() - 1).path("properties").path("answer");
        assertThat(replySchema.path("properties").path("emotion").path("enum"))
                .extracting(JsonNode::asText)
                .contains("proud", "neutral");
        assertThat(replySchema.path("required"))
                .extracting(JsonNode::asText)
                .containsExactly("emotion", "line", "player_options", "ends_conversation");
        assertThat(branches)
                .extracting(b ->
                        b.path("properties").path("name").path("enum").path(0).asText())
                .as("after the grounding tool answered, the NPC's other tools only")
                .containsExactly("remember_fact", "change_relationship", "");
        assertThat(roles(reply1.messages())).containsExactly("system", "user", "assistant", "tool");
        assertThat(reply1.messages().get(3).path("content").asText()).contains("\"stock\":3");

        assertThat(turn1.path("line").asText()).isEqualTo(line1);
        assertThat(turn1.path("emotion").asText()).isEqualTo("proud");
        assertThat(turn1.path("playerOptions"))
                .extracting(JsonNode::asText)
                .containsExactly("Buy one", "Too pricey", "Anything else?");
        assertThat(turn1.path("endsConversation").asBoolean()).isFalse();
        assertThat(turn1.path("isFallback").asBoolean()).isFalse();
        assertThat(turn1.path("toolCalls"))
                .extracting(r -> r.path("call").path("name").asText())
                .containsExactly("check_inventory");
        assertThat(turn1.path("usage").path("inputTokens").asInt()).isEqualTo(240);
        assertThat(turn1.path("usage").path("cachedInputTokens").asInt()).isEqualTo(192);
        assertThat(replay(c, 1)).isEqualTo(line1);
        assertThat(count(npcEvents(c, 1), "lineDelta")).as("the line streams").isGreaterThan(3);
        assertThat(emotions(npcEvents(c, 1))).containsExactly("proud");
        assertThat(types(npcEvents(c, 1))).startsWith("toolCallStarted", "toolCallCompleted");

        // Turn 2: memory tools run locally (no tool/call), then the reply comes on a step without tools.
        String line2 = "An axe lover, eh? I like you already.";
        fake.then(
                call("check_inventory", "{\"item\":\"axe\"}"),
                call("remember_fact", "{\"fact\":\"Aria loves axes.\"}"),
                call("change_relationship", "{\"reason\":\"She likes good steel.\",\"delta\":8}"),
                text(reply("happy", line2, "Show me your axes", "Goodbye", "How much?")));
        c.request(2, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"I'm Aria, and I love axes.\",\"stream\":true}");
        c.reply(c.toolCall(), "{\"output\":{\"item\":\"axe\",\"stock\":0}}");
        JsonNode turn2 = c.result(2);
        assertThat(c.messages().stream()
                        .filter(m -> "tool/call".equals(m.path("method").asText())))
                .as("memory tools never reach the engine")
                .hasSize(2);
        assertThat(turn2.path("toolCalls"))
                .extracting(r -> r.path("call").path("name").asText())
                .containsExactly("check_inventory", "remember_fact", "change_relationship");
        assertThat(turn2.path("relationship").asInt()).isEqualTo(8);
        assertThat(npcEvents(c, 2).stream()
                        .filter(e -> e.path("type").asText().equals("toolCallStarted"))
                        .map(e -> e.path("execution").asText()))
                .containsExactly("client", "local", "local");
        assertThat(fake.chat(3).body().has("tools")).isFalse();
        assertThat(fake.chat(4)
                        .body()
                        .path("response_format")
                        .path("json_schema")
                        .path("schema")
                        .path("anyOf"))
                .isNotEmpty();
        Recorded last = fake.chat(5);
        assertThat(last.body().has("tools")).as("maxToolRounds reached").isFalse();
        assertThat(last.body()
                        .path("response_format")
                        .path("json_schema")
                        .path("name")
                        .asText())
                .isEqualTo("Response");
        assertThat(last.messages().toString()).contains("Remembered.");
        assertThat(turn2.path("line").asText()).isEqualTo(line2);
        assertThat(replay(c, 2)).isEqualTo(line2);
        assertThat(emotions(npcEvents(c, 2))).containsExactly("happy");

        // Turn 3: the structured reply is blocked mid-stream; automatic mode retries once as text with tools off.
        String line3 = "Keep your hands off my forge.";
        fake.then(
                call("check_inventory", "{\"item\":\"forge\"}"),
                new Filtered("{\"answer\":{\"emotion\":\"angry\",\"line\":\"Touch my forge and I will"),
                text("[annoyed] " + line3));
        c.request(3, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Can I use your forge?\",\"stream\":true}");
        c.reply(c.toolCall(), "{\"output\":{\"item\":\"forge\",\"stock\":1}}");
        JsonNode turn3 = c.result(3);
        assertThat(fake.chat(6).body().path("tool_choice").isObject()).isTrue();
        assertThat(fake.chat(7).body().path("response_format").path("type").asText())
                .isEqualTo("json_schema");
        Recorded retry = fake.chat(8);
        assertThat(retry.body().has("tools")).isFalse();
        assertThat(retry.body().has("tool_choice")).isFalse();
        assertThat(retry.body().has("response_format")).isFalse();
        assertThat(retry.streamed()).isTrue();
        String retryPrompt = retry.messages()
                .get(retry.messages().size() - 1)
                .path("content")
                .asText();
        assertThat(retryPrompt)
                .contains("Can I use your forge?", "Facts you just looked up:", "check_inventory", "square brackets");
        assertThat(retry.messages().get(0).path("content").asText()).contains("You remember: Aria loves axes");
        assertThat(turn3.path("line").asText()).isEqualTo(line3);
        assertThat(turn3.path("emotion").asText()).isEqualTo("annoyed");
        assertThat(turn3.path("playerOptions")).isEmpty();
        assertThat(turn3.path("isFallback").asBoolean()).isFalse();
        assertThat(turn3.path("toolCalls")).hasSize(1);
        List<JsonNode> events3 = npcEvents(c, 3);
        assertThat(emotions(events3)).containsExactly("angry", "annoyed");
        assertThat(count(events3, "lineReset"))
                .as("the blocked line is replaced")
                .isPositive();
        assertThat(replay(c, 3)).isEqualTo(line3);

        // Turn 4: the text retry is blocked too: the fallback line.
        fake.then(
                call("check_inventory", "{\"item\":\"dagger\"}"),
                new Filtered("{\"answer\":{\"emotion\":\"angry\",\"line\":\"I will break your"),
                new Filtered("[angry] Get out before I"));
        c.request(4, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Give me that dagger or else.\",\"stream\":true}");
        c.reply(c.toolCall(), "{\"output\":{\"item\":\"dagger\",\"stock\":2}}");
        JsonNode turn4 = c.result(4);
        assertThat(fake.chat(11).body().has("tools")).isFalse();
        assertThat(fake.chat(11).body().has("response_format")).isFalse();
        assertThat(turn4.path("isFallback").asBoolean()).isTrue();
        assertThat(turn4.path("line").asText()).isEqualTo(FALLBACK);
        assertThat(turn4.path("emotion").asText()).isEqualTo("neutral");
        assertThat(turn4.path("relationship").asInt()).isEqualTo(8);
        assertThat(replay(c, 4)).isEqualTo(FALLBACK);
        assertThat(emotions(npcEvents(c, 4))).endsWith("neutral");

        // Turn 5: text mode: "[emotion] line" on a step that offers the tools with tool_choice auto.
        c.call("update", "npc/update", "{\"npc\":\"gorm\",\"options\":{\"replyFormat\":\"text\"}}");
        String line5 = "Come back any time, Aria.";
        fake.then(call("check_inventory", "{\"item\":\"whetstone\"}"), text("[grateful] " + line5));
        c.request(5, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Thanks, Gorm. Farewell!\",\"stream\":true}");
        c.reply(c.toolCall(), "{\"output\":{\"item\":\"whetstone\",\"stock\":5}}");
        JsonNode turn5 = c.result(5);
        assertThat(fake.chat(12).body().path("tool_choice").isObject()).isTrue();
        Recorded textStep = fake.chat(13);
        assertThat(textStep.body().path("tool_choice").asText()).isEqualTo("auto");
        assertThat(textStep.toolNames())
                .as("the grounding tool answered: the others only")
                .containsExactly("remember_fact", "change_relationship");
        assertThat(textStep.body().has("response_format")).isFalse();
        // The history holds the earlier successful turns only (the fallback turn left it unchanged).
        assertThat(textStep.messages().toString()).contains(line3).doesNotContain("Give me that dagger");
        assertThat(turn5.path("line").asText()).isEqualTo(line5);
        assertThat(turn5.path("emotion").asText()).isEqualTo("grateful");
        assertThat(turn5.path("playerOptions")).isEmpty();
        assertThat(turn5.path("isFallback").asBoolean()).isFalse();
        assertThat(replay(c, 5)).isEqualTo(line5);
        assertThat(count(npcEvents(c, 5), "lineDelta")).isGreaterThan(3);
        assertThat(emotions(npcEvents(c, 5))).containsExactly("grateful");

        JsonNode state = c.call("state", "npc/state", "{\"npc\":\"gorm\"}").path("state");
        assertThat(state.path("memory").path("facts"))
                .extracting(JsonNode::asText)
                .containsExactly("Aria loves axes.");
        assertThat(state.path("memory").path("relationship").asInt()).isEqualTo(8);
        assertThat(fake.chats()).hasSize(14);
        assertThat(fake.remaining()).isZero();
        assertThat(fake.problems()).isEmpty();
    }

    @Test
    void aDecisionAsAPersonaWithContextFacts() throws Exception {
        open();
        fake.then(text("{\"reasoning\":\"Snik is timid and badly hurt.\",\"choice\":\"flee\",\"confidence\":80}"));
        JsonNode result = c.call(
                1,
                "decision/decide",
                "{\"situation\":\"The player draws a sword.\","
                        + "\"options\":[{\"id\":\"fight\",\"description\":\"Stand and fight\"},{\"id\":\"flee\",\"description\":\"Run into the woods\"},\"beg\"],"
                        + "\"actor\":{\"name\":\"Snik\",\"role\":\"a goblin scout\",\"personality\":\"Timid and greedy.\"},"
                        + "\"context\":{\"hp\":3,\"playerHp\":40},\"model\":" + fake.spec("") + "}");
        Recorded request = fake.chat(0);
        assertThat(request.hasTools()).isFalse();
        assertThat(request.body().has("tool_choice")).isFalse();
        JsonNode schema =
                request.body().path("response_format").path("json_schema").path("schema");
        assertThat(request.body().path("response_format").path("type").asText()).isEqualTo("json_schema");
        assertThat(schema.path("properties").path("choice").path("enum"))
                .extracting(JsonNode::asText)
                .containsExactly("fight", "flee", "beg");
        assertThat(schema.path("required"))
                .extracting(JsonNode::asText)
                .containsExactly("reasoning", "choice", "confidence");
        assertThat(roles(request.messages())).containsExactly("system", "user");
        assertThat(request.messages().get(0).path("content").asText())
                .contains("You decide for Snik, a goblin scout.", "Timid and greedy");
        assertThat(request.messages().get(1).path("content").asText())
                .contains(
                        "Situation: The player draws a sword.",
                        "Facts:",
                        "hp",
                        "40",
                        "- flee: Run into the woods",
                        "- beg");

        assertThat(result.path("optionID").asText()).isEqualTo("flee");
        assertThat(result.path("reasoning").asText()).isEqualTo("Snik is timid and badly hurt.");
        assertThat(result.path("confidence").asInt()).isEqualTo(80);
        assertThat(result.path("isFallback").asBoolean()).isFalse();
        assertThat(result.path("toolCalls")).isEmpty();
        assertThat(result.path("usage").path("inputTokens").asInt()).isEqualTo(120);
        assertThat(fake.problems()).isEmpty();
    }

    @Test
    void decideManyKeepsAFailureInItsItemAndDecidesAsAnNpc() throws Exception {
        open();
        c.call("create", "npc/create", "{\"npc\":\"gorm\",\"persona\":" + GORM + ",\"model\":" + fake.spec("") + "}");
        fake.then(
                text(
                        "{\"reasoning\":\"Gorm is fair, so he waits for payment.\",\"choice\":\"wait\",\"confidence\":70}"),
                error(
                        429,
                        "{\"error\":{\"message\":\"Too many requests\",\"type\":\"rate_limit_exceeded\"}}",
                        Map.of("Retry-After", "5")),
                text("{\"reasoning\":\"Guards must keep order.\",\"choice\":\"arrest\",\"confidence\":55}"));
        JsonNode result = c.call(
                1,
                "decision/decideMany",
                "{\"maxConcurrency\":1,\"model\":" + fake.spec("") + ",\"requests\":["
                        + "{\"situation\":\"A customer haggles over a sword.\",\"options\":[\"wait\",\"refuse\"],\"actor\":\"gorm\"},"
                        + "{\"situation\":\"A wolf howls.\",\"options\":[\"hide\",\"howl\"],\"actor\":{\"name\":\"Pip\"}},"
                        + "{\"situation\":\"A thief runs past.\",\"options\":[\"arrest\",\"ignore\"],\"actor\":{\"name\":\"Bram\",\"role\":\"a guard\"}}]}");
        JsonNode results = result.path("results");
        assertThat(results).hasSize(3);
        assertThat(results.get(0).path("optionID").asText()).isEqualTo("wait");
        assertThat(results.get(0).path("confidence").asInt()).isEqualTo(70);
        assertThat(results.get(0).has("error")).isFalse();
        JsonNode failed = results.get(1).path("error");
        assertThat(results.get(1).has("optionID")).isFalse();
        assertThat(failed.path("code").asInt()).isEqualTo(-32005);
        assertThat(failed.path("data").path("retryAfterSeconds").asInt()).isEqualTo(5);
        assertThat(failed.path("message").asText()).contains("Too many requests");
        assertThat(results.get(2).path("optionID").asText()).isEqualTo("arrest");

        assertThat(fake.chats()).hasSize(3);
        assertThat(fake.chat(0).messages().get(0).path("content").asText())
                .contains("You decide for Gorm, the village blacksmith.", "Gruff but fair");
        assertThat(fake.chat(0)
                        .body()
                        .path("response_format")
                        .path("json_schema")
                        .path("schema")
                        .path("properties")
                        .path("choice")
                        .path("enum"))
                .extracting(JsonNode::asText)
                .containsExactly("wait", "refuse");
        assertThat(fake.chat(1).messages().get(0).path("content").asText()).contains("You decide for Pip.");
        assertThat(fake.chat(2).messages().get(0).path("content").asText()).contains("You decide for Bram, a guard.");
        assertThat(fake.problems()).isEmpty();
    }

    /** Replays an {@code npc/talk}'s lineDelta/lineReset events: what a client's typewriter shows. */
    static String replay(Conversation c, Object requestId) {
        StringBuilder shown = new StringBuilder();
        for (JsonNode event : npcEvents(c, requestId)) {
            switch (event.path("type").asText()) {
                case "lineDelta" -> shown.append(event.path("delta").asText());
                case "lineReset" -> {
                    shown.setLength(0);
                    shown.append(event.path("line").asText());
                }
                default -> {}
            }
        }
        return shown.toString();
    }

    static List<JsonNode> npcEvents(Conversation c, Object requestId) {
        String key = Json.write(Json.mapper().valueToTree(requestId));
        return c.messages().stream()
                .filter(m -> Conversation.isEvent(m, "npc/event")
                        && Json.write(m.path("params").path("requestId")).equals(key))
                .peek(m -> assertThat(m.path("params").path("npc").asText()).isEqualTo("gorm"))
                .map(m -> m.path("params").path("event"))
                .toList();
    }

    static List<String> emotions(List<JsonNode> events) {
        return events.stream()
                .filter(e -> e.path("type").asText().equals("emotion"))
                .map(e -> e.path("emotion").asText())
                .toList();
    }

    static long count(List<JsonNode> events, String type) {
        return events.stream().filter(e -> e.path("type").asText().equals(type)).count();
    }
}
