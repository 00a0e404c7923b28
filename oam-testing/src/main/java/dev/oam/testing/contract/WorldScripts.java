package dev.oam.testing.contract;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.Conversation;
import java.util.List;

/** Requests and notification readers of the world contract's parts: the village world and its changes. */
final class WorldScripts {
    static final String VILLAGE = ("{\"player\":{\"name\":\"Aria\",\"gold\":60,\"bag\":[\"rope\",\"torch\"]},"
            + "\"quests\":{\"lost_ring\":{\"status\":\"open\"}},\"time_of_day\":\"night\"}");

    static JsonNode json(String text) {
        return Conversation.object("{\"v\":" + text + "}").get("v");
    }

    static boolean isChange(JsonNode message) {
        return Conversation.isEvent(message, "world/changed");
    }

    /** The params of every {@code world/changed} among {@code messages}, in order. */
    static List<JsonNode> changes(List<JsonNode> messages) {
        return messages.stream()
                .filter(WorldScripts::isChange)
                .map(m -> m.get("params"))
                .toList();
    }

    /** Sends one request and returns the {@code world/changed} params that arrived before its response. */
    static List<JsonNode> changesBefore(Conversation c, Object id, String method, String params) {
        int before = c.size();
        c.request(id, method, params);
        JsonNode response = c.response(id);
        assertThat(response.has("error")).as("%s failed: %s", method, response).isFalse();
        return changes(c.messagesFrom(before).subList(0, c.indexOf(response) - before));
    }

    static Conversation village(Conversation c) {
        c.call("village", "world/create", "{\"world\":\"village\",\"state\":" + VILLAGE + "}");
        return c;
    }

    private WorldScripts() {}
}
