package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An NPC conversation through {@code npc/talk} on the generated model: streaming, emotions, save and restore, a world.
 */
@Timeout(120)
class LlamaNpcWireTest extends LlamaWireSupport {
    static final List<String> EMOTIONS = List.of("happy", "angry", "neutral");
    static final String OPTIONS =
            "{\"emotions\":[\"happy\",\"angry\",\"neutral\"],\"compactAfterTurns\":0,\"temperature\":1.0,"
                    + "\"maximumResponseTokens\":48}";

    private List<JsonNode> npcEvents(Object requestId) {
        String key = Json.write(Json.mapper().valueToTree(requestId));
        return c.messages().stream()
                .filter(m -> "npc/event".equals(m.path("method").asText())
                        && Json.write(m.path("params").path("requestId")).equals(key))
                .map(m -> m.path("params").path("event"))
                .toList();
    }

    private static String replay(List<JsonNode> events) {
        StringBuilder line = new StringBuilder();
        for (JsonNode event : events) {
            switch (event.path("type").asText()) {
                case "lineDelta" -> line.append(event.path("delta").asText());
                case "lineReset" -> line.setLength(0);
                default -> {}
            }
            if (event.path("type").asText().equals("lineReset")) {
                line.append(event.path("line").asText());
            }
        }
        return line.toString();
    }

    private static void assertReply(JsonNode reply) {
        assertThat(reply.path("line").isTextual()).as("%s", reply).isTrue();
        assertThat(reply.path("emotion").asText()).as("%s", reply).isIn(EMOTIONS);
        assertThat(reply.path("isFallback").asBoolean()).as("%s", reply).isFalse();
        assertThat(reply.path("playerOptions").isArray()).isTrue();
        assertThat(reply.path("usage").path("inputTokens").asInt()).isPositive();
    }

    @Test
    void aConversationStreamsSavesAndRestores() {
        c.call(
                "create",
                "npc/create",
                "{\"npc\":\"gorm\",\"persona\":{\"name\":\"Gorm\",\"role\":\"the village blacksmith\","
                        + "\"personality\":\"Gruff but fair.\"},\"options\":" + OPTIONS + ",\"model\":"
                        + spec(",\"seed\":11") + "}");
        assertReply(c.call(1, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Hello there.\"}"));
        JsonNode streamed = c.call(2, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Got any swords?\",\"stream\":true}");
        assertReply(streamed);
        List<JsonNode> events = npcEvents(2);
        assertThat(events.stream().filter(e -> e.path("type").asText().equals("lineDelta")))
                .as("the line streams")
                .isNotEmpty();
        assertThat(replay(events)).isEqualTo(streamed.path("line").asText());
        assertThat(events.stream()
                        .filter(e -> e.path("type").asText().equals("emotion"))
                        .map(e -> e.path("emotion").asText()))
                .isNotEmpty()
                .allMatch(EMOTIONS::contains);
        JsonNode third = c.call(3, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Goodbye.\"}");
        assertReply(third);

        JsonNode state = c.call("state", "npc/state", "{\"npc\":\"gorm\"}").path("state");
        assertThat(Json.write(state)).contains("Got any swords?", "Gorm");
        c.call(
                "restore",
                "npc/restore",
                "{\"npc\":\"gorm2\",\"state\":" + Json.write(state) + ",\"model\":" + spec(",\"seed\":12") + "}");
        JsonNode restored = c.call(4, "npc/talk", "{\"npc\":\"gorm2\",\"line\":\"Remember me?\"}");
        assertReply(restored);
        assertThat(restored.path("usage").path("inputTokens").asInt())
                .as("the restored history is in the prompt")
                .isGreaterThan(third.path("usage").path("inputTokens").asInt());
        // Restored in the same process, the NPC's prompt is not read again: the lane of the NPC it was saved from still
        // holds the instructions and the history up to the last player line (a turn's schema instruction follows only
        // the newest line, so that line and the answer to it are read again, as in any next turn). So the restored
        // turn reuses more than the third turn did, which reused the history up to the second line.
        assertThat(restored.path("usage").path("cachedInputTokens").asInt())
                .as("%s", restored.path("usage"))
                .isGreaterThan(third.path("usage").path("cachedInputTokens").asInt());
        assertThat(third.path("usage").path("cachedInputTokens").asInt())
                .as("%s", third.path("usage"))
                .isPositive();
        JsonNode listed = c.call("list", "npc/list", null).path("npcs");
        assertThat(listed).extracting(n -> n.path("npc").asText()).containsExactly("gorm", "gorm2");
        assertThat(listed.get(1).path("turnCount").asInt()).isEqualTo(4);
    }

    /**
     * Issue 37: NPCs on one model are independent. A second NPC, created after one with knowledge had talked, once got
     * the first NPC's reply grammar (its name), so every turn of it failed to parse; in either order each answers as
     * itself, with a line of its own.
     */
    @Test
    void twoNpcsOnTheSystemModelEachAnswerAsThemselvesInEitherOrder() {
        String hilde = "{\"name\":\"Hilde\",\"role\":\"the ferry keeper\","
                + "\"knowledge\":[\"the bridge to Eastmarch collapsed in last night's storm\"]}";
        String sela = "{\"name\":\"Sela\",\"role\":\"a travelling bard\",\"personality\":\"Witty and curious.\","
                + "\"maxSentences\":2}";
        String options = "{\"temperature\":0,\"compactAfterTurns\":0,\"maximumResponseTokens\":48}";
        String[][] orders = {{"hilde", "sela"}, {"sela2", "hilde2"}};
        int id = 1;
        for (String[] order : orders) {
            for (String npc : order) {
                String persona = npc.startsWith("hilde") ? hilde : sela;
                c.call(
                        "create-" + npc,
                        "npc/create",
                        "{\"npc\":\"" + npc + "\",\"persona\":" + persona + ",\"options\":" + options + "}");
                JsonNode reply = c.call(
                        id++,
                        "npc/talk",
                        "{\"npc\":\"" + npc + "\",\"line\":\""
                                + (npc.startsWith("hilde")
                                        ? "Can I take the bridge to Eastmarch?"
                                        : "Hello there, bard!")
                                + "\"}");
                assertThat(reply.path("isFallback").asBoolean())
                        .as("%s answered: %s", npc, reply)
                        .isFalse();
                assertThat(reply.path("line").asText()).as("%s", reply).isNotBlank();
            }
        }
    }

    @Test
    void anNpcReadsItsWorldWithALocalTool() {
        c.call(
                "w",
                "world/create",
                "{\"world\":\"village\",\"state\":{\"player\":{\"gold\":60},\"weather\":\"rain\"}}");
        c.call(
                "create",
                "npc/create",
                "{\"npc\":\"mira\",\"persona\":{\"name\":\"Mira\",\"role\":\"the innkeeper\"},\"world\":\"village\","
                        + "\"options\":{\"groundingTool\":\"read_world_state\",\"emotions\":[\"happy\",\"angry\",\"neutral\"],\"compactAfterTurns\":0,"
                        + "\"maximumResponseTokens\":48},\"model\":" + spec(",\"seed\":3") + "}");
        JsonNode reply =
                c.call(1, "npc/talk", "{\"npc\":\"mira\",\"line\":\"How much gold do I have?\",\"stream\":true}");
        assertReply(reply);
        JsonNode calls = reply.path("toolCalls");
        assertThat(calls).isNotEmpty();
        assertThat(calls.get(0).path("call").path("name").asText()).isEqualTo("read_world_state");
        assertThat(c.messages().stream()
                        .filter(m -> "tool/call".equals(m.path("method").asText())))
                .as("world tools are local")
                .isEmpty();
        assertThat(npcEvents(1).stream()
                        .filter(e -> e.path("type").asText().equals("toolCallStarted"))
                        .map(e -> e.path("execution").asText()))
                .contains("local");
        assertThat(replay(npcEvents(1))).isEqualTo(reply.path("line").asText());
    }
}
