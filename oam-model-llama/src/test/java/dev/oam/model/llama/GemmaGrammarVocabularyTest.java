package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.grammar.GgufVocabulary;
import dev.oam.model.llama.grammar.TokenVocabulary;
import dev.oam.testing.RealModel;
import dev.oam.testing.RealModels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Java grammar constraint on Gemma 3's real 262,144-token vocabulary (read from the GGUF named by
 * {@code OAM_TEST_GEMMA_MODEL}, which {@code bin/test} always sets; skipped only when it is unset): the vocabulary's
 * pieces, and random walks over the project's tool-call, decision and free-text grammars ({@link GrammarWalks}).
 * SmolLM2-135M-Instruct's byte-level vocabulary is not read from its file (a test here says so); the same walks run on
 * it, and on Gemma's, as the FFM engine decodes them (FfmSmolLM2Test, FfmGemmaTest).
 */
@Tag("real-model")
@Timeout(300)
class GemmaGrammarVocabularyTest {
    private static TokenVocabulary vocabulary;
    private static GgufFile gguf;

    @BeforeAll
    static void load() throws Exception {
        String path = System.getenv(RealModels.GEMMA_VARIABLE);
        Assumptions.assumeTrue(path != null && !path.isBlank(), RealModels.GEMMA_VARIABLE + " is not set");
        gguf = GgufFile.read(Path.of(path.strip()));
        vocabulary = GgufVocabulary.of(gguf);
    }

    private static int id(String token) {
        int id = gguf.tokens().indexOf(token);
        assertThat(id).as(token).isNotNegative();
        return id;
    }

    @Test
    void piecesAreWhatLlamaCppDecodesWithoutSpecials() {
        assertThat(vocabulary.size()).isEqualTo(gguf.tokens().size()).isEqualTo(262_144);
        assertThat(vocabulary.piece(id("<0x41>"))).containsExactly('A');
        assertThat(vocabulary.piece(id("<0xE2>"))).containsExactly(0xE2 - 256);
        assertThat(new String(vocabulary.piece(id("\u2581the")), StandardCharsets.UTF_8))
                .isEqualTo(" the");
        assertThat(vocabulary.isEndOfGeneration(id("<end_of_turn>"))).isTrue();
        assertThat(vocabulary.isEndOfGeneration(id("<eos>"))).isTrue();
        assertThat(vocabulary.isControl(id("<start_of_turn>"))).isTrue();
        assertThat(vocabulary.isEndOfGeneration(id("<start_of_turn>"))).isFalse();
        assertThat(vocabulary.isControl(id("<bos>"))).isTrue();
    }

    @Test
    void randomWalksOnTheProjectsGrammarsEndInSentencesTheCheckerAccepts() throws Exception {
        GrammarWalks.walk(vocabulary, id("<end_of_turn>"));
    }

    @Test
    void aByteLevelVocabularyIsReadWithGpt2sByteTable() throws Exception {
        // SmolLM2's GPT-2 byte-level BPE: each character of a token's text stands for one byte (Ġ a space, Ċ a
        // newline).
        Path smollm2 = RealModel.SMOLLM2.pathIfSet();
        Assumptions.assumeTrue(smollm2 != null, RealModel.SMOLLM2.variable() + " is not set");
        GgufFile file = GgufFile.read(smollm2);
        TokenVocabulary bpe = GgufVocabulary.of(file);
        assertThat(bpe.size()).isEqualTo(file.tokens().size());
        assertThat(new String(bpe.piece(file.tokens().indexOf("\u0120the")), StandardCharsets.UTF_8))
                .isEqualTo(" the");
        assertThat(new String(bpe.piece(file.tokens().indexOf("\u010A")), StandardCharsets.UTF_8))
                .isEqualTo("\n");
        assertThat(bpe.isEndOfGeneration(file.tokens().indexOf("<|im_end|>"))).isTrue();
        GrammarWalks.walk(bpe, file.tokens().indexOf("<|im_end|>"));
    }
}
