package dev.oam.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The contract for world state (PROTOCOL.md §6 World state, §7 {@code world/changed}; COMPAT.md):
 * every {@code world/*} method, path forms, versions, subscriptions and their notifications, limits,
 * ids and errors. JSON text in, parsed JSON out; no sleeps.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class WorldContract extends ContractSupport {
    private static final String VILLAGE = ("{\"player\":{\"name\":\"Aria\",\"gold\":60,\"bag\":[\"rope\",\"torch\"]},"
            + "\"quests\":{\"lost_ring\":{\"status\":\"open\"}},\"time_of_day\":\"night\"}");

    /** For the test class that runs this contract against its transport. */
    protected WorldContract() {}

    private static JsonNode json(String text) {
        return Conversation.object("{\"v\":" + text + "}").get("v");
    }

    private static List<String> keys(JsonNode node) {
        List<String> keys = new ArrayList<>();
        node.fieldNames().forEachRemaining(keys::add);
        return keys;
    }

    private static boolean isChange(JsonNode message) {
        return Conversation.isEvent(message, "world/changed");
    }

    /** The params of every {@code world/changed} among {@code messages}, in order. */
    private static List<JsonNode> changes(List<JsonNode> messages) {
        return messages.stream()
                .filter(WorldContract::isChange)
                .map(m -> m.get("params"))
                .toList();
    }

    /** Sends one request and returns the {@code world/changed} params that arrived before its response. */
    private static List<JsonNode> changesBefore(Conversation c, Object id, String method, String params) {
        int before = c.size();
        c.request(id, method, params);
        JsonNode response = c.response(id);
        assertThat(response.has("error")).as("%s failed: %s", method, response).isFalse();
        return changes(c.messagesFrom(before).subList(0, c.indexOf(response) - before));
    }

    private static Conversation village(Conversation c) {
        c.call("village", "world/create", "{\"world\":\"village\",\"state\":" + VILLAGE + "}");
        return c;
    }

    // ---------------------------------------------------------------- create, ids

    @Test
    void createGeneratesIdsThatCountOnlyGeneratedOnes() throws Exception {
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
    void createTakesAnInitialStateThatMustBeAnObject() throws Exception {
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
    void getReadsEveryPathFormAndTellsAbsentFromNull() throws Exception {
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
    void snapshotKeepsDocumentOrder() throws Exception {
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
    void setCreatesParentsAppendsAtIndexNAndStoresNull() throws Exception {
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
    void setWithoutAValueIsAnInvalidParameter() throws Exception {
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
    void mergeAppliesAnRfc7386PatchAtAPath() throws Exception {
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
    void removeReturnsTheOldValue() throws Exception {
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
    void versionsCountOnlyRealChanges() throws Exception {
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

    // ---------------------------------------------------------------- subscriptions

    @Test
    void subscriptionsAtInsideAndAboveAChangedPathAreNotifiedInSubscriptionOrder() throws Exception {
        try (Conversation c = village(open())) {
            JsonNode first = c.call(1, "world/subscribe", "{\"world\":\"village\",\"path\":\"player.gold\"}");
            assertThat(first)
                    .isEqualTo(json("{\"subscription\":\"sub1\",\"world\":\"village\",\"path\":\"player.gold\"}"));
            assertThat(keys(first)).containsExactly("subscription", "world", "path");
            c.call(2, "world/subscribe", "{\"world\":\"village\",\"path\":\"quests\"}");
            JsonNode everything = c.call(3, "world/subscribe", "{\"world\":\"village\"}");
            assertThat(everything.path("path").asText()).isEmpty();
            c.call(4, "world/subscribe", "{\"world\":\"village\",\"path\":\"player\"}");
            c.call(5, "world/subscribe", "{\"world\":\"village\",\"path\":\"player.gold.coins\"}");

            List<JsonNode> gold =
                    changesBefore(c, 6, "world/set", "{\"world\":\"village\",\"path\":\"player.gold\",\"value\":45}");
            assertThat(gold)
                    .extracting(p -> p.path("subscription").asText())
                    .containsExactly("sub1", "sub3", "sub4", "sub5");
            assertThat(gold.get(0))
                    .isEqualTo(json("{\"world\":\"village\",\"subscription\":\"sub1\",\"path\":\"player.gold\","
                            + "\"oldValue\":60,\"newValue\":45}"));
            assertThat(keys(gold.get(0))).containsExactly("world", "subscription", "path", "oldValue", "newValue");
            assertThat(gold).allSatisfy(p -> {
                assertThat(p.path("path").asText()).isEqualTo("player.gold");
                assertThat(p.path("oldValue").asInt()).isEqualTo(60);
                assertThat(p.path("newValue").asInt()).isEqualTo(45);
            });

            // a change above a subscription's path reports the changed ancestor
            List<JsonNode> player = changesBefore(
                    c, 7, "world/set", "{\"world\":\"village\",\"path\":\"player\",\"value\":{\"name\":\"Bo\"}}");
            assertThat(player)
                    .extracting(p -> p.path("subscription").asText())
                    .containsExactly("sub1", "sub3", "sub4", "sub5");
            assertThat(player.get(0).path("path").asText()).isEqualTo("player");
            assertThat(player.get(0).path("oldValue").path("gold").asInt()).isEqualTo(45);
            assertThat(player.get(0).path("newValue")).isEqualTo(json("{\"name\":\"Bo\"}"));

            List<JsonNode> quest = changesBefore(
                    c,
                    8,
                    "world/set",
                    "{\"world\":\"village\",\"path\":\"quests.lost_ring.status\",\"value\":\"done\"}");
            assertThat(quest).extracting(p -> p.path("subscription").asText()).containsExactly("sub2", "sub3");
            List<JsonNode> unrelated = changesBefore(
                    c, 9, "world/set", "{\"world\":\"village\",\"path\":\"time_of_day\",\"value\":\"dawn\"}");
            assertThat(unrelated)
                    .extracting(p -> p.path("subscription").asText())
                    .containsExactly("sub3");
        }
    }

    @Test
    void oldValueIsOmittedOnCreationAndNewValueOnRemoval() throws Exception {
        try (Conversation c = village(open())) {
            c.call(1, "world/subscribe", "{\"world\":\"village\",\"path\":\"player\"}");
            JsonNode created = changesBefore(
                            c, 2, "world/set", "{\"world\":\"village\",\"path\":\"player.horse\",\"value\":\"Bessie\"}")
                    .getFirst();
            assertThat(created)
                    .isEqualTo(
                            json(
                                    "{\"world\":\"village\",\"subscription\":\"sub1\",\"path\":\"player.horse\",\"newValue\":\"Bessie\"}"));
            JsonNode removed = changesBefore(c, 3, "world/remove", "{\"world\":\"village\",\"path\":\"player.horse\"}")
                    .getFirst();
            assertThat(removed)
                    .isEqualTo(
                            json(
                                    "{\"world\":\"village\",\"subscription\":\"sub1\",\"path\":\"player.horse\",\"oldValue\":\"Bessie\"}"));
            JsonNode toNull = changesBefore(
                            c, 4, "world/set", "{\"world\":\"village\",\"path\":\"player.name\",\"value\":null}")
                    .getFirst();
            assertThat(toNull.has("newValue")).isTrue();
            assertThat(toNull.get("newValue").isNull()).isTrue();
            assertThat(toNull.path("oldValue").asText()).isEqualTo("Aria");
            JsonNode fromNull = changesBefore(
                            c, 5, "world/set", "{\"world\":\"village\",\"path\":\"player.name\",\"value\":\"Bo\"}")
                    .getFirst();
            assertThat(fromNull.has("oldValue")).isTrue();
            assertThat(fromNull.get("oldValue").isNull()).isTrue();
            JsonNode deleted = changesBefore(
                            c, 6, "world/merge", "{\"world\":\"village\",\"patch\":{\"player\":{\"name\":null}}}")
                    .getFirst();
            assertThat(deleted.has("newValue")).isFalse();
            assertThat(deleted.get("oldValue").asText()).isEqualTo("Bo");
        }
    }

    @Test
    void removingAListItemNotifiesTheSubscribersOfEveryIndexItMoved() throws Exception {
        try (Conversation c = open()) {
            c.call(1, "world/create", "{\"world\":\"w\",\"state\":{\"list\":[\"a\",\"b\",\"c\",\"d\"]}}");
            c.call(2, "world/subscribe", "{\"world\":\"w\",\"path\":\"list[3]\"}");
            c.call(3, "world/subscribe", "{\"world\":\"w\",\"path\":\"list.0\"}");
            c.call(4, "world/subscribe", "{\"world\":\"w\",\"path\":\"list\"}");
            JsonNode removed = c.call(5, "world/remove", "{\"world\":\"w\",\"path\":\"list[1]\"}");
            assertThat(removed.path("oldValue").asText()).isEqualTo("b");
            // Every later item moved, so the change is the whole list: list[3] (now gone) hears it, and so does
            // list.0 (unchanged, but a subscriber of a list's items is told whenever the list's order changes).
            List<JsonNode> changes = changes(c.messagesFrom(0));
            assertThat(changes)
                    .extracting(p -> p.path("subscription").asText())
                    .containsExactly("sub1", "sub2", "sub3");
            assertThat(changes)
                    .allSatisfy(p -> assertThat(p)
                            .isEqualTo(json("{\"world\":\"w\",\"subscription\":\""
                                    + p.path("subscription").asText()
                                    + "\",\"path\":\"list\",\"oldValue\":[\"a\",\"b\",\"c\",\"d\"],"
                                    + "\"newValue\":[\"a\",\"c\",\"d\"]}")));
            // The last item moves nothing: only its own index changed.
            List<JsonNode> last = changesBefore(c, 6, "world/remove", "{\"world\":\"w\",\"path\":\"list.2\"}");
            assertThat(last)
                    .extracting(p -> p.path("subscription").asText() + " "
                            + p.path("path").asText())
                    .containsExactly("sub3 list.2");
        }
    }

    @Test
    void keysWithDotsSlashesAndBracketsAreAddressedByQuotedSegments() throws Exception {
        try (Conversation c = open()) {
            c.call(
                    1,
                    "world/create",
                    "{\"world\":\"w\",\"state\":{\"stats\":{\"hp.max\":30,\"hp\":{\"max\":99},\"a/b[0]\":1}}}");
            assertThat(c.call(2, "world/get", "{\"world\":\"w\",\"path\":\"stats[\\\"hp.max\\\"]\"}")
                            .path("value")
                            .asInt())
                    .isEqualTo(30);
            assertThat(c.call(3, "world/get", "{\"world\":\"w\",\"path\":\"stats.hp.max\"}")
                            .path("value")
                            .asInt())
                    .isEqualTo(99);
            c.call(4, "world/subscribe", "{\"world\":\"w\",\"path\":\"stats['hp.max']\"}");
            c.call(5, "world/subscribe", "{\"world\":\"w\",\"path\":\"stats.hp.max\"}");
            List<JsonNode> changes =
                    changesBefore(c, 6, "world/set", "{\"world\":\"w\",\"path\":\"stats['a/b[0]']\",\"value\":2}");
            assertThat(changes).isEmpty();
            changes = changesBefore(
                    c, 7, "world/set", "{\"world\":\"w\",\"path\":\"stats[\\\"hp.max\\\"]\",\"value\":31}");
            assertThat(changes)
                    .extracting(p -> p.path("subscription").asText() + " "
                            + p.path("path").asText())
                    .as("only the subscriber of that key, with a path that addresses it")
                    .containsExactly("sub1 stats[\"hp.max\"]");
            assertThat(c.call(8, "world/get", "{\"world\":\"w\",\"path\":\"stats\"}")
                            .path("value"))
                    .isEqualTo(json("{\"hp.max\":31,\"hp\":{\"max\":99},\"a/b[0]\":2}"));
        }
    }

    @Test
    void aMergeNotifiesOncePerChangedLeaf() throws Exception {
        try (Conversation c = village(open())) {
            c.call(1, "world/subscribe", "{\"world\":\"village\"}");
            c.call(2, "world/subscribe", "{\"world\":\"village\",\"path\":\"player.bag\"}");
            List<JsonNode> changes = changesBefore(
                    c,
                    3,
                    "world/merge",
                    "{\"world\":\"village\",\"patch\":{\"player\":{\"gold\":45,"
                            + "\"name\":\"Aria\",\"bag\":[\"rope\"],\"horse\":null},\"quests\":{\"dragon\":{\"status\":\"open\",\"x\":null}},\"time_of_day\":null}}");
            assertThat(changes)
                    .extracting(p -> p.path("subscription").asText() + " "
                            + p.path("path").asText())
                    .containsExactly(
                            "sub1 player.gold",
                            "sub1 player.bag",
                            "sub2 player.bag",
                            "sub1 quests.dragon",
                            "sub1 time_of_day");
            assertThat(changes.get(3).path("newValue")).isEqualTo(json("{\"status\":\"open\"}"));
            assertThat(changes.get(3).has("oldValue")).isFalse();
            assertThat(changes.get(4).has("newValue")).isFalse();
            assertThat(changes.get(4).path("oldValue").asText()).isEqualTo("night");
            assertThat(c.call(4, "world/get", "{\"world\":\"village\"}")
                            .path("version")
                            .asLong())
                    .isEqualTo(1);
        }
    }

    @Test
    void notificationsPrecedeTheResponseOfTheRequestThatCausedThem() throws Exception {
        try (Conversation c = village(open())) {
            c.request(1, "world/subscribe", "{\"world\":\"village\",\"path\":\"player\"}");
            c.request(2, "world/set", "{\"world\":\"village\",\"path\":\"player.gold\",\"value\":1}");
            c.request(3, "world/merge", "{\"world\":\"village\",\"patch\":{\"player\":{\"gold\":2,\"name\":\"Bo\"}}}");
            c.request(4, "world/remove", "{\"world\":\"village\",\"path\":\"player.bag\"}");
            c.request(5, "world/get", "{\"world\":\"village\",\"path\":\"player.gold\"}");
            List<JsonNode> messages = new ArrayList<>(c.sync());
            List<String> order = messages.stream()
                    .map(m -> isChange(m)
                            ? "changed " + m.path("params").path("path").asText()
                            : "response " + m.path("id").asText())
                    .toList();
            assertThat(order)
                    .containsExactly(
                            "response 1",
                            "changed player.gold",
                            "response 2",
                            "changed player.gold",
                            "changed player.name",
                            "response 3",
                            "changed player.bag",
                            "response 4",
                            "response 5");
            // a world/set sent as a notification gets no response but still notifies
            c.notification("world/set", "{\"world\":\"village\",\"path\":\"player.gold\",\"value\":3}");
            List<JsonNode> quiet = c.sync();
            assertThat(quiet).hasSize(1);
            assertThat(quiet.getFirst().path("params").path("newValue").asInt()).isEqualTo(3);
        }
    }

    @Test
    void subscribingNeedsAnExistingWorldAndAValidPath() throws Exception {
        try (Conversation c = village(open())) {
            JsonNode missing =
                    c.request(1, "world/subscribe", "{\"world\":\"nowhere\"}").error(1);
            assertThat(missing.path("code").asInt()).isEqualTo(-32052);
            assertThat(missing.path("data").path("world").asText()).isEqualTo("nowhere");
            JsonNode bad = c.request(2, "world/subscribe", "{\"world\":\"village\",\"path\":\"a..b\"}")
                    .error(2);
            assertThat(bad.path("code").asInt()).isEqualTo(-32054);
            assertThat(bad.path("data").path("world").asText()).isEqualTo("village");
            assertThat(bad.path("data").path("path").asText()).isEqualTo("a..b");
            // failed subscriptions used no id; paths are kept as sent, in any form
            JsonNode bracket = c.call(3, "world/subscribe", "{\"world\":\"village\",\"path\":\"player.bag[1]\"}");
            assertThat(bracket)
                    .isEqualTo(json("{\"subscription\":\"sub1\",\"world\":\"village\",\"path\":\"player.bag[1]\"}"));
            List<JsonNode> changes = changesBefore(
                    c, 4, "world/set", "{\"world\":\"village\",\"path\":\"player/bag/1\",\"value\":\"lamp\"}");
            assertThat(changes).hasSize(1);
            assertThat(changes.getFirst().path("path").asText()).isEqualTo("player.bag.1");
        }
    }

    @Test
    void unsubscribeEndsNotifications() throws Exception {
        try (Conversation c = village(open())) {
            c.call(1, "world/subscribe", "{\"world\":\"village\",\"path\":\"player\"}");
            c.call(2, "world/subscribe", "{\"world\":\"village\"}");
            JsonNode ended = c.call(3, "world/unsubscribe", "{\"subscription\":\"sub1\"}");
            assertThat(ended)
                    .isEqualTo(
                            json(
                                    "{\"subscription\":\"sub1\",\"world\":\"village\",\"path\":\"player\",\"unsubscribed\":true}"));
            assertThat(keys(ended)).containsExactly("subscription", "world", "path", "unsubscribed");
            List<JsonNode> changes =
                    changesBefore(c, 4, "world/set", "{\"world\":\"village\",\"path\":\"player.gold\",\"value\":1}");
            assertThat(changes).extracting(p -> p.path("subscription").asText()).containsExactly("sub2");
            JsonNode again = c.request(5, "world/unsubscribe", "{\"subscription\":\"sub1\"}")
                    .error(5);
            assertThat(again.path("code").asInt()).isEqualTo(-32056);
            assertThat(code(again)).isEqualTo("subscription_not_found");
            assertThat(again.path("data").path("subscription").asText()).isEqualTo("sub1");
            // subscription ids are never reused
            assertThat(c.call(6, "world/subscribe", "{\"world\":\"village\"}")
                            .path("subscription")
                            .asText())
                    .isEqualTo("sub3");
        }
    }

    // ---------------------------------------------------------------- delete, list

    @Test
    void deleteEndsTheWorldsSubscriptions() throws Exception {
        try (Conversation c = village(open())) {
            c.call(1, "world/create", "{\"world\":\"dungeon\"}");
            c.call(2, "world/subscribe", "{\"world\":\"village\"}");
            c.call(3, "world/subscribe", "{\"world\":\"dungeon\"}");
            c.call(4, "world/subscribe", "{\"world\":\"village\",\"path\":\"player\"}");
            JsonNode deleted = c.call(5, "world/delete", "{\"world\":\"village\"}");
            assertThat(deleted).isEqualTo(json("{\"world\":\"village\",\"deleted\":true,\"endedSubscriptions\":2}"));
            assertThat(keys(deleted)).containsExactly("world", "deleted", "endedSubscriptions");
            for (String method : List.of(
                    "world/get",
                    "world/set",
                    "world/merge",
                    "world/remove",
                    "world/snapshot",
                    "world/delete",
                    "world/subscribe")) {
                JsonNode error = c.request(
                                method, method, "{\"world\":\"village\",\"path\":\"a\",\"value\":1,\"patch\":{}}")
                        .error(method);
                assertThat(error.path("code").asInt()).as(method).isEqualTo(-32052);
                assertThat(code(error)).as(method).isEqualTo("world_not_found");
                assertThat(error.path("data").path("world").asText()).as(method).isEqualTo("village");
            }
            assertThat(c.request(6, "world/unsubscribe", "{\"subscription\":\"sub1\"}")
                            .error(6)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32056);
            List<JsonNode> dungeon =
                    changesBefore(c, 7, "world/set", "{\"world\":\"dungeon\",\"path\":\"depth\",\"value\":3}");
            assertThat(dungeon).extracting(p -> p.path("subscription").asText()).containsExactly("sub2");
            // the id is free again
            assertThat(c.call(8, "world/create", "{\"world\":\"village\"}")
                            .path("version")
                            .asLong())
                    .isZero();
            assertThat(c.call(9, "world/get", "{\"world\":\"village\"}").path("value"))
                    .isEqualTo(json("{}"));
        }
    }

    @Test
    void listShowsEveryWorldInCreationOrder() throws Exception {
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
    void worldErrorsNameTheWorldAndThePathAndChangeNothing() throws Exception {
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
    void atMost64WorldsAndTheLimitUsesNoId() throws Exception {
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
    void atMost256SubscriptionsAcrossWorlds() throws Exception {
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
