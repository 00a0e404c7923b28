package dev.oam.testing.contract;

import static dev.oam.testing.contract.ContractSupport.code;
import static dev.oam.testing.contract.JsonKeys.keys;
import static dev.oam.testing.contract.WorldScripts.changes;
import static dev.oam.testing.contract.WorldScripts.changesBefore;
import static dev.oam.testing.contract.WorldScripts.isChange;
import static dev.oam.testing.contract.WorldScripts.json;
import static dev.oam.testing.contract.WorldScripts.village;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.Conversation;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The subscription part of the world contract (docs/GAMES.md, "Worlds"): who is notified of which change, in which
 * order and form, and when notifications end.
 */
public interface WorldSubscriptionContract extends ContractFixture {
    // ---------------------------------------------------------------- subscriptions

    @Test
    default void subscriptionsAtInsideAndAboveAChangedPathAreNotifiedInSubscriptionOrder() throws Exception {
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
    default void oldValueIsOmittedOnCreationAndNewValueOnRemoval() throws Exception {
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
    default void removingAListItemNotifiesTheSubscribersOfEveryIndexItMoved() throws Exception {
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
    default void keysWithDotsSlashesAndBracketsAreAddressedByQuotedSegments() throws Exception {
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
    default void aMergeNotifiesOncePerChangedLeaf() throws Exception {
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
    default void notificationsPrecedeTheResponseOfTheRequestThatCausedThem() throws Exception {
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
    default void subscribingNeedsAnExistingWorldAndAValidPath() throws Exception {
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
    default void unsubscribeEndsNotifications() throws Exception {
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
    default void deleteEndsTheWorldsSubscriptions() throws Exception {
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
}
