package dev.oam.model.llama;

import static dev.oam.model.llama.Fixtures.OPEN_GATE;
import static dev.oam.model.llama.Fixtures.prompt;
import static dev.oam.model.llama.Fixtures.request;
import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.model.ToolCallingMode;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.grammar.GbnfCompiler;
import dev.oam.model.llama.grammar.GgufVocabulary;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.TokenConstraint;
import dev.oam.model.llama.grammar.TokenVocabulary;
import dev.oam.testing.gguf.TinyGguf;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link GgufVocabulary} on the generated SentencePiece model the other tests load, and a grammar over it. */
class GgufVocabularyTest {
    @Test
    void sentencePieceTokensBecomeTheBytesLlamaCppDecodes(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("tiny.gguf");
        TinyGguf.tiny().write(file);
        GgufFile gguf = GgufFile.read(file);
        TokenVocabulary vocabulary = GgufVocabulary.of(gguf);
        List<String> tokens = gguf.tokens();
        assertThat(vocabulary.size()).isEqualTo(tokens.size());
        assertThat(vocabulary.isEndOfGeneration(tokens.indexOf("</s>")))
                .as("eos_token_id")
                .isTrue();
        assertThat(vocabulary.isEndOfGeneration(tokens.indexOf("<|im_end|>")))
                .as("by its text")
                .isTrue();
        assertThat(vocabulary.isControl(tokens.indexOf("<|im_start|>"))).isTrue();
        assertThat(vocabulary.isEndOfGeneration(tokens.indexOf("<|im_start|>"))).isFalse();
        assertThat(vocabulary.isControl(tokens.indexOf("<unk>"))).isTrue();
        assertThat(vocabulary.piece(tokens.indexOf("<0x0A>"))).containsExactly('\n');
        assertThat(vocabulary.piece(tokens.indexOf("<0xC3>"))).containsExactly((byte) 0xC3);
        int word = tokens.indexOf("\u2581a");
        assertThat(new String(vocabulary.piece(word), StandardCharsets.UTF_8)).isEqualTo(" a");

        Grammar grammar = StepGrammar.of(
                request(prompt("Open it."), List.of(OPEN_GATE), ToolCallingMode.REQUIRED, false, null), 16);
        GbnfChecker checker = GbnfChecker.parse(grammar);
        GbnfCompiler compiler = GbnfCompiler.create(vocabulary);
        Random random = new Random(4);
        for (int walk = 0; walk < 10; walk++) {
            TokenConstraint c = compiler.start(grammar);
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            long[] mask = new long[(vocabulary.size() + 63) / 64];
            while (!c.isComplete()) {
                c.fillMask(mask);
                List<Integer> allowed = new ArrayList<>();
                for (int t = 0; t < vocabulary.size(); t++) {
                    if ((mask[t >>> 6] & (1L << t)) != 0) {
                        allowed.add(t);
                    }
                    assertThat((mask[t >>> 6] & (1L << t)) != 0).isEqualTo(c.allows(t));
                }
                int token = allowed.get(random.nextInt(allowed.size()));
                c.accept(token);
                if (vocabulary.isEndOfGeneration(token)) {
                    break;
                }
                out.writeBytes(vocabulary.piece(token));
            }
            assertThat(checker.accepts(out.toString(StandardCharsets.UTF_8)))
                    .as(out.toString(StandardCharsets.UTF_8))
                    .isTrue();
        }
    }
}
