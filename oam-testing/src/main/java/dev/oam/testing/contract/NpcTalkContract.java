package dev.oam.testing.contract;

import static dev.oam.testing.contract.JsonKeys.keys;
import static dev.oam.testing.contract.NpcScripts.INVENTORY_TOOL;
import static dev.oam.testing.contract.NpcScripts.npc;
import static dev.oam.testing.contract.NpcScripts.npcEvents;
import static dev.oam.testing.contract.NpcScripts.replay;
import static dev.oam.testing.contract.NpcScripts.reply;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.Conversation;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The talking part of the NPC contract (docs/GAMES.md): creation and its limit, structured turns, lenient reading,
 * usage, streaming, retries, fallbacks, cancellation, tool choice and barks.
 */
public interface NpcTalkContract extends ContractFixture {
    @Test
    default void createValidatesEverythingAndListsTheToolsTheModelSees() throws Exception {
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
    default void theNpcLimitIs128() throws Exception {
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
    default void aStructuredTurnGroundedByATool() throws Exception {
        try (Conversation c = open()) {
            npc(
                    c,
                    "gorm",
                    "{\"groundingTool\":\"check_inventory\"}",
                    "[" + INVENTORY_TOOL + "]",
                    "[{\"toolCalls\":[{\"name\":\"check_inventory\",\"arguments\":{\"item\":\"iron sword\"}}]},"
                            + "{\"json\":{\"emotion\":\"proud\",\"line\":\"Gorm: Aye, three iron swords, 45 "
                            + "gold each.\","
                            + "\"player_options\":[\"1. Buy one\",\"- Too pricey\",\"buy "
                            + "one\"],\"ends_conversation\":true}}]");
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
    default void aStructuredReplyThatMissesTheSchemaIsReadLenientlyInsteadOfFailingTheTurn() throws Exception {
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
                    "[{\"json\":{\"emotion\":\"zzz\",\"line\":\"Welcome!\",\"player_options\":[\"1. "
                            + "A\",\"2) B\",\"3. C\"]," + "\"ends_conversation\":true}}]");
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
            assertThat(mute.path("warnings").toString()).contains("no line to speak");
            // A line of white space is no line either.
            npc(c, "blank", "{\"replyFormat\":\"structured\"}", "[]", "[{\"json\":{\"line\":\"  \"}}]");
            JsonNode blank = c.call(6, "npc/talk", "{\"npc\":\"blank\",\"line\":\"Hello\"}");
            assertThat(blank.path("isFallback").asBoolean()).as("%s", blank).isTrue();
            assertThat(blank.path("line").asText()).isNotBlank();
            // An answer that is not a JSON object cannot be read as a reply: the NPC speaks a fallback line and says
            // why, as for a blocked turn; the turn is no error (issue 37).
            npc(c, "list", "{\"replyFormat\":\"structured\"}", "[]", "[{\"json\":[\"Hm.\"]}]");
            JsonNode list = c.call(5, "npc/talk", "{\"npc\":\"list\",\"line\":\"Hello\"}");
            assertThat(list.path("isFallback").asBoolean()).as("%s", list).isTrue();
            assertThat(list.path("line").asText()).isNotBlank();
            assertThat(list.path("warnings").toString()).contains("could not be read");
            assertThat(few.has("warnings"))
                    .as("a reply the model wrote well has no warnings")
                    .isFalse();
        }
    }

    @Test
    default void aReplyThatCannotBeReadIsAFallbackLineAndTheNpcGoesOn() throws Exception {
        try (Conversation c = open()) {
            // The first turn's answer is a JSON list where the reply's object was asked for (a model that can be asked
            // again is asked again first); the next turn's reply is fine. The first turn speaks a fallback line
            // (streamed like any line) and leaves no trace in the
            // memory; the second answers as usual.
            npc(
                    c,
                    "sela",
                    "{\"replyFormat\":\"structured\",\"fallbackLines\":[\"Hm, let me think.\"]}",
                    "[]",
                    "[{\"json\":[\"not a reply\"]}," + reply("happy", "Welcome, traveller.") + "]");
            JsonNode first =
                    c.call(1, "npc/talk", "{\"npc\":\"sela\",\"line\":\"Hello there, bard!\",\"stream\":true}");
            assertThat(first.path("isFallback").asBoolean()).as("%s", first).isTrue();
            assertThat(first.path("line").asText()).isEqualTo("Hm, let me think.");
            assertThat(first.path("warnings").toString()).contains("could not be read");
            assertThat(first.path("usage").path("inputTokens").asInt())
                    .as("the attempts read their prompts")
                    .isPositive();
            assertThat(replay(c, 1)).isEqualTo("Hm, let me think.");
            JsonNode second = c.call(2, "npc/talk", "{\"npc\":\"sela\",\"line\":\"Sing me a song.\"}");
            assertThat(second.path("isFallback").asBoolean()).as("%s", second).isFalse();
            assertThat(second.path("line").asText()).isEqualTo("Welcome, traveller.");
            assertThat(second.has("warnings")).isFalse();
            assertThat(c.call(3, "npc/list", null)
                            .path("npcs")
                            .get(0)
                            .path("turnCount")
                            .asInt())
                    .as("the unreadable exchange never entered the history")
                    .isEqualTo(1);
        }
    }

    @Test
    default void aTurnsUsageCountsEveryAttemptItMade() throws Exception {
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
    default void aLongStreamedConversationsEventsAddUpToEachLine() throws Exception {
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
    default void automaticModeRetriesABlockedTurnOnceAsTextReusingToolResults() throws Exception {
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
    default void blockedTurnsFallBackWithRotatingLinesAndLeaveNoTrace() throws Exception {
        try (Conversation c = open()) {
            npc(
                    c,
                    "gorm",
                    "{\"replyFormat\":\"structured\",\"fallbackLines\":[\" One. \",\"\",\"Two.\"]}",
                    "[]",
                    "[{\"error\":\"guardrail_violation\"},{\"error\":\"refusal\"},{\"error\":\"guardrail_violation\"},"
                            + "{\"json\":{\"emotion\":\"sad\",\"line\":\"  "
                            + "\",\"player_options\":[\"a\",\"b\",\"c\"],\"ends_conversation\":false}}]");
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
    default void cancellingATalkWaitingOnAClientToolLeavesNoTrace() throws Exception {
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
    default void theToolChoiceOverrideMustNameAToolTheNpcHas() throws Exception {
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
    default void barksRunBesideARunningTurnAndReturnErrorsAsTheyAre() throws Exception {
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
}
