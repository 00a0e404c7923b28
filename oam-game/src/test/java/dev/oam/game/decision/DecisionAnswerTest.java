package dev.oam.game.decision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import java.util.List;
import org.junit.jupiter.api.Test;

class DecisionAnswerTest {
    private static final List<String> IDS = List.of("flee", "Fight", "fight_back");

    private static JsonNode json(String text) throws Exception {
        return Json.parse(text);
    }

    @Test
    void choiceMatchesExactlyBeforeIgnoringCase() {
        assertThat(DecisionAnswer.match("Fight", List.of("fight", "Fight"))).isEqualTo("Fight");
        assertThat(DecisionAnswer.match("FIGHT", List.of("fight", "Fight"))).isEqualTo("fight");
        assertThat(DecisionAnswer.match(" FLEE ", IDS)).isEqualTo("flee");
        assertThat(DecisionAnswer.match("fight back", IDS)).isNull();
    }

    @Test
    void confidenceIsRoundedAndClampedAndDefaultsToFifty() throws Exception {
        assertThat(DecisionAnswer.confidence(json("72.5"))).isEqualTo(73);
        assertThat(DecisionAnswer.confidence(json("72.4"))).isEqualTo(72);
        assertThat(DecisionAnswer.confidence(json("150"))).isEqualTo(100);
        assertThat(DecisionAnswer.confidence(json("-3"))).isEqualTo(0);
        assertThat(DecisionAnswer.confidence(json("1e999"))).isEqualTo(100);
        assertThat(DecisionAnswer.confidence(json("\"80%\""))).isEqualTo(80);
        assertThat(DecisionAnswer.confidence(json("\"1e999999999\""))).isEqualTo(100);
        assertThat(DecisionAnswer.confidence(json("\"very\""))).isEqualTo(50);
        assertThat(DecisionAnswer.confidence(json("null"))).isEqualTo(50);
        assertThat(DecisionAnswer.confidence(null)).isEqualTo(50);
    }

    @Test
    void readsReasoningChoiceAndConfidence() throws Exception {
        DecisionAnswer answer = DecisionAnswer.read(
                json("{\"confidence\": 64.6, \"choice\": \"FLEE\", \"reasoning\": \" Too many. \"}"), IDS);
        assertThat(answer).isEqualTo(new DecisionAnswer("flee", "Too many.", 65));
        assertThat(DecisionAnswer.read(json("{\"choice\": \"flee\"}"), IDS))
                .isEqualTo(new DecisionAnswer("flee", "", 50));
    }

    @Test
    void aChoiceOfNoOptionIsGenerationFailed() {
        assertThatThrownBy(() -> DecisionAnswer.read(json("{\"choice\": \"dance\"}"), IDS))
                .isInstanceOfSatisfying(
                        AgentException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.GENERATION_FAILED))
                .hasMessageContaining("\"dance\"")
                .hasMessageContaining("[\"flee\",\"Fight\",\"fight_back\"]");
        assertThatThrownBy(() -> DecisionAnswer.read(json("{\"reasoning\": \"hm\"}"), IDS))
                .hasMessageContaining("no option");
        assertThatThrownBy(() -> DecisionAnswer.read(json("[1]"), IDS)).hasMessageContaining("not a JSON object");
    }

    @Test
    void normalizedAnswersHaveTheSchemaFormOrNothing() throws Exception {
        assertThat(Json.write(DecisionAnswer.normalize(
                        json("{\"extra\": 1, \"confidence\": 101, \"choice\": \"fight\"}"), IDS)))
                .isEqualTo("{\"reasoning\":\"\",\"choice\":\"Fight\",\"confidence\":100}");
        assertThat(DecisionAnswer.normalize(json("{\"choice\": \"dance\"}"), IDS))
                .isNull();
        assertThat(DecisionAnswer.normalize(null, IDS)).isNull();
    }
}
