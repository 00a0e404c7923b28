package dev.oam.testing.contract;

import static dev.oam.testing.contract.ContractSupport.scripted;
import static dev.oam.testing.contract.JsonKeys.keys;
import static dev.oam.testing.contract.NpcScripts.GORM;
import static dev.oam.testing.contract.NpcScripts.INVENTORY_TOOL;
import static dev.oam.testing.contract.NpcScripts.npc;
import static dev.oam.testing.contract.NpcScripts.npcEvents;
import static dev.oam.testing.contract.NpcScripts.reply;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The state part of the NPC contract (docs/GAMES.md): memory tools, saves and restores, updates, resets, the list,
 * compaction, state reads and world tools.
 */
public interface NpcStateContract extends ContractFixture {
    @Test
    default void memoryToolsAreStagedAndCommittedOnlyOnSuccess() throws Exception {
        try (Conversation c = open()) {
            c.call(
                    1,
                    "npc/create",
                    "{\"npc\":\"m\",\"persona\":" + GORM
                            + ",\"memory\":{\"facts\":[\"Aria likes axes.\"],\"relationship\":95},"
                            + "\"options\":{\"memoryTools\":\"all\",\"maxRelationshipChange\":10,\"replyFormat\":\"text\"},\"model\":"
                            + scripted(
                                    "[{\"toolCalls\":[{\"name\":\"remember_fact\",\"arguments\":{\"fact\":\"aria likes AXES\"}},"
                                            + "{\"name\":\"remember_fact\",\"arguments\":{\"fact\":\"Aria "
                                            + "lost her ring.\"}},"
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
    default void theSamplerOptionIsValidatedPatchedAndSaved() throws Exception {
        // this edition's extension: options.sampler, the whole sampler chain (docs/PROTOCOL.md)
        try (Conversation c = open()) {
            npc(
                    c,
                    "mira",
                    "{\"sampler\":{\"minP\":0.1,\"dry\":{\"multiplier\":0.5}}}",
                    "[]",
                    "[{\"text\":\"[happy] Hello.\"}]");
            c.call(2, "npc/update", "{\"npc\":\"mira\",\"options\":{\"sampler\":{\"topK\":20}}}");
            JsonNode sampler = c.call(3, "npc/state", "{\"npc\":\"mira\"}")
                    .path("state")
                    .path("options")
                    .path("sampler");
            assertThat(sampler.path("minP").asDouble()).isEqualTo(0.1);
            assertThat(sampler.path("topK").asInt()).isEqualTo(20);
            assertThat(sampler.path("dry").path("multiplier").asDouble()).isEqualTo(0.5);
            JsonNode error = c.request(
                            4,
                            "npc/update",
                            "{\"npc\":\"mira\",\"options\":{\"sampler\":{\"xtc\":{\"probability\":2,"
                                    + "\"threshold\":0.1}}}}")
                    .error(4);
            assertThat(error.path("code").asInt()).isEqualTo(-32602);
            assertThat(error.path("message").asText()).contains("sampler.xtc.probability");
        }
    }

    @Test
    default void saveDeleteRestoreAndTalkAgain() throws Exception {
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
    default void anUpdatePipelinedBetweenTwoTalksAppliesBetweenThemAndIsAllOrNothing() throws Exception {
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
    default void resetClearsTheConversationAndOnRequestTheMemory() throws Exception {
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
    default void listShowsEveryField() throws Exception {
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
    default void olderTurnsAreCompactedInTheBackgroundAfterCompactAfterTurns() throws Exception {
        try (Conversation c = open()) {
            npc(
                    c,
                    "k",
                    "{\"replyFormat\":\"text\",\"compactAfterTurns\":2,\"keepRecentTurns\":1}",
                    "[]",
                    "[{\"text\":\"[happy] One.\"},{\"text\":\"[happy] Two.\"},{\"text\":\"Aria visited "
                            + "twice.\"},{\"text\":\"[happy] Three.\"}]");
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
    default void stateWithoutSettlingAnswersAtOnce() throws Exception {
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
    default void worldToolsRunLocallyAndSubscribersHearNpcWritesBeforeTheResponse() throws Exception {
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
                    "{\"npc\":\"gorm\",\"line\":\"One sword, please.\",\"context\":\"The player holds out "
                            + "coins.\",\"stream\":true}");
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
