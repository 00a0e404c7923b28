package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Structured turns, decisions and streaming on the generated model, through the wire. */
@Timeout(120)
class LlamaStructuredWireTest extends LlamaWireSupport {
    static final String SCHEMA = """
            {"type":"object","additionalProperties":false,"required":["reasoning","choice","confidence","target","loot"],"properties":{
              "reasoning":{"type":"string"},
              "choice":{"type":"string","enum":["attack","flee","trade"]},
              "confidence":{"type":"integer","minimum":0,"maximum":100},
              "target":{"type":"object","additionalProperties":false,"required":["name","distance"],"properties":{
                "name":{"type":"string","enum":["goblin","dragon"]},"distance":{"type":"number","minimum":0,"maximum":30}}},
              "loot":{"type":"array","maxItems":3,"items":{"type":"string","enum":["gold","sword","potion"]}},
              "shout":{"type":"boolean"}}}""";

    @Test
    void structuredTurnsValidateForEverySeedWithKeysInSchemaOrder() {
        JsonNode schema = Fixtures.json(SCHEMA);
        List<String> order = fieldNames(schema.get("properties"));
        Set<String> distinct = new HashSet<>();
        for (int seed = 1; seed <= 20; seed++) {
            c.call(
                    "c" + seed,
                    "session/create",
                    "{\"session\":\"s" + seed + "\",\"model\":" + spec(",\"seed\":" + seed) + ","
                            + "\"options\":{\"temperature\":1.0,\"maxResponseTokens\":64}}");
            JsonNode result = c.call(
                    "r" + seed,
                    "session/respond",
                    "{\"session\":\"s" + seed + "\",\"prompt\":\"A goblin blocks the road.\"," + "\"schema\":" + SCHEMA
                            + "}");
            JsonNode structured = result.path("structured");
            assertThat(SchemaCheck.violations(schema, structured))
                    .as("seed %d: %s", seed, structured)
                    .isEmpty();
            assertThat(order).as("seed %d: keys in schema order", seed).containsSubsequence(fieldNames(structured));
            assertThat(Fixtures.json(result.path("text").asText())).isEqualTo(structured);
            assertThat(result.path("text").asText())
                    .as("text is the JSON of structured, in order")
                    .isEqualTo(Json.write(structured));
            distinct.add(Json.write(structured));
        }
        assertThat(distinct.size()).as("seeds give different answers").isGreaterThan(10);
    }

    @Test
    void decisionsAlwaysPickAnOfferedOption() {
        Set<String> picked = new HashSet<>();
        for (int seed = 1; seed <= 20; seed++) {
            JsonNode decision = c.call(
                    "d" + seed,
                    "decision/decide",
                    "{\"situation\":\"A dragon lands in front of Snik.\","
                            + "\"options\":[{\"id\":\"flee\",\"description\":\"Run into the woods\"},\"attack\",{\"id\":\"beg\",\"description\":\"Beg for mercy\"}],"
                            + "\"actor\":{\"name\":\"Snik\",\"role\":\"a timid goblin\"},\"temperature\":1.0,\"model\":"
                            + spec(",\"seed\":" + seed) + "}");
            assertThat(decision.path("optionID").asText())
                    .as("seed %d: %s", seed, decision)
                    .isIn("flee", "attack", "beg");
            assertThat(decision.path("reasoning").isTextual()).isTrue();
            assertThat(decision.path("confidence").isIntegralNumber()).isTrue();
            assertThat(decision.path("confidence").asInt()).isBetween(0, 100);
            assertThat(decision.path("isFallback").asBoolean()).isFalse();
            assertThat(decision.path("usage").path("outputTokens").asInt()).isPositive();
            picked.add(decision.path("optionID").asText());
        }
        assertThat(picked).as("seeds pick different options").hasSizeGreaterThan(1);

        JsonNode many = c.call(
                "many",
                "decision/decideMany",
                "{\"requests\":["
                        + "{\"situation\":\"The bridge burns.\",\"options\":[\"jump\",\"wait\"]},"
                        + "{\"situation\":\"A merchant offers bread.\",\"options\":[\"buy\",\"sell\",\"leave\"]},"
                        + "{\"situation\":\"Only one way.\",\"options\":[\"go\"]}],\"temperature\":1.0,\"model\":"
                        + spec(",\"seed\":5") + "}");
        JsonNode results = many.path("results");
        assertThat(results).hasSize(3);
        assertThat(results.get(0).path("optionID").asText()).isIn("jump", "wait");
        assertThat(results.get(1).path("optionID").asText()).isIn("buy", "sell", "leave");
        assertThat(results.get(2).path("optionID").asText()).isEqualTo("go");
        assertThat(results.get(2).path("confidence").asInt()).isEqualTo(100);
    }

    @Test
    void streamedTextDeltasAddUpToTheAnswer() {
        for (int seed = 1; seed <= 3; seed++) {
            c.call(
                    "c" + seed,
                    "session/create",
                    "{\"session\":\"t" + seed + "\",\"options\":{\"maxResponseTokens\":48,"
                            + "\"temperature\":1.0,\"sampling\":{\"topK\":40,\"seed\":" + seed + "}}}");
            JsonNode result = c.call(
                    "r" + seed,
                    "session/respond",
                    "{\"session\":\"t" + seed + "\",\"prompt\":\"Tell me of the dragon.\",\"stream\":true}");
            List<JsonNode> events = c.events("r" + seed);
            assertThat(events.stream().filter(e -> e.path("type").asText().equals("text")))
                    .as("seed %d streams", seed)
                    .isNotEmpty();
            assertThat(streamedText(events)).isEqualTo(result.path("text").asText());
            JsonNode lastText = events.stream()
                    .filter(e -> e.path("type").asText().equals("text"))
                    .reduce((a, b) -> b)
                    .orElseThrow();
            assertThat(lastText.path("text").asText())
                    .as("text is the whole answer so far")
                    .isEqualTo(result.path("text").asText());
            assertThat(result.path("usage").path("outputTokens").asInt()).isBetween(1, 48);
        }
    }

    @Test
    void structuredTurnsStreamPartialValuesEndingWithTheResult() {
        c.call(
                "c",
                "session/create",
                "{\"session\":\"p\",\"options\":{\"maxResponseTokens\":64,\"sampling\":{\"topK\":40,\"seed\":3},"
                        + "\"temperature\":1.0}}");
        JsonNode result = c.call(
                "r",
                "session/respond",
                "{\"session\":\"p\",\"prompt\":\"A goblin.\",\"schema\":" + SCHEMA + ",\"stream\":true}");
        List<JsonNode> partials = c.events("r").stream()
                .filter(e -> e.path("type").asText().equals("partial"))
                .toList();
        assertThat(partials.size()).as("partials grow as tokens arrive").isGreaterThan(3);
        assertThat(partials.get(partials.size() - 1).path("value")).isEqualTo(result.path("structured"));
        assertThat(c.events("r").stream().filter(e -> e.path("type").asText().equals("text")))
                .isEmpty();
        assertThat(Conversation.isResponse(c.response("r"))).isTrue();
    }
}
