package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.SlotEngine;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.prompt.ChatMessage;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A constrained output that runs long is closed within its token budget on the FFM engine with the Java grammar,
 * instead of being cut mid-structure, and with no cap on strings in advance (that would cut every value short). The
 * generated model writes random text, so its strings never end on their own: without the closing every one of these
 * outputs would be cut and fail to parse.
 */
class FfmClosingTest {
    private static final Grammar GRAMMAR = grammar();

    private static Grammar grammar() {
        try {
            return StepGrammarFixtures.objectOfStrings(4, 256);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aLongStructureIsClosedWithinTheBudgetAndParses() throws Exception {
        assumeTrue(TinyEngines.ffmPossible(), "FFM needs JDK 22+ on Linux or macOS");
        SlotEngine engine = TinyEngines.chatMl(EngineChoice.Kind.FFM);
        assertThat(engine.closesGrammarsAtBudget()).isTrue();
        String prompt = engine.renderChat(List.of(new ChatMessage("user", "Describe a sword.")));
        GbnfChecker checker = GbnfChecker.parse(GRAMMAR);
        for (int budget : new int[] {48, 64, 100}) { // the shortest whole value takes 36 characters
            for (long seed = 0; seed < 3; seed++) {
                EngineRequest request = new EngineRequest(prompt, GRAMMAR, budget, seed == 0 ? 0 : 1.0, 0, 1, seed);
                EngineResult result =
                        engine.generate(request, "closing-" + budget + "-" + seed, d -> {}, CancellationToken.create());
                assertThat(result.outputTokens()).as("budget %d", budget).isLessThanOrEqualTo(budget);
                assertThat(checker.accepts(result.text()))
                        .as("budget %d seed %d: %s", budget, seed, result.text())
                        .isTrue();
                JsonNode value = Json.parse(result.text());
                assertThat(value.path("a").isTextual()).isTrue();
            }
        }
    }
}
