package dev.oam.testing.contract;

import static dev.oam.testing.contract.ContractSupport.scripted;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import java.util.List;

/** Requests and event readers of the NPC contract's parts: the persona Gorm, his tools and his replies. */
final class NpcScripts {
    static final String INVENTORY_TOOL =
            "{\"name\":\"check_inventory\",\"description\":\"Look up an item's stock and price.\","
                    + "\"parameters\":{\"type\":\"object\",\"properties\":{\"item\":{\"type\":\"string\"}},\"required\":[\"item\"]}}";
    static final String GORM =
            "{\"name\":\"Gorm\",\"role\":\"the village blacksmith\",\"personality\":\"Gruff but fair\"}";

    static JsonNode npc(Conversation c, String id, String optionsJson, String toolsJson, String stepsJson) {
        return c.call(
                "npc-" + id,
                "npc/create",
                "{\"npc\":\"" + id + "\",\"persona\":" + GORM + ",\"tools\":" + toolsJson + ",\"options\":"
                        + optionsJson + ",\"model\":" + scripted(stepsJson) + "}");
    }

    static String reply(String emotion, String line) {
        return "{\"json\":{\"emotion\":\"" + emotion + "\",\"line\":\"" + line
                + "\",\"player_options\":[\"A\",\"B\",\"C\"]," + "\"ends_conversation\":false}}";
    }

    /** Replays lineDelta/lineReset events of one request: the result every client's typewriter shows. */
    static String replay(Conversation c, Object requestId) {
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

    static List<JsonNode> npcEvents(Conversation c, Object requestId) {
        String key = Json.write(Json.mapper().valueToTree(requestId));
        return c.messages().stream()
                .filter(m -> Conversation.isEvent(m, "npc/event")
                        && Json.write(m.path("params").path("requestId")).equals(key))
                .map(m -> m.path("params").path("event"))
                .toList();
    }

    private NpcScripts() {}
}
