package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.oam.core.Environment;
import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.RepetitionGuard;
import dev.oam.model.llama.engine.SlotEngine;
import dev.oam.model.llama.ffm.FfmObserver;
import dev.oam.model.llama.ffm.FfmTuning;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.prompt.ChatMessage;
import dev.oam.testing.gguf.TinyGguf;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The FFM engine's grammars: the Java compiler (the default) against llama.cpp's own grammar sampler
 * ({@code OAM_LLAMA_GRAMMAR=native}) as the oracle, on the tiny model with the project's grammars. Both are consulted
 * the same way per step (the model's choice, then the mask when it is rejected).
 */
class FfmGrammarOracleTest {
    private static SlotEngine java;
    private static SlotEngine nativeGrammar;

    @BeforeAll
    static void open() throws Exception {
        assumeTrue(TinyEngines.ffmPossible(), "FFM needs JDK 22+ on Linux or macOS");
        Path file = TinyEngines.MODELS.resolve("tiny-native-grammar.gguf");
        if (!Files.exists(file)) {
            TinyGguf.tiny().name("tiny-native-grammar").write(file);
        }
        // The same file and lanes on both (so the same attention kernels), and no forced text fed in batches: the
        // native grammar samples every token, and a forced text's own tokens may differ from the ones it samples.
        FfmTuning tuning = SystemSettings.tuning().withForced(false);
        EngineSettings settings = EngineSettings.defaults()
                .withContextSize(512)
                .withSlots(2)
                .withThreads(1)
                .withThreadsBatch(1);
        java = (SlotEngine) EngineChoice.open(
                GgufFile.read(file),
                settings,
                EngineChoice.Kind.FFM,
                SystemSettings.natives(),
                tuning.withGrammar(FfmTuning.Grammar.JAVA),
                FfmObserver.NONE);
        nativeGrammar = (SlotEngine) EngineChoice.open(
                GgufFile.read(file),
                settings,
                EngineChoice.Kind.FFM,
                SystemSettings.natives(),
                tuning.withGrammar(FfmTuning.Grammar.NATIVE),
                FfmObserver.NONE);
    }

    @org.junit.jupiter.api.AfterAll
    static void close() throws Exception {
        if (java != null) {
            LlamaEngines.close(java);
        }
    }

    static Stream<Grammar> grammars() throws Exception {
        return GbnfConstraintPropertyTest.grammars(6);
    }

    /**
     * Greedy outputs are the same on both (the model's own choice and the masked arg-max agree). Sampled outputs and
     * free text (the words grammar included) may differ: llama.cpp's sampler matches control tokens by their text
     * ({@code <s>}, {@code <|im_start|>} fit a short JSON string or free text), which the Java compiler never allows,
     * so the two masks differ by those ids and a draw from them may too. Every output is a sentence of the grammar
     * either way.
     */
    @ParameterizedTest
    @MethodSource("grammars")
    void javaAndNativeGrammarsAgreeAndBothOutputsParse(Grammar grammar) throws Exception {
        GbnfChecker checker = GbnfChecker.parse(grammar);
        String prompt = java.renderChat(List.of(
                new ChatMessage("system", "You are a guard."),
                new ChatMessage("user", "A goblin is at the gate. What do you do?")));
        for (long seed = 0; seed < 3; seed++) {
            double temperature = seed == 0 ? 0 : 1.0;
            EngineRequest request = new EngineRequest(prompt, grammar, 96, temperature, 0, 1, seed);
            EngineResult a = java.generate(request, "java-" + seed, d -> {}, CancellationToken.create());
            EngineResult b = nativeGrammar.generate(request, "native-" + seed, d -> {}, CancellationToken.create());
            for (EngineResult r : List.of(a, b)) {
                if (r.outputTokens() < 96) { // stopped by the grammar, not the budget: a whole sentence
                    assertThat(checker.accepts(r.text())).as("%s", r.text()).isTrue();
                } else {
                    assertThat(checker.acceptsPrefix(r.text()))
                            .as("%s", r.text())
                            .isTrue();
                }
            }
            // With the Java grammar the engine closes a structure whose output loops; llama.cpp's sampler cannot tell
            // the
            // way to the end, so a looping greedy output differs there by design.
            boolean loops = hasLoop(b.text());
            if (temperature == 0
                    && !loops
                    && !grammar.gbnf().contains("[^\\x00]*")
                    && !grammar.gbnf().contains(StepGrammar.TEXT.gbnf())) {
                assertThat(a.text()).isEqualTo(b.text());
                assertThat(a.outputTokens()).isEqualTo(b.outputTokens());
            }
        }
    }

    /** Whether some prefix of {@code text} ends in a unit written three times in a row (what the engine closes on). */
    private static boolean hasLoop(String text) {
        for (int end = 1; end <= text.length(); end++) {
            if (RepetitionGuard.repeatedUnit(text.subSequence(0, end)) > 0) {
                return true;
            }
        }
        return false;
    }

    @Test
    void theGrammarSettingChoosesJavaUnlessNativeIsAsked() {
        String variable = FfmTuning.GRAMMAR_VARIABLE;
        assertThat(FfmTuning.read(Environment.of(Map.of())).grammar()).isEqualTo(FfmTuning.Grammar.JAVA);
        assertThat(FfmTuning.read(Environment.of(Map.of(variable, "native"))).grammar())
                .isEqualTo(FfmTuning.Grammar.NATIVE);
        Environment javaProperty =
                Environment.of(Map.of(variable, "native"), Map.of(FfmTuning.GRAMMAR_PROPERTY, "java"));
        assertThat(FfmTuning.read(javaProperty).grammar()).isEqualTo(FfmTuning.Grammar.JAVA);
        assertThat(FfmTuning.read(Environment.of(Map.of(variable, "fast"))).grammar())
                .isEqualTo(FfmTuning.Grammar.JAVA);
    }
}
