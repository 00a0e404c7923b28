package dev.oam.game.internal;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.json.Json;
import java.util.List;
import org.junit.jupiter.api.Test;

class PromptTextTest {
    @Test
    void sentencesEndWithTerminalPunctuation() {
        assertThat(PromptText.sentence(" Gruff but fair ")).isEqualTo("Gruff but fair.");
        assertThat(PromptText.sentence("Loud!")).isEqualTo("Loud!");
        assertThat(PromptText.sentence("Says \"aye\"")).isEqualTo("Says \"aye\"");
        assertThat(PromptText.sentence("Done.")).isEqualTo("Done.");
        assertThat(PromptText.sentence("  ")).isEmpty();
    }

    @Test
    void listsDropOneTrailingPeriodPerItemAndEndWithOne() {
        assertThat(PromptText.list(List.of(" Sell swords. ", "", "Find the ring")))
                .isEqualTo("Sell swords; Find the ring.");
        assertThat(PromptText.list(List.of())).isEmpty();
    }

    @Test
    void factsAreTextAsItIsOrCompactJsonAndNothingWhenEmpty() throws Exception {
        assertThat(PromptText.facts(Json.parse("{\"hp\": 3, \"foes\": [\"wolf\"]}")))
                .isEqualTo("{\"hp\":3,\"foes\":[\"wolf\"]}");
        assertThat(PromptText.facts(TextNode.valueOf(" It is raining. "))).isEqualTo("It is raining.");
        assertThat(PromptText.facts(Json.parse("42"))).isEqualTo("42");
        assertThat(PromptText.facts(null)).isNull();
        assertThat(PromptText.facts(NullNode.getInstance())).isNull();
        assertThat(PromptText.facts(Json.parse("{}"))).isNull();
        assertThat(PromptText.facts(Json.parse("[]"))).isNull();
        assertThat(PromptText.facts(TextNode.valueOf(" "))).isNull();
    }
}
