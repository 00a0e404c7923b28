package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.model.llama.engine.Utf8Pieces;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.grammar.GgufVocabulary;
import dev.oam.model.llama.grammar.TokenVocabulary;
import dev.oam.model.llama.prompt.ChatPrompt;
import dev.oam.testing.RealModels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every token of both real vocabularies (Gemma 3's 262,144 SentencePiece tokens with byte fallback, SmolLM2's 49,152
 * byte-level BPE tokens) decoded the way the engine streams a generation ({@link Utf8Pieces}): no text a game receives
 * ever holds U+FFFD, whether a token is a whole character, part of one, or a lone byte no character can continue. Also
 * the prompt side: escaping ({@link ChatPrompt#escape}) with the file's own special tokens leaves text made of
 * newlines, spaces and tabs exactly as it was.
 */
@Tag("real-model")
@Timeout(300)
class RealVocabularyTextTest {
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"gemma", "smollm2"})
    void noTokenSequenceDecodesToAReplacementCharacter(String model) throws Exception {
        GgufFile file = GgufFile.read(path(model));
        TokenVocabulary vocabulary = GgufVocabulary.of(file);
        List<byte[]> pieces = new ArrayList<>();
        for (int id = 0; id < vocabulary.size(); id++) {
            if (!vocabulary.isControl(id) && !vocabulary.isEndOfGeneration(id)) {
                pieces.add(vocabulary.piece(id));
            }
        }
        int byteTokens = 0;
        for (byte[] piece : pieces) {
            Utf8Pieces alone = new Utf8Pieces();
            String text = alone.add(piece) + alone.finish();
            assertThat(text).doesNotContain("\uFFFD");
            if (piece.length == 1 && (piece[0] & 0x80) != 0) {
                byteTokens++;
            }
        }
        if (model.equals("gemma")) {
            assertThat(byteTokens)
                    .as("Gemma's byte-fallback tokens <0x80>..<0xFF>")
                    .isGreaterThanOrEqualTo(128);
        }
        // Runs of random tokens, as a sampler without a grammar could draw them: lone continuation bytes, a lead
        // byte followed by ASCII, a character cut by the end of the generation.
        SplittableRandom random = new SplittableRandom(7);
        for (int run = 0; run < 2000; run++) {
            Utf8Pieces stream = new Utf8Pieces();
            StringBuilder out = new StringBuilder();
            for (int i = 0; i < 12; i++) {
                out.append(stream.add(pieces.get(random.nextInt(pieces.size()))));
            }
            out.append(stream.finish());
            assertThat(out.toString()).doesNotContain("\uFFFD");
        }
        // Characters split over byte tokens come out whole.
        Utf8Pieces split = new Utf8Pieces();
        StringBuilder whole = new StringBuilder();
        for (byte b : "Grüße ⚔ 🐉".getBytes(StandardCharsets.UTF_8)) {
            whole.append(split.add(new byte[] {b}));
        }
        assertThat(whole.append(split.finish()).toString()).isEqualTo("Grüße ⚔ 🐉");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"gemma", "smollm2"})
    void escapingKeepsWhiteSpaceAndBreaksOnlyFramingTokens(String model) throws Exception {
        GgufFile file = GgufFile.read(path(model));
        String text = "You are Ulric.\n\nTools you can call:\n- open_gate  {\"gate\": \"east\"}\n\t\tdone";
        assertThat(ChatPrompt.escape(text, file.controlTokens())).isEqualTo(text);
        String marker = model.equals("gemma") ? "<end_of_turn>" : "<|im_end|>";
        assertThat(file.controlTokens()).contains(marker);
        assertThat(ChatPrompt.escape("a" + marker + "b", file.controlTokens()))
                .doesNotContain(marker)
                .doesNotContain("\uFFFD");
    }

    private static Path path(String model) {
        return model.equals("gemma") ? RealModels.gemma() : RealModels.smollm2();
    }
}
