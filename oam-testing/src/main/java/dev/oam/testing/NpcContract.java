package dev.oam.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The {@code npc/*} contract (PROTOCOL.md §6, GAME-LAYER.md §3) on the scripted model. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class NpcContract extends ContractSupport {
    protected static final String INVENTORY_TOOL =
            "{\"name\":\"check_inventory\",\"description\":\"Look up an item's stock and price.\","
                    + "\"parameters\":{\"type\":\"object\",\"properties\":{\"item\":{\"type\":\"string\"}},\"required\":[\"item\"]}}";
    protected static final String GORM =
            "{\"name\":\"Gorm\",\"role\":\"the village blacksmith\",\"personality\":\"Gruff but fair\"}";

    /** For the test class that runs this contract against its transport. */
    protected NpcContract() {}

    protected static JsonNode npc(Conversation c, String id, String optionsJson, String toolsJson, String stepsJson) {
        return c.call(
                "npc-" + id,
                "npc/create",
                "{\"npc\":\"" + id + "\",\"persona\":" + GORM + ",\"tools\":" + toolsJson + ",\"options\":"
                        + optionsJson + ",\"model\":" + scripted(stepsJson) + "}");
    }

    protected static String reply(String emotion, String line) {
        return "{\"json\":{\"emotion\":\"" + emotion + "\",\"line\":\"" + line
                + "\",\"player_options\":[\"A\",\"B\",\"C\"]," + "\"ends_conversation\":false}}";
    }

    private static List<String> keys(JsonNode node) {
        List<String> keys = new ArrayList<>();
        node.fieldNames().forEachRemaining(keys::add);
        return keys;
    }

    /** Replays lineDelta/lineReset events of one request: the result every client's typewriter shows. */
    protected static String replay(Conversation c, Object requestId) {
        String key = Json.write(Json.mapper().valueToTree(requestId));
        StringBuilder shown = new StringBuilder();
        for (JsonNode m : c.messages()) {
            if (Conversation.isEvent(m, "npc/event")
                    && Json.write(m.path("params").path("requestId")).equals(key)) {
                JsonNode event = m.path("params").path("event");
                switch (event.path("type").asText()) {
                    case "lineDelta" -> shown.append(event.path("delta").asText());
                    case "lineReset" -> shown.setLength(0);
                    default -> {}
                }
                if (event.path("type").asText().equals("lineReset")) {
                    shown.append(event.path("line").asText());
                }
            }
        }
        return shown.toString();
    }

    protected static List<JsonNode> npcEvents(Conversation c, Object requestId) {
        String key = Json.write(Json.mapper().valueToTree(requestId));
        return c.messages().stream()
                .filter(m -> Conversation.isEvent(m, "npc/event")
                        && Json.write(m.path("params").path("requestId")).equals(key))
                .map(m -> m.path("params").path("event"))
                .toList();
    }

    @Test
    void createValidatesEverythingAndListsTheToolsTheModelSees() throws Exception {
        try (Conversation c = open()) {
            String[][] cases = {
                {"{}", "'persona'"},
                {"{\"persona\":{}}", "'persona.name'"},
                {"{\"persona\":{\"name\":\"  \"}}", "'persona.name'"},
                {"{\"persona\":{\"name\":\"A\",\"defaultEmotion\":\"bored\"}}", "'persona.defaultEmotion'"},
                {"{\"persona\":{\"name\":\"A\",\"maxSentences\":0}}", "'persona.maxSentences'"},
                {"{\"persona\":{\"name\":\"A\",\"goals\":\"win\"}}", "'persona.goals'"},
                {"{\"persona\":{\"name\":\"A\"},\"options\":{\"replyFormat\":\"yaml\"}}", "'options.replyFormat'"},
                {"{\"persona\":{\"name\":\"A\"},\"options\":{\"playerOptionCount\":5}}", "'options.playerOptionCount'"},
                {"{\"persona\":{\"name\":\"A\"},\"options\":{\"memoryTools\":[\"forget\"]}}", "'options.memoryTools'"},
                {"{\"persona\":{\"name\":\"A\"},\"options\":{\"emotions\":[\"zen\"]}}", "'options.emotions'"},
                {
                    "{\"persona\":{\"name\":\"A\"},\"options\":{\"toolTimeoutSeconds\":90000}}",
                    "'options.toolTimeoutSeconds'"
                },
                {
                    "{\"persona\":{\"name\":\"A\"},\"options\":{\"groundingTool\":\"check_inventory\"}}",
                    "'options.groundingTool'"
                },
                {
                    "{\"persona\":{\"name\":\"A\"},\"tools\":[{\"name\":\"remember_fact\",\"description\":\"x\"}]}",
                    "built-in"
                },
                {"{\"persona\":{\"name\":\"A\"},\"memory\":{\"relationship\":300}}", "'memory.relationship'"},
                {"{\"persona\":{\"name\":\"A\"},\"npc\":\"\"}", "'npc'"},
            };
            int id = 0;
            for (String[] bad : cases) {
                id++;
                JsonNode error = c.request(id, "npc/create", bad[0]).error(id);
                assertThat(error.path("code").asInt()).as(bad[0]).isEqualTo(-32602);
                assertThat(error.path("message").asText()).as(bad[0]).contains(bad[1]);
            }
            JsonNode world = c.request(50, "npc/create", "{\"persona\":{\"name\":\"A\"},\"world\":\"nowhere\"}")
                    .error(50);
            assertThat(world.path("code").asInt()).isEqualTo(-32052);
            JsonNode created = c.call(
                    51,
                    "npc/create",
                    "{\"persona\":{\"name\":\"A\",\"mood\":\"x\"},\"tools\":[" + INVENTORY_TOOL
                            + ",{\"name\":\"a\",\"description\":\"A.\"},{\"name\":\"b\",\"description\":\"B.\"},{\"name\":\"c\",\"description\":\"C.\"}],"
                            + "\"options\":{\"memoryTools\":\"all\",\"colour\":1},\"model\":\"scripted\",\"extra\":true}");
            assertThat(created.path("npc").asText()).isEqualTo("npc1");
            assertThat(created.path("tools").toString())
                    .isEqualTo("[\"check_inventory\",\"a\",\"b\",\"c\",\"remember_fact\",\"change_relationship\"]");
            assertThat(created.path("warnings").toString())
                    .contains("'extra'")
                    .contains("'persona.mood'")
                    .contains("'options.colour'")
                    .contains("6 tools");
            JsonNode dup = c.request(52, "npc/create", "{\"npc\":\"npc1\",\"persona\":{\"name\":\"B\"}}")
                    .error(52);
            assertThat(dup.path("code").asInt()).isEqualTo(-32051);
            assertThat(dup.path("data").path("npc").asText()).isEqualTo("npc1");
            assertThat(c.call(53, "npc/create", "{\"persona\":{\"name\":\"C\"},\"model\":\"scripted\"}")
                            .path("npc")
                            .asText())
                    .isEqualTo("npc2");
        }
    }

    @Test
    void theNpcLimitIs128() throws Exception {
        try (Conversation c = open()) {
            for (int i = 0; i < 128; i++) {
                c.request(i, "npc/create", "{\"persona\":{\"name\":\"N\"},\"model\":\"scripted\"}");
            }
            c.result(127);
            JsonNode error = c.request(200, "npc/create", "{\"persona\":{\"name\":\"N\"},\"model\":\"scripted\"}")
                    .error(200);
            assertThat(error.path("code").asInt()).isEqualTo(-32055);
            assertThat(error.path("data").path("limit").asInt()).isEqualTo(128);
        }
    }

    @Test
    void aStructuredTurnGroundedByATool() throws Exception {
        try (Conversation c = open()) {
            npc(
                    c,
                    "gorm",
                    "{\"groundingTool\":\"check_inventory\"}",
                    "[" + INVENTORY_TOOL + "]",
                    "[{\"toolCalls\":[{\"name\":\"check_inventory\",\"arguments\":{\"item\":\"iron sword\"}}]},"
                            + "{\"json\":{\"emotion\":\"proud\",\"line\":\"Gorm: Aye, three iron swords, 45 gold each.\","
                            + "\"player_options\":[\"1. Buy one\",\"- Too pricey\",\"buy one\"],\"ends_conversation\":true}}]");
            c.request(2, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Got any iron swords?\"}");
            JsonNode call = c.toolCall();
            assertThat(call.path("params").path("npc").asText()).isEqualTo("gorm");
            assertThat(call.path("params").has("session")).isFalse();
            c.reply(call, "{\"output\":{\"item\":\"iron sword\",\"stock\":3,\"price_gold\":45}}");
            JsonNode turn = c.result(2);
            assertThat(keys(turn))
                    .containsExactly(
                            "npc",
                            "line",
                            "emotion",
                            "playerOptions",
                            "endsConversation",
                            "toolCalls",
                            "relationship",
                            "isFallback",
                            "usage");
            assertThat(turn.path("line").asText()).isEqualTo("Aye, three iron swords, 45 gold each.");
            assertThat(turn.path("emotion").asText()).isEqualTo("proud");
            assertThat(turn.path("playerOptions").toString()).isEqualTo("[\"Buy one\",\"Too pricey\"]");
            assertThat(turn.path("endsConversation").asBoolean()).isTrue();
            assertThat(turn.path("toolCalls")
                            .get(0)
                            .path("output")
                            .path("stock")
                            .asInt())
                    .isEqualTo(3);
            assertThat(turn.path("isFallback").asBoolean()).isFalse();
            assertThat(turn.path("relationship").asInt()).isZero();
        }
    }

    @Test
    void aStructuredReplyThatMissesTheSchemaIsReadLenientlyInsteadOfFailingTheTurn() throws Exception {
        try (Conversation c = open()) {
            // The default count is 3: two usable options (after an empty one and a duplicate), an emotion outside the
            // enum, no ends_conversation and a key the schema does not have.
            npc(
                    c,
                    "few",
                    "{\"replyFormat\":\"structured\"}",
                    "[]",
                    "[{\"json\":{\"emotion\":\"gruff\",\"line\":\"Hm.\","
                            + "\"player_options\":[\"Bye\",\" \",\"bye\",\"* Why?\"],\"thoughts\":\"tired\"}}]");
            JsonNode few = c.call(2, "npc/talk", "{\"npc\":\"few\",\"line\":\"Hello\"}");
            assertThat(few.path("line").asText()).isEqualTo("Hm.");
            assertThat(few.path("emotion").asText()).isEqualTo("annoyed");
            assertThat(few.path("playerOptions").toString()).isEqualTo("[\"Bye\",\"Why?\"]");
            assertThat(few.path("endsConversation").asBoolean(true)).isFalse();
            assertThat(few.path("isFallback").asBoolean(true)).isFalse();
            // Count 2 and three options: the first two are kept. An emotion nothing matches is the default one.
            npc(
                    c,
                    "many",
                    "{\"replyFormat\":\"structured\",\"playerOptionCount\":2}",
                    "[]",
                    "[{\"json\":{\"emotion\":\"zzz\",\"line\":\"Welcome!\",\"player_options\":[\"1. A\",\"2) B\",\"3. C\"],"
                            + "\"ends_conversation\":true}}]");
            JsonNode many = c.call(3, "npc/talk", "{\"npc\":\"many\",\"line\":\"Hello\"}");
            assertThat(many.path("playerOptions").toString()).isEqualTo("[\"A\",\"B\"]");
            assertThat(many.path("emotion").asText()).isEqualTo("neutral");
            assertThat(many.path("endsConversation").asBoolean()).isTrue();
            // No line at all: the turn still succeeds, with a fallback line.
            npc(
                    c,
                    "mute",
                    "{\"replyFormat\":\"structured\",\"playerOptionCount\":0}",
                    "[]",
                    "[{\"json\":{\"emotion\":\"sad\",\"player_options\":[\"x\"]}}]");
            JsonNode mute = c.call(4, "npc/talk", "{\"npc\":\"mute\",\"line\":\"Hello\"}");
            assertThat(mute.path("isFallback").asBoolean()).isTrue();
            assertThat(mute.path("emotion").asText()).isEqualTo("sad");
            assertThat(mute.path("playerOptions")).isEmpty();
            // An answer that is not a JSON object cannot be read as a reply.
            npc(c, "list", "{\"replyFormat\":\"structured\"}", "[]", "[{\"json\":[\"Hm.\"]}]");
            assertThat(c.request(5, "npc/talk", "{\"npc\":\"list\",\"line\":\"Hello\"}")
                            .error(5)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32012);
        }
    }

    @Test
    void aTurnsUsageCountsEveryAttemptItMade() throws Exception {
        try (Conversation c = open()) {
            String toolStep = "{\"toolCalls\":[{\"name\":\"check_inventory\",\"arguments\":{\"item\":\"axe\"}}]}";
            String blocked = "{\"error\":\"guardrail_violation\"}";
            String[][] npcs = {
                {"answered", "structured", toolStep + "," + reply("happy", "Two axes.")},
                {"blocked", "structured", toolStep + "," + blocked},
                {"retried", "automatic", toolStep + "," + blocked + ",{\"text\":\"[happy] Two axes, thirty gold.\"}"},
                {"retryBlocked", "automatic", toolStep + "," + blocked + "," + blocked},
            };
            List<JsonNode> usage = new ArrayList<>();
            for (String[] n : npcs) {
                npc(
                        c,
                        n[0],
                        "{\"replyFormat\":\"" + n[1] + "\",\"groundingTool\":\"check_inventory\"}",
                        "[" + INVENTORY_TOOL + "]",
                        "[" + n[2] + "]");
                c.request("talk-" + n[0], "npc/talk", "{\"npc\":\"" + n[0] + "\",\"line\":\"Axes?\"}");
                c.reply(c.toolCall(), "{\"output\":\"2 axes, 30 gold\"}");
                usage.add(c.result("talk-" + n[0]).path("usage"));
            }
            JsonNode answered = usage.get(0);
            JsonNode fallback = usage.get(1);
            JsonNode retried = usage.get(2);
            JsonNode retryFallback = usage.get(3);
            // The blocked step read the same prompt the answered one did; only the answer's tokens are missing.
            assertThat(fallback.path("inputTokens").asInt())
                    .isEqualTo(answered.path("inputTokens").asInt());
            assertThat(fallback.path("outputTokens").asInt())
                    .isPositive()
                    .isLessThan(answered.path("outputTokens").asInt());
            // A retry adds its own step to the blocked attempt's two.
            assertThat(retried.path("inputTokens").asInt())
                    .isEqualTo(retryFallback.path("inputTokens").asInt())
                    .isGreaterThan(fallback.path("inputTokens").asInt());
            assertThat(retryFallback.path("outputTokens").asInt())
                    .isEqualTo(fallback.path("outputTokens").asInt());
            assertThat(retried.path("outputTokens").asInt())
                    .isGreaterThan(retryFallback.path("outputTokens").asInt());
            for (JsonNode u : usage) {
                assertThat(u.path("totalTokens").asInt())
                        .isEqualTo(u.path("inputTokens").asInt()
                                + u.path("outputTokens").asInt());
            }
        }
    }

    @Test
    void aLongStreamedConversationsEventsAddUpToEachLine() throws Exception {
        try (Conversation c = open()) {
            String[] lines = {
                "Welcome to my forge, traveler.",
                "\\\"Iron is cheap, steel is not.\\\"",
                "Gorm: Off with you now!",
                "Come back when the moon is full and the coals are hot."
            };
            StringBuilder steps = new StringBuilder("[");
            for (int i = 0; i < lines.length; i++) {
                steps.append(i == 0 ? "" : ",")
                        .append("{\"json\":{\"emotion\":\"")
                        .append(i % 2 == 0 ? "happy" : "annoyed")
                        .append("\",\"line\":\"")
                        .append(lines[i])
                        .append("\",\"player_options\":[\"x\",\"y\",\"z\"],\"ends_conversation\":false},\"chunks\":")
                        .append(3 + i)
                        .append('}');
            }
            steps.append(",{\"text\":\"[worried] Gorm: \\\"The forge is cold.\\\"\",\"chunks\":5}]");
            npc(c, "gorm", "{}", "[]", steps.toString());
            for (int i = 0; i < lines.length; i++) {
                c.request(10 + i, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Line " + i + "\",\"stream\":true}");
            }
            for (int i = 0; i < lines.length; i++) {
                JsonNode turn = c.result(10 + i);
                assertThat(replay(c, 10 + i))
                        .as("turn %d", i)
                        .isEqualTo(turn.path("line").asText());
                List<JsonNode> events = npcEvents(c, 10 + i);
                assertThat(events.get(0).path("type").asText()).isEqualTo("emotion");
                assertThat(events.stream()
                                .filter(e -> e.path("type").asText().equals("emotion"))
                                .reduce((a, b) -> b)
                                .orElseThrow()
                                .path("emotion")
                                .asText())
                        .isEqualTo(turn.path("emotion").asText());
                assertThat(events.stream()
                                .filter(e -> e.path("type").asText().equals("lineDelta"))
                                .count())
                        .isGreaterThan(1);
            }
            assertThat(c.result(11).path("line").asText()).isEqualTo("Iron is cheap, steel is not.");
            assertThat(c.result(11).path("emotion").asText()).isEqualTo("annoyed");
            assertThat(c.result(12).path("line").asText()).isEqualTo("Off with you now!");
            c.call(20, "npc/update", "{\"npc\":\"gorm\",\"options\":{\"replyFormat\":\"text\"}}");
            c.request(21, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Still open?\",\"stream\":true}");
            JsonNode text = c.result(21);
            assertThat(text.path("line").asText()).isEqualTo("The forge is cold.");
            assertThat(text.path("emotion").asText()).isEqualTo("worried");
            assertThat(text.path("playerOptions")).isEmpty();
            assertThat(replay(c, 21)).isEqualTo("The forge is cold.");
        }
    }

    @Test
    void automaticModeRetriesABlockedTurnOnceAsTextReusingToolResults() throws Exception {
        try (Conversation c = open()) {
            npc(
                    c,
                    "gorm",
                    "{\"groundingTool\":\"check_inventory\"}",
                    "[" + INVENTORY_TOOL + "]",
                    "[{\"toolCalls\":[{\"name\":\"check_inventory\",\"arguments\":{\"item\":\"axe\"}}]},{\"error\":\"guardrail_violation\"},"
                            + "{\"template\":\"[happy] {prompt}\"}]");
            c.request(2, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Axes?\",\"stream\":true}");
            c.reply(c.toolCall(), "{\"output\":\"2 axes, 30 gold\"}");
            JsonNode turn = c.result(2);
            assertThat(turn.path("isFallback").asBoolean()).isFalse();
            assertThat(turn.path("emotion").asText()).isEqualTo("happy");
            assertThat(turn.path("line").asText())
                    .contains("Player: Axes?")
                    .contains("check_inventory")
                    .contains("2 axes, 30 gold");
            assertThat(turn.path("toolCalls")).hasSize(1);
            assertThat(replay(c, 2)).isEqualTo(turn.path("line").asText());
            assertThat(c.messages().stream()
                            .filter(m -> "tool/call".equals(m.path("method").asText())))
                    .as("tools are not run again")
                    .hasSize(1);
        }
    }

    @Test
    void blockedTurnsFallBackWithRotatingLinesAndLeaveNoTrace() throws Exception {
        try (Conversation c = open()) {
            npc(
                    c,
                    "gorm",
                    "{\"replyFormat\":\"structured\",\"fallbackLines\":[\" One. \",\"\",\"Two.\"]}",
                    "[]",
                    "[{\"error\":\"guardrail_violation\"},{\"error\":\"refusal\"},{\"error\":\"guardrail_violation\"},"
                            + "{\"json\":{\"emotion\":\"sad\",\"line\":\"  \",\"player_options\":[\"a\",\"b\",\"c\"],\"ends_conversation\":false}}]");
            List<String> fallbackLines = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                c.request(10 + i, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Hey\",\"stream\":true}");
                JsonNode turn = c.result(10 + i);
                assertThat(turn.path("isFallback").asBoolean()).isTrue();
                assertThat(turn.path("emotion").asText()).isEqualTo(i < 3 ? "neutral" : "sad");
                fallbackLines.add(turn.path("line").asText());
                assertThat(replay(c, 10 + i)).isEqualTo(turn.path("line").asText());
            }
            assertThat(fallbackLines).containsExactly("One.", "Two.", "One.", "Two.");
            JsonNode list = c.call(20, "npc/list", null).path("npcs").get(0);
            assertThat(list.path("turnCount").asInt())
                    .as("blocked exchanges never enter the history")
                    .isEqualTo(1);
            npc(
                    c,
                    "strict",
                    "{\"replyFormat\":\"structured\",\"fallbackOnGuardrail\":false}",
                    "[]",
                    "[{\"error\":\"guardrail_violation\"}]");
            assertThat(c.request(21, "npc/talk", "{\"npc\":\"strict\",\"line\":\"Hey\"}")
                            .error(21)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32002);
            npc(c, "defaults", "{\"replyFormat\":\"text\"}", "[]", "[{\"error\":\"refusal\"}]");
            assertThat(c.call(22, "npc/talk", "{\"npc\":\"defaults\",\"line\":\"Hey\"}")
                            .path("line")
                            .asText())
                    .isEqualTo("Let's talk about something else.");
        }
    }

    @Test
    void memoryToolsAreStagedAndCommittedOnlyOnSuccess() throws Exception {
        try (Conversation c = open()) {
            c.call(
                    1,
                    "npc/create",
                    "{\"npc\":\"m\",\"persona\":" + GORM
                            + ",\"memory\":{\"facts\":[\"Aria likes axes.\"],\"relationship\":95},"
                            + "\"options\":{\"memoryTools\":\"all\",\"maxRelationshipChange\":10,\"replyFormat\":\"text\"},\"model\":"
                            + scripted(
                                    "[{\"toolCalls\":[{\"name\":\"remember_fact\",\"arguments\":{\"fact\":\"aria likes AXES\"}},"
                                            + "{\"name\":\"remember_fact\",\"arguments\":{\"fact\":\"Aria lost her ring.\"}},"
                                            + "{\"name\":\"change_relationship\",\"arguments\":{\"reason\":\"kind\",\"delta\":10}}]},{\"template\":\"[happy] {toolOutputs}\"},"
                                            + "{\"toolCalls\":[{\"name\":\"remember_fact\",\"arguments\":{\"fact\":\"Never stored.\"}},"
                                            + "{\"name\":\"change_relationship\",\"arguments\":{\"reason\":\"rude\",\"delta\":-30}}]},{\"error\":\"model_unavailable\"}]")
                            + "}");
            c.request(2, "npc/talk", "{\"npc\":\"m\",\"line\":\"I'm Aria.\",\"stream\":true}");
            JsonNode turn = c.result(2);
            assertThat(turn.path("line").asText())
                    .contains("You already know that.")
                    .contains("Remembered.")
                    .contains("trusting toward the player (100)");
            assertThat(turn.path("relationship").asInt()).isEqualTo(100);
            List<JsonNode> started = npcEvents(c, 2).stream()
                    .filter(e -> e.path("type").asText().equals("toolCallStarted"))
                    .toList();
            assertThat(started)
                    .hasSize(3)
                    .allSatisfy(e -> assertThat(e.path("execution").asText()).isEqualTo("local"));
            assertThat(c.messages().stream()
                            .filter(m -> "tool/call".equals(m.path("method").asText())))
                    .isEmpty();
            JsonNode failed = c.request(3, "npc/talk", "{\"npc\":\"m\",\"line\":\"Whatever.\"}")
                    .error(3);
            assertThat(failed.path("code").asInt()).isEqualTo(-32001);
            JsonNode state = c.call(4, "npc/state", "{\"npc\":\"m\"}").path("state");
            assertThat(state.path("memory").path("facts").toString())
                    .isEqualTo("[\"Aria likes axes.\",\"Aria lost her ring.\"]");
            assertThat(state.path("memory").path("relationship").asInt()).isEqualTo(100);
            assertThat(c.call(5, "npc/list", null)
                            .path("npcs")
                            .get(0)
                            .path("relationship")
                            .asInt())
                    .isEqualTo(100);
        }
    }

    @Test
    void saveDeleteRestoreAndTalkAgain() throws Exception {
        try (Conversation c = open()) {
            npc(
                    c,
                    "gorm",
                    "{\"replyFormat\":\"text\",\"playerOptionCount\":2}",
                    "[" + INVENTORY_TOOL + "]",
                    "[{\"text\":\"[happy] Hello.\"},{\"text\":\"[sad] Goodbye.\"}]");
            c.call(2, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Hi\"}");
            c.call(
                    3,
                    "npc/update",
                    "{\"npc\":\"gorm\",\"memory\":{\"relationship\":40,\"facts\":[\"Aria returned the ring.\"]}}");
            JsonNode whole = c.call(4, "npc/state", "{\"npc\":\"gorm\"}");
            JsonNode state = whole.path("state");
            assertThat(keys(state))
                    .containsExactly("version", "persona", "memory", "transcript", "npc", "options", "tools", "world");
            assertThat(state.path("version").asInt()).isEqualTo(1);
            assertThat(state.path("world").isNull()).isTrue();
            assertThat(state.path("options").path("replyFormat").asText()).isEqualTo("text");
            assertThat(state.path("options").path("toolTimeoutSeconds").asInt()).isEqualTo(120);
            assertThat(state.path("tools").get(0).path("name").asText()).isEqualTo("check_inventory");
            assertThat(state.path("transcript").path("transcript").path("entries"))
                    .hasSize(2);
            c.call(5, "npc/delete", "{\"npc\":\"gorm\"}");
            assertThat(c.request(6, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"x\"}")
                            .error(6)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32050);
            JsonNode restored = c.call(
                    7,
                    "npc/restore",
                    "{\"state\":" + Json.write(whole) + ",\"model\":" + scripted("[{\"text\":\"[proud] Back again.\"}]")
                            + "}");
            assertThat(restored.path("npc").asText()).isEqualTo("gorm");
            assertThat(restored.path("tools").toString()).isEqualTo("[\"check_inventory\"]");
            JsonNode again = c.call(8, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Hello again\"}");
            assertThat(again.path("line").asText()).isEqualTo("Back again.");
            assertThat(again.path("relationship").asInt()).isEqualTo(40);
            JsonNode list = c.call(9, "npc/list", null).path("npcs").get(0);
            assertThat(list.path("turnCount").asInt()).isEqualTo(2);
            JsonNode copy = c.call(
                    10,
                    "npc/restore",
                    "{\"state\":" + Json.write(state)
                            + ",\"npc\":\"copy\",\"tools\":[],\"options\":null,\"model\":\"scripted\"}");
            assertThat(copy.path("tools")).isEmpty();
            JsonNode copyState = c.call(11, "npc/state", "{\"npc\":\"copy\",\"settle\":false}")
                    .path("state");
            assertThat(copyState.path("options").path("replyFormat").asText())
                    .as("options: null wins over the saved options")
                    .isEqualTo("automatic");
            assertThat(c.request(12, "npc/restore", "{\"state\":" + Json.write(state) + "}")
                            .error(12)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32051);
            assertThat(c.request(13, "npc/restore", "{\"state\":{\"version\":1}}")
                            .error(13)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32602);
        }
    }

    @Test
    void anUpdatePipelinedBetweenTwoTalksAppliesBetweenThemAndIsAllOrNothing() throws Exception {
        try (Conversation c = open()) {
            npc(
                    c,
                    "gorm",
                    "{}",
                    "[" + INVENTORY_TOOL + "]",
                    "[{\"toolCalls\":[{\"name\":\"check_inventory\",\"arguments\":{\"item\":\"x\"}}]},"
                            + reply("happy", "First.") + ",{\"text\":\"[sad] Second.\"}]");
            c.request(2, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"one\"}");
            JsonNode call = c.toolCall();
            c.request(
                    3,
                    "npc/update",
                    "{\"npc\":\"gorm\",\"persona\":{\"personality\":\"Grateful.\",\"role\":null},\"options\":{\"replyFormat\":\"text\"}}");
            c.request(
                    4,
                    "npc/update",
                    "{\"npc\":\"gorm\",\"persona\":{\"name\":\"Changed\"},\"options\":{\"playerOptionCount\":9}}");
            c.request(5, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"two\"}");
            JsonNode list = c.call(6, "npc/list", null).path("npcs").get(0);
            assertThat(list.path("busy").asBoolean()).isTrue();
            assertThat(list.path("pendingOperations").asInt()).isEqualTo(3);
            c.reply(call, "{\"output\":\"ok\"}");
            assertThat(c.result(2).path("line").asText()).isEqualTo("First.");
            assertThat(c.result(3).path("warnings")).isEmpty();
            assertThat(c.error(4).path("message").asText()).contains("'options.playerOptionCount'");
            JsonNode second = c.result(5);
            assertThat(second.path("line").asText())
                    .as("the text format from the update applies")
                    .isEqualTo("Second.");
            JsonNode state = c.call(7, "npc/state", "{\"npc\":\"gorm\"}").path("state");
            assertThat(state.path("persona").path("name").asText())
                    .as("the rejected update changed nothing")
                    .isEqualTo("Gorm");
            assertThat(state.path("persona").path("role").asText()).isEmpty();
            assertThat(state.path("persona").path("personality").asText()).isEqualTo("Grateful.");
            List<Integer> order = new ArrayList<>();
            for (JsonNode m : c.messages()) {
                if (Conversation.isResponse(m)
                        && m.get("id").isInt()
                        && m.get("id").asInt() >= 2
                        && m.get("id").asInt() <= 5) {
                    order.add(m.get("id").asInt());
                }
            }
            assertThat(order).containsExactly(2, 3, 4, 5);
        }
    }

    @Test
    void cancellingATalkWaitingOnAClientToolLeavesNoTrace() throws Exception {
        try (Conversation c = open()) {
            npc(
                    c,
                    "gorm",
                    "{\"groundingTool\":\"check_inventory\",\"memoryTools\":\"all\"}",
                    "[" + INVENTORY_TOOL + "]",
                    "[{\"toolCalls\":[{\"name\":\"remember_fact\",\"arguments\":{\"fact\":\"x\"}},{\"name\":\"check_inventory\",\"arguments\":{\"item\":\"x\"}}]},"
                            + reply("happy", "After.") + "]");
            c.request(2, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"one\"}");
            JsonNode call = c.toolCall();
            c.request(3, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"queued\"}");
            JsonNode cancelled = c.call(4, "npc/cancel", "{\"npc\":\"gorm\"}");
            assertThat(cancelled.toString()).isEqualTo("{\"npc\":\"gorm\",\"cancelled\":2}");
            assertThat(c.error(2).path("code").asInt()).isEqualTo(-32009);
            assertThat(c.error(3).path("code").asInt()).isEqualTo(-32009);
            JsonNode toolCancel = c.await(m -> Conversation.isEvent(m, "tool/cancel"), "tool/cancel");
            assertThat(toolCancel.path("params").path("npc").asText()).isEqualTo("gorm");
            assertThat(toolCancel.path("params").path("id").asText())
                    .isEqualTo(call.path("id").asText());
            JsonNode state = c.call(5, "npc/state", "{\"npc\":\"gorm\"}").path("state");
            assertThat(state.path("memory").path("facts")).isEmpty();
            assertThat(state.path("transcript").path("transcript").path("entries"))
                    .isEmpty();
        }
    }

    @Test
    void theToolChoiceOverrideMustNameAToolTheNpcHas() throws Exception {
        try (Conversation c = open()) {
            npc(c, "gorm", "{}", "[" + INVENTORY_TOOL + "]", "[" + reply("happy", "Hi.") + "]");
            JsonNode error = c.request(
                            2, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"x\",\"toolChoice\":{\"tool\":\"fly\"}}")
                    .error(2);
            assertThat(error.path("code").asInt()).isEqualTo(-32011);
            assertThat(c.call(3, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"x\",\"toolChoice\":\"none\"}")
                            .path("line")
                            .asText())
                    .isEqualTo("Hi.");
        }
    }

    @Test
    void barksRunBesideARunningTurnAndReturnErrorsAsTheyAre() throws Exception {
        try (Conversation c = open()) {
            npc(
                    c,
                    "gorm",
                    "{\"groundingTool\":\"check_inventory\"}",
                    "[" + INVENTORY_TOOL + "]",
                    "[{\"toolCalls\":[{\"name\":\"check_inventory\",\"arguments\":{\"item\":\"x\"}}]},{\"text\":\"\\n  Gorm: \\\"Rain again.\\\"\\nSecond line.\"},"
                            + "{\"error\":\"guardrail_violation\"},{\"text\":\"  \"}," + reply("happy", "Done.") + "]");
            c.request(2, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"x\"}");
            JsonNode call = c.toolCall();
            JsonNode bark = c.call(3, "npc/bark", "{\"npc\":\"gorm\",\"situation\":{\"weather\":\"rain\"}}");
            assertThat(bark.toString()).isEqualTo("{\"npc\":\"gorm\",\"line\":\"Rain again.\"}");
            assertThat(c.request(4, "npc/bark", "{\"npc\":\"gorm\"}")
                            .error(4)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32002);
            assertThat(c.request(5, "npc/bark", "{\"npc\":\"gorm\"}")
                            .error(5)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32012);
            c.reply(call, "{\"output\":\"ok\"}");
            assertThat(c.result(2).path("line").asText()).isEqualTo("Done.");
        }
    }

    @Test
    void resetClearsTheConversationAndOnRequestTheMemory() throws Exception {
        try (Conversation c = open()) {
            c.call(
                    1,
                    "npc/create",
                    "{\"npc\":\"r\",\"persona\":" + GORM
                            + ",\"memory\":{\"facts\":[\"f\"],\"relationship\":30,\"summary\":\"s\"},"
                            + "\"options\":{\"replyFormat\":\"text\"},\"model\":\"scripted\"}");
            c.call(2, "npc/talk", "{\"npc\":\"r\",\"line\":\"x\"}");
            c.call(3, "npc/reset", "{\"npc\":\"r\"}");
            JsonNode kept = c.call(4, "npc/state", "{\"npc\":\"r\"}").path("state");
            assertThat(kept.path("transcript").path("transcript").path("entries"))
                    .isEmpty();
            assertThat(kept.path("memory").path("relationship").asInt()).isEqualTo(30);
            assertThat(c.call(5, "npc/reset", "{\"npc\":\"r\",\"clearMemory\":true}")
                            .toString())
                    .isEqualTo("{\"npc\":\"r\"}");
            JsonNode cleared = c.call(6, "npc/state", "{\"npc\":\"r\"}").path("state");
            assertThat(cleared.path("memory").toString()).isEqualTo("{\"facts\":[],\"relationship\":0}");
        }
    }

    @Test
    void listShowsEveryField() throws Exception {
        try (Conversation c = open()) {
            c.call(
                    1,
                    "npc/create",
                    "{\"npc\":\"a\",\"persona\":{\"name\":\"Ann\",\"role\":\"guard\"},\"tools\":[" + INVENTORY_TOOL
                            + "],\"options\":{\"memoryTools\":\"all\"},\"model\":\"scripted\"}");
            c.call(2, "npc/create", "{\"npc\":\"b\",\"persona\":{\"name\":\"Bo\"}}");
            JsonNode npcs = c.call(3, "npc/list", null).path("npcs");
            assertThat(npcs).hasSize(2);
            JsonNode a = npcs.get(0);
            assertThat(keys(a))
                    .containsExactly(
                            "npc",
                            "name",
                            "role",
                            "world",
                            "model",
                            "tools",
                            "turnCount",
                            "relationship",
                            "busy",
                            "pendingOperations",
                            "createdAt");
            assertThat(a.path("world").isNull()).isTrue();
            assertThat(a.path("tools").toString()).isEqualTo("[\"check_inventory\"]");
            assertThat(a.path("model").asText()).isEqualTo("scripted");
            assertThat(npcs.get(1).path("model").asText()).isEqualTo("system");
            assertThat(npcs.get(1).path("role").asText()).isEmpty();
        }
    }

    @Test
    void olderTurnsAreCompactedInTheBackgroundAfterCompactAfterTurns() throws Exception {
        try (Conversation c = open()) {
            npc(
                    c,
                    "k",
                    "{\"replyFormat\":\"text\",\"compactAfterTurns\":2,\"keepRecentTurns\":1}",
                    "[]",
                    "[{\"text\":\"[happy] One.\"},{\"text\":\"[happy] Two.\"},{\"text\":\"Aria visited twice.\"},{\"text\":\"[happy] Three.\"}]");
            c.call(2, "npc/talk", "{\"npc\":\"k\",\"line\":\"a\"}");
            c.call(3, "npc/talk", "{\"npc\":\"k\",\"line\":\"b\"}");
            JsonNode state = c.call(4, "npc/state", "{\"npc\":\"k\"}").path("state");
            assertThat(state.path("memory").path("summary").asText()).isEqualTo("Aria visited twice.");
            assertThat(state.path("transcript").path("transcript").path("entries"))
                    .hasSize(2);
            assertThat(c.call(5, "npc/talk", "{\"npc\":\"k\",\"line\":\"c\"}")
                            .path("line")
                            .asText())
                    .isEqualTo("Three.");
        }
    }

    @Test
    void stateWithoutSettlingAnswersAtOnce() throws Exception {
        try (Conversation c = open()) {
            npc(
                    c,
                    "s",
                    "{\"groundingTool\":\"check_inventory\"}",
                    "[" + INVENTORY_TOOL + "]",
                    "[{\"toolCalls\":[{\"name\":\"check_inventory\",\"arguments\":{\"item\":\"x\"}}]},"
                            + reply("happy", "Done.") + "]");
            c.request(2, "npc/talk", "{\"npc\":\"s\",\"line\":\"x\"}");
            JsonNode call = c.toolCall();
            JsonNode now = c.call(3, "npc/state", "{\"npc\":\"s\",\"settle\":false}");
            assertThat(now.path("state").path("transcript").path("transcript").path("entries"))
                    .isEmpty();
            c.request(4, "npc/state", "{\"npc\":\"s\"}");
            c.reply(call, "{\"output\":\"ok\"}");
            c.result(2);
            assertThat(c.result(4)
                            .path("state")
                            .path("transcript")
                            .path("transcript")
                            .path("entries"))
                    .hasSize(4);
            assertThat(c.indexOf(c.response(4))).isGreaterThan(c.indexOf(c.response(2)));
        }
    }

    @Test
    void worldToolsRunLocallyAndSubscribersHearNpcWritesBeforeTheResponse() throws Exception {
        try (Conversation c = open()) {
            c.call(
                    1,
                    "world/create",
                    "{\"world\":\"village\",\"state\":{\"player\":{\"name\":\"Aria\",\"gold\":60},"
                            + "\"forge\":{\"swords\":3,\"price\":45}}}");
            JsonNode sub = c.call(2, "world/subscribe", "{\"world\":\"village\",\"path\":\"player\"}");
            JsonNode created = c.call(
                    3,
                    "npc/create",
                    "{\"npc\":\"gorm\",\"persona\":" + GORM + ",\"world\":\"village\","
                            + "\"options\":{\"replyFormat\":\"text\",\"worldWritable\":[\"player.gold\"],\"worldContextPaths\":[\"player.name\",\"forge\"]},"
                            + "\"model\":"
                            + scripted(
                                    "[{\"toolCalls\":[{\"name\":\"read_world_state\",\"arguments\":{\"path\":\"forge.price\"}},"
                                            + "{\"name\":\"update_world_state\",\"arguments\":{\"path\":\"player.gold\",\"value\":\"15\"}},"
                                            + "{\"name\":\"update_world_state\",\"arguments\":{\"path\":\"forge.swords\",\"value\":\"2\"}}]},"
                                            + "{\"template\":\"[happy] {prompt} | {toolOutputs}\"}]")
                            + "}");
            assertThat(created.path("tools").toString()).isEqualTo("[\"read_world_state\",\"update_world_state\"]");
            c.request(
                    4,
                    "npc/talk",
                    "{\"npc\":\"gorm\",\"line\":\"One sword, please.\",\"context\":\"The player holds out coins.\",\"stream\":true}");
            JsonNode turn = c.result(4);
            JsonNode changed = c.await(m -> Conversation.isEvent(m, "world/changed"), "world/changed");
            assertThat(changed.path("params").path("subscription").asText())
                    .isEqualTo(sub.path("subscription").asText());
            assertThat(changed.path("params").path("path").asText()).isEqualTo("player.gold");
            assertThat(changed.path("params").path("oldValue").asInt()).isEqualTo(60);
            assertThat(changed.path("params").path("newValue").isNumber())
                    .as("a number stays a number")
                    .isTrue();
            assertThat(changed.path("params").path("newValue").asInt()).isEqualTo(15);
            assertThat(c.indexOf(changed)).isLessThan(c.indexOf(c.response(4)));
            String line = turn.path("line").asText();
            assertThat(line)
                    .contains("Game state:")
                    .contains("player.name: Aria")
                    .contains("forge.swords: 3")
                    .contains("forge.price: 45")
                    .contains("Situation: The player holds out coins.")
                    .contains("Player: One sword, please.");
            assertThat(line).contains("45").contains("read-only");
            assertThat(turn.path("toolCalls")).hasSize(3);
            assertThat(npcEvents(c, 4).stream()
                            .filter(e -> e.path("type").asText().equals("toolCallStarted")))
                    .allSatisfy(e -> assertThat(e.path("execution").asText()).isEqualTo("local"));
            assertThat(c.call(5, "world/get", "{\"world\":\"village\",\"path\":\"forge.swords\"}")
                            .path("value")
                            .asInt())
                    .isEqualTo(3);
            JsonNode worlds = c.call(6, "world/list", null).path("worlds");
            assertThat(worlds.get(0).path("npcs").asInt()).isEqualTo(1);
            assertThat(c.call(7, "npc/list", null)
                            .path("npcs")
                            .get(0)
                            .path("world")
                            .asText())
                    .isEqualTo("village");
            JsonNode saved = c.call(8, "npc/state", "{\"npc\":\"gorm\"}");
            assertThat(saved.path("state").path("world").asText()).isEqualTo("village");
            c.call(9, "npc/delete", "{\"npc\":\"gorm\"}");
            c.call(10, "world/delete", "{\"world\":\"village\"}");
            JsonNode restored =
                    c.call(11, "npc/restore", "{\"state\":" + Json.write(saved) + ",\"model\":\"scripted\"}");
            assertThat(restored.path("warnings").toString()).contains("village");
            assertThat(c.call(12, "npc/list", null)
                            .path("npcs")
                            .get(0)
                            .path("world")
                            .isNull())
                    .isTrue();
            JsonNode badPath = c.request(
                            13,
                            "npc/create",
                            "{\"persona\":{\"name\":\"X\"},\"options\":{\"worldReadable\":[\"a..b\"]}}")
                    .error(13);
            assertThat(badPath.path("message").asText()).contains("'options.worldReadable'");
        }
    }
}
