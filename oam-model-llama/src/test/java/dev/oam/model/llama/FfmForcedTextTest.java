package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.SlotEngine;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.prompt.ChatMessage;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Text a grammar forces (a call's keys and punctuation) is fed to the model in batches on the FFM engine with the Java
 * grammar, not sampled a token at a time, and the output is still exactly a sentence of the grammar: the issue 30 lever
 * for a tool step, whose text is mostly forced.
 */
class FfmForcedTextTest {
    @Test
    void aCallsForcedTextIsFedInBatchesAndTheCallStillParses() throws Exception {
        assumeTrue(TinyEngines.ffmPossible(), "FFM needs JDK 22+ on Linux or macOS");
        SlotEngine engine = TinyEngines.chatMl(EngineChoice.Kind.FFM);
        Grammar grammar = StepGrammar.of(
                Fixtures.request(
                        Fixtures.prompt("Open the north gate."),
                        List.of(Fixtures.OPEN_GATE),
                        ToolCallingMode.REQUIRED,
                        false,
                        null),
                64);
        GbnfChecker checker = GbnfChecker.parse(grammar);
        String prompt = engine.renderChat(List.of(new ChatMessage("user", "Open the north gate.")));
        AtomicLong forced = TinyEngines.PROBES.forcedTokens;
        for (long seed = 0; seed < 3; seed++) {
            long before = forced.get();
            EngineRequest request = new EngineRequest(prompt, grammar, 96, seed == 0 ? 0 : 1.0, 0, 1, seed);
            EngineResult result = engine.generate(request, "forced-" + seed, d -> {}, CancellationToken.create());
            assertThat(checker.accepts(result.text()))
                    .as("seed %d: %s", seed, result.text())
                    .isTrue();
            JsonNode call = Json.parse(result.text()).path("tool_call");
            assertThat(call.path("name").asText()).isEqualTo("open_gate");
            long fed = forced.get() - before;
            assertThat(fed).as("forced tokens fed in batches").isPositive();
            assertThat(fed).as("they count as output tokens").isLessThan(result.outputTokens());
        }
    }
}
