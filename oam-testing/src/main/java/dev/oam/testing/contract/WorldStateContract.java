package dev.oam.testing.contract;

import static dev.oam.testing.contract.ContractSupport.code;
import static dev.oam.testing.contract.JsonKeys.keys;
import static dev.oam.testing.contract.WorldScripts.VILLAGE;
import static dev.oam.testing.contract.WorldScripts.changes;
import static dev.oam.testing.contract.WorldScripts.changesBefore;
import static dev.oam.testing.contract.WorldScripts.json;
import static dev.oam.testing.contract.WorldScripts.village;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.Conversation;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The state part of the world contract (docs/GAMES.md, "Worlds"): create, ids, every path form, set, merge, remove,
 * versions, the list, errors and limits.
 */
public interface WorldStateContract extends ContractFixture {
    // ---------------------------------------------------------------- create, ids

    @Test
    default void createGeneratesIdsThatCountOnlyGeneratedOnes() throws Exception {
        try (Conversation c = open()) {
            JsonNode first = c.call(1, "world/create", null);
            assertThat(first).isEqualTo(json("{\"world\":\"w1\",\"version\":0}"));
            assertThat(keys(first)).containsExactly("world", "version");
            assertThat(c.call(2, "world/create", "{\"world\":\"w2\"}")
                            .path("world")
                            .asText())
                    .isEqualTo("w2");
            assertThat(c.call(3, "world/create", "{\"world\":\"village\"}")
                            .path("world")
                            .asText())
                    .isEqualTo("village");
            // the counter is at 1: its next id, w2, is taken, so the next free one is used
            assertThat(c.call(4, "world/create", "{}").path("world").asText()).isEqualTo("w3");
            assertThat(c.call(5, "world/create", "{\"world\":null,\"state\":null}")
                            .path("world")
                            .asText())
                    .isEqualTo("w4");
            JsonNode exists =
                    c.request(6, "world/create", "{\"world\":\"village\"}").error(6);
            assertThat(exists.path("code").asInt()).isEqualTo(-32053);
            assertThat(code(exists)).isEqualTo("world_exists");
            assertThat(exists.path("data").path("world").asText()).isEqualTo("village");
            assertThat(c.call(7, "world/create", "{}").path("world").asText()).isEqualTo("w5");
        }
    }

    @Test
    default void createTakesAnInitialStateThatMustBeAnObject() throws Exception {
        try (Conversation c = open()) {
            JsonNode created = c.call(1, "world/create", "{\"world\":\"village\",\"state\":" + VILLAGE + "}");
            assertThat(created).isEqualTo(json("{\"world\":\"village\",\"version\":0}"));
            JsonNode snapshot = c.call(2, "world/snapshot", "{\"world\":\"village\"}");
            assertThat(snapshot.path("state")).isEqualTo(json(VILLAGE));
            JsonNode list = c.request(3, "world/create", "{\"state\":[1,2]}").error(3);
            assertThat(list.path("code").asInt()).isEqualTo(-32602);
            assertThat(list.path("message").asText()).contains("'state'");
            JsonNode badId = c.request(4, "world/create", "{\"world\":\"\"}").error(4);
            assertThat(badId.path("code").asInt()).isEqualTo(-32602);
            assertThat(badId.path("message").asText()).contains("'world'");
            JsonNode typed = c.request(5, "world/create", "{\"world\":7}").error(5);
            assertThat(typed.path("message").asText()).contains("'world'");
            // failed creates used no id
            assertThat(c.call(6, "world/create", "{}").path("world").asText()).isEqualTo("w1");
        }
    }

    // ---------------------------------------------------------------- get, snapshot

    @Test
    default void getReadsEveryPathFormAndTellsAbsentFromNull() throws Exception {
        try (Conversation c = village(open())) {
            for (String path :
                    List.of("player.bag.1", "player.bag[1]", "player/bag/1", "$.player.bag.1", "/player/bag/1")) {
                JsonNode got = c.call("get " + path, "world/get", "{\"world\":\"village\",\"path\":\"" + path + "\"}");
                assertThat(got)
                        .as(path)
                        .isEqualTo(json("{\"world\":\"village\",\"path\":\"" + path
                                + "\",\"value\":\"torch\",\"exists\":true,\"version\":0}"));
                assertThat(keys(got)).containsExactly("world", "path", "value", "exists", "version");
            }
            JsonNode root = c.call(1, "world/get", "{\"world\":\"village\"}");
            assertThat(root.path("path").asText()).isEmpty();
            assertThat(root.path("value")).isEqualTo(json(VILLAGE));
            JsonNode absent = c.call(2, "world/get", "{\"world\":\"village\",\"path\":\"player.horse\"}");
            assertThat(absent.get("value").isNull()).isTrue();
            assertThat(absent.path("exists").asBoolean()).isFalse();
            c.call(3, "world/set", "{\"world\":\"village\",\"path\":\"player.horse\",\"value\":null}");
            JsonNode stored = c.call(4, "world/get", "{\"world\":\"village\",\"path\":\"player.horse\"}");
            assertThat(stored.get("value").isNull()).isTrue();
            assertThat(stored.path("exists").asBoolean()).isTrue();
            assertThat(stored.path("version").asLong()).isEqualTo(1);
        }
    }

    @Test
    default void snapshotKeepsDocumentOrder() throws Exception {
        try (Conversation c = open()) {
            c.call(1, "world/create", "{\"world\":\"w\",\"state\":{\"zeta\":1,\"alpha\":{\"y\":1,\"b\":2},\"mid\":3}}");
            c.call(2, "world/set", "{\"world\":\"w\",\"path\":\"beta\",\"value\":4}");
            JsonNode snapshot = c.call(3, "world/snapshot", "{\"world\":\"w\"}");
            assertThat(keys(snapshot)).containsExactly("world", "state", "version");
            assertThat(keys(snapshot.path("state"))).containsExactly("zeta", "alpha", "mid", "beta");
            assertThat(keys(snapshot.path("state").path("alpha"))).containsExactly("y", "b");
            assertThat(snapshot.path("version").asLong()).isEqualTo(1);
        }
    }

    // ---------------------------------------------------------------- set, merge, remove

    @Test
    default void setCreatesParentsAppendsAtIndexNAndStoresNull() throws Exception {
        try (Conversation c = village(open())) {
            JsonNode set = c.call(
                    1, "world/set", "{\"world\":\"village\",\"path\":\"quests.dragon.status\",\"value\":\"started\"}");
            assertThat(set).isEqualTo(json("{\"world\":\"village\",\"path\":\"quests.dragon.status\",\"version\":1}"));
            assertThat(keys(set)).containsExactly("world", "path", "version");
            c.call(2, "world/set", "{\"world\":\"village\",\"path\":\"player.bag.2\",\"value\":\"sword\"}");
            c.call(
                    3,
                    "world/set",
                    "{\"world\":\"village\",\"path\":\"player.bag[0]\",\"value\":{\"item\":\"rope\",\"uses\":3}}");
            c.call(4, "world/set", "{\"world\":\"village\",\"path\":\"time_of_day\",\"value\":null}");
            JsonNode state =
                    c.call(5, "world/snapshot", "{\"world\":\"village\"}").path("state");
            assertThat(state.path("quests").path("dragon")).isEqualTo(json("{\"status\":\"started\"}"));
            assertThat(state.path("player").path("bag"))
                    .isEqualTo(json("[{\"item\":\"rope\",\"uses\":3},\"torch\",\"sword\"]"));
            assertThat(state.has("time_of_day")).isTrue();
            assertThat(state.get("time_of_day").isNull()).isTrue();
            JsonNode beyond = c.request(6, "world/set", "{\"world\":\"village\",\"path\":\"player.bag.4\",\"value\":1}")
                    .error(6);
            assertThat(code(beyond)).isEqualTo("world_error");
            assertThat(beyond.path("message").asText()).contains("list of 3 items");
            JsonNode root = c.call(7, "world/set", "{\"world\":\"village\",\"value\":{\"fresh\":true}}");
            assertThat(root.path("path").asText()).isEmpty();
            assertThat(c.call(8, "world/snapshot", "{\"world\":\"village\"}").path("state"))
                    .isEqualTo(json("{\"fresh\":true}"));
            assertThat(c.call(9, "world/get", "{\"world\":\"village\"}")
                            .path("version")
                            .asLong())
                    .isEqualTo(5);
        }
    }

    @Test
    default void setWithoutAValueIsAnInvalidParameter() throws Exception {
        try (Conversation c = village(open())) {
            JsonNode missing = c.request(1, "world/set", "{\"world\":\"village\",\"path\":\"player.gold\"}")
                    .error(1);
            assertThat(missing.path("code").asInt()).isEqualTo(-32602);
            assertThat(missing.path("message").asText()).contains("'value'");
            JsonNode patch = c.request(2, "world/merge", "{\"world\":\"village\",\"patch\":null}")
                    .error(2);
            assertThat(patch.path("code").asInt()).isEqualTo(-32602);
            assertThat(patch.path("message").asText()).contains("'patch'");
            JsonNode path =
                    c.request(3, "world/remove", "{\"world\":\"village\"}").error(3);
            assertThat(path.path("message").asText()).contains("'path'");
            JsonNode typed = c.request(4, "world/get", "{\"world\":\"village\",\"path\":5}")
                    .error(4);
            assertThat(typed.path("code").asInt()).isEqualTo(-32602);
            assertThat(typed.path("message").asText()).contains("'path'");
            JsonNode world = c.request(5, "world/snapshot", "{}").error(5);
            assertThat(world.path("message").asText()).contains("'world'");
            assertThat(c.call(6, "world/get", "{\"world\":\"village\"}")
                            .path("version")
                            .asLong())
                    .isZero();
        }
    }

    @Test
    default void mergeAppliesAnRfc7386PatchAtAPath() throws Exception {
        try (Conversation c = village(open())) {
            JsonNode merged = c.call(
                    1,
                    "world/merge",
                    "{\"world\":\"village\",\"patch\":{\"player\":{\"gold\":45,\"bag\":null,"
                            + "\"title\":\"Knight\"},\"weather\":{\"rain\":true,\"wind\":null}}}");
            assertThat(merged).isEqualTo(json("{\"world\":\"village\",\"path\":\"\",\"version\":1}"));
            JsonNode at = c.call(
                    2,
                    "world/merge",
                    "{\"world\":\"village\",\"path\":\"quests.lost_ring\",\"patch\":{\"status\":\"done\",\"reward\":100}}");
            assertThat(at.path("path").asText()).isEqualTo("quests.lost_ring");
            assertThat(at.path("version").asLong()).isEqualTo(2);
            JsonNode state =
                    c.call(3, "world/snapshot", "{\"world\":\"village\"}").path("state");
            assertThat(state)
                    .isEqualTo(
                            json(
                                    "{\"player\":{\"name\":\"Aria\",\"gold\":45,\"title\":\"Knight\"},"
                                            + "\"quests\":{\"lost_ring\":{\"status\":\"done\",\"reward\":100}},\"time_of_day\":\"night\",\"weather\":{\"rain\":true}}"));
            JsonNode root = c.request(4, "world/merge", "{\"world\":\"village\",\"patch\":[1]}")
                    .error(4);
            assertThat(code(root)).isEqualTo("world_error");
            assertThat(root.path("data").path("path").asText()).isEmpty();
        }
    }

    @Test
    default void removeReturnsTheOldValue() throws Exception {
        try (Conversation c = village(open())) {
            JsonNode removed = c.call(1, "world/remove", "{\"world\":\"village\",\"path\":\"player.bag[0]\"}");
            assertThat(removed)
                    .isEqualTo(
                            json(
                                    "{\"world\":\"village\",\"path\":\"player.bag[0]\",\"removed\":true,\"oldValue\":\"rope\",\"version\":1}"));
            assertThat(keys(removed)).containsExactly("world", "path", "removed", "oldValue", "version");
            assertThat(c.call(2, "world/get", "{\"world\":\"village\",\"path\":\"player.bag\"}")
                            .path("value"))
                    .isEqualTo(json("[\"torch\"]"));
            JsonNode nothing = c.call(3, "world/remove", "{\"world\":\"village\",\"path\":\"player.horse\"}");
            assertThat(nothing.path("removed").asBoolean()).isFalse();
            assertThat(nothing.get("oldValue").isNull()).isTrue();
            assertThat(nothing.path("version").asLong()).isEqualTo(1);
            JsonNode subtree = c.call(4, "world/remove", "{\"world\":\"village\",\"path\":\"quests\"}");
            assertThat(subtree.path("oldValue")).isEqualTo(json("{\"lost_ring\":{\"status\":\"open\"}}"));
            assertThat(keys(c.call(5, "world/snapshot", "{\"world\":\"village\"}")
                            .path("state")))
                    .containsExactly("player", "time_of_day");
        }
    }

    @Test
    default void versionsCountOnlyRealChanges() throws Exception {
        try (Conversation c = village(open())) {
            c.call(0, "world/subscribe", "{\"world\":\"village\"}");
            int before = c.size();
            assertThat(c.call(1, "world/set", "{\"world\":\"village\",\"path\":\"player.gold\",\"value\":60}")
                            .path("version")
                            .asLong())
                    .isZero();
            assertThat(c.call(2, "world/set", "{\"world\":\"village\",\"path\":\"player.gold\",\"value\":60.0}")
                            .path("version")
                            .asLong())
                    .isZero();
            assertThat(c.call(
                                    3,
                                    "world/merge",
                                    "{\"world\":\"village\",\"patch\":{\"player\":{\"name\":\"Aria\",\"horse\":null}}}")
                            .path("version")
                            .asLong())
                    .isZero();
            assertThat(c.call(4, "world/remove", "{\"world\":\"village\",\"path\":\"nothing\"}")
                            .path("version")
                            .asLong())
                    .isZero();
            assertThat(c.call(
                                    5,
                                    "world/set",
                                    "{\"world\":\"village\",\"path\":\"player\",\"value\":"
                                            + "{\"bag\":[\"rope\",\"torch\"],\"gold\":60,\"name\":\"Aria\"}}")
                            .path("version")
                            .asLong())
                    .isZero();
            assertThat(changes(c.messagesFrom(before))).isEmpty();
            assertThat(c.call(
                                    6,
                                    "world/merge",
                                    "{\"world\":\"village\",\"patch\":{\"player\":{\"gold\":1,\"name\":\"Bo\"}}}")
                            .path("version")
                            .asLong())
                    .isEqualTo(1);
            assertThat(c.call(7, "world/set", "{\"world\":\"village\",\"path\":\"x\",\"value\":1}")
                            .path("version")
                            .asLong())
                    .isEqualTo(2);
            JsonNode failed = c.request(8, "world/set", "{\"world\":\"village\",\"path\":\"x.y\",\"value\":1}")
                    .error(8);
            assertThat(code(failed)).isEqualTo("world_error");
            assertThat(c.call(9, "world/get", "{\"world\":\"village\"}")
                            .path("version")
                            .asLong())
                    .isEqualTo(2);
            JsonNode listed = c.call(10, "world/list", null).path("worlds").get(0);
            assertThat(listed.path("version").asLong()).isEqualTo(2);
        }
    }

    @Test
    default void listShowsEveryWorldInCreationOrder() throws Exception {
        try (Conversation c = open()) {
            assertThat(c.call(1, "world/list", null)).isEqualTo(json("{\"worlds\":[]}"));
            Instant start = Instant.now().minusSeconds(5);
            c.call(2, "world/create", "{\"world\":\"village\"}");
            c.call(3, "world/create", null);
            c.call(4, "world/set", "{\"world\":\"w1\",\"path\":\"a\",\"value\":1}");
            c.call(5, "world/subscribe", "{\"world\":\"w1\",\"path\":\"a\"}");
            c.call(6, "world/subscribe", "{\"world\":\"w1\"}");
            JsonNode worlds = c.call(7, "world/list", "{}").path("worlds");
            assertThat(worlds).hasSize(2);
            JsonNode village = worlds.get(0);
            assertThat(keys(village)).containsExactly("world", "version", "npcs", "subscriptions", "createdAt");
            assertThat(village.path("world").asText()).isEqualTo("village");
            assertThat(village.path("version").asLong()).isZero();
            assertThat(village.path("npcs").asInt()).isZero();
            assertThat(village.path("subscriptions")).isEqualTo(json("[]"));
            Instant created = Instant.parse(village.path("createdAt").asText());
            assertThat(created).isAfter(start).isBefore(Instant.now().plusSeconds(5));
            JsonNode w1 = worlds.get(1);
            assertThat(w1.path("world").asText()).isEqualTo("w1");
            assertThat(w1.path("version").asLong()).isEqualTo(1);
            assertThat(w1.path("subscriptions"))
                    .isEqualTo(json("[{\"subscription\":\"sub1\",\"world\":\"w1\",\"path\":\"a\"},"
                            + "{\"subscription\":\"sub2\",\"world\":\"w1\",\"path\":\"\"}]"));
        }
    }

    // ---------------------------------------------------------------- errors, limits

    @Test
    default void worldErrorsNameTheWorldAndThePathAndChangeNothing() throws Exception {
        try (Conversation c = village(open())) {
            c.call(0, "world/subscribe", "{\"world\":\"village\"}");
            int before = c.size();
            String[][] cases = {
                {"world/get", "{\"world\":\"village\",\"path\":\"player..gold\"}", "player..gold", "is not a valid path"
                },
                {"world/set", "{\"world\":\"village\",\"path\":\"a[0\",\"value\":1}", "a[0", "is not a valid path"},
                {
                    "world/set",
                    "{\"world\":\"village\",\"path\":\"player.gold.coins\",\"value\":1}",
                    "player.gold.coins",
                    "'player.gold' is a number, not an object or a list"
                },
                {"world/set", "{\"world\":\"village\",\"path\":\"\",\"value\":[1]}", "", "must be a JSON object"},
                {"world/set", "{\"world\":\"village\",\"path\":\"$\",\"value\":\"text\"}", "$", "must be a JSON object"
                },
                {
                    "world/merge",
                    "{\"world\":\"village\",\"path\":\"time_of_day.hour\",\"patch\":{\"h\":1}}",
                    "time_of_day.hour",
                    "'time_of_day' is a string"
                },
                {"world/merge", "{\"world\":\"village\",\"patch\":null,\"path\":\"x\"}", null, null},
                {"world/remove", "{\"world\":\"village\",\"path\":\"a]\"}", "a]", "is not a valid path"},
            };
            int id = 1;
            for (String[] item : cases) {
                JsonNode error = c.request(id, item[0], item[1]).error(id);
                id++;
                if (item[2] == null) {
                    assertThat(error.path("code").asInt()).isEqualTo(-32602);
                    continue;
                }
                assertThat(error.path("code").asInt()).as(item[1]).isEqualTo(-32054);
                assertThat(code(error)).isEqualTo("world_error");
                assertThat(error.path("data").path("world").asText()).isEqualTo("village");
                assertThat(error.path("data").path("path").asText()).as(item[1]).isEqualTo(item[2]);
                assertThat(error.path("message").asText()).as(item[1]).contains(item[3]);
            }
            assertThat(changes(c.messagesFrom(before))).isEmpty();
            JsonNode state = c.call(100, "world/snapshot", "{\"world\":\"village\"}");
            assertThat(state.path("state")).isEqualTo(json(VILLAGE));
            assertThat(state.path("version").asLong()).isZero();
        }
    }

    @Test
    default void atMost64WorldsAndTheLimitUsesNoId() throws Exception {
        try (Conversation c = open()) {
            for (int i = 1; i <= 64; i++) {
                c.request(i, "world/create", null);
            }
            List<JsonNode> created = c.sync();
            assertThat(created)
                    .hasSize(64)
                    .allSatisfy(m -> assertThat(m.has("result")).as("%s", m).isTrue());
            assertThat(created.getLast().path("result").path("world").asText()).isEqualTo("w64");
            JsonNode limit = c.request(65, "world/create", null).error(65);
            assertThat(limit.path("code").asInt()).isEqualTo(-32055);
            assertThat(code(limit)).isEqualTo("limit_reached");
            assertThat(limit.path("data").path("limit").asInt()).isEqualTo(64);
            JsonNode named =
                    c.request(66, "world/create", "{\"world\":\"extra\"}").error(66);
            assertThat(named.path("data").path("limit").asInt()).isEqualTo(64);
            c.call(67, "world/delete", "{\"world\":\"w3\"}");
            assertThat(c.call(68, "world/create", null).path("world").asText()).isEqualTo("w65");
        }
    }

    @Test
    default void atMost256SubscriptionsAcrossWorlds() throws Exception {
        try (Conversation c = village(open())) {
            c.call(0, "world/create", "{\"world\":\"dungeon\"}");
            for (int i = 1; i <= 256; i++) {
                c.request(i, "world/subscribe", "{\"world\":\"" + (i % 2 == 0 ? "village" : "dungeon") + "\"}");
            }
            List<JsonNode> subscribed = c.sync();
            assertThat(subscribed)
                    .hasSize(256)
                    .allSatisfy(m -> assertThat(m.has("result")).as("%s", m).isTrue());
            assertThat(subscribed.getLast().path("result").path("subscription").asText())
                    .isEqualTo("sub256");
            JsonNode limit =
                    c.request(257, "world/subscribe", "{\"world\":\"village\"}").error(257);
            assertThat(limit.path("code").asInt()).isEqualTo(-32055);
            assertThat(limit.path("data").path("limit").asInt()).isEqualTo(256);
            JsonNode ended = c.call(258, "world/delete", "{\"world\":\"dungeon\"}");
            assertThat(ended.path("endedSubscriptions").asInt()).isEqualTo(128);
            assertThat(c.call(259, "world/subscribe", "{\"world\":\"village\"}")
                            .path("subscription")
                            .asText())
                    .isEqualTo("sub257");
            List<JsonNode> changes =
                    changesBefore(c, 260, "world/set", "{\"world\":\"village\",\"path\":\"x\",\"value\":1}");
            assertThat(changes).hasSize(129);
            assertThat(changes.getFirst().path("subscription").asText()).isEqualTo("sub2");
            assertThat(changes.getLast().path("subscription").asText()).isEqualTo("sub257");
        }
    }
}
