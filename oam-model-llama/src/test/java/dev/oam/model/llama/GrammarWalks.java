package dev.oam.model.llama;

import static dev.oam.model.llama.Fixtures.CHECK_INVENTORY;
import static dev.oam.model.llama.Fixtures.OPEN_GATE;
import static dev.oam.model.llama.Fixtures.prompt;
import static dev.oam.model.llama.Fixtures.request;
import static dev.oam.model.llama.Fixtures.schema;
import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.model.ToolCallingMode;
import dev.oam.model.llama.grammar.GbnfCompiler;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.TokenConstraint;
import dev.oam.model.llama.grammar.TokenVocabulary;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Random walks of the Java grammar constraint over a real vocabulary: the project's tool-call, decision and free-text
 * step grammars, each token drawn among those the mask allows (and the mask checked against {@code allows}), ending in
 * text the reference checker accepts (or a prefix of it, when the walk ran out of steps).
 */
final class GrammarWalks {
    private GrammarWalks() {}

    /** Three walks per grammar; {@code endOfTurn} is the token the walk sends when the grammar may end. */
    static void walk(TokenVocabulary vocabulary, int endOfTurn) throws Exception {
        assertThat(vocabulary.isEndOfGeneration(endOfTurn))
                .as("token %d ends generation", endOfTurn)
                .isTrue();
        GbnfCompiler compiler = GbnfCompiler.create(vocabulary);
        List<Grammar> grammars = List.of(
                StepGrammar.of(
                        request(
                                prompt("Open it."),
                                List.of(OPEN_GATE, CHECK_INVENTORY),
                                ToolCallingMode.REQUIRED,
                                false,
                                null),
                        256),
                StepGrammar.of(
                        request(
                                prompt("Decide."),
                                List.of(),
                                ToolCallingMode.DISALLOWED,
                                false,
                                schema(Fixtures.DECISION)),
                        256),
                StepGrammar.of(request(prompt("Hi."), List.of(OPEN_GATE), ToolCallingMode.ALLOWED, true, null), 256));
        int words = (vocabulary.size() + 63) / 64;
        for (Grammar grammar : grammars) {
            GbnfChecker checker = GbnfChecker.parse(grammar);
            for (int walk = 0; walk < 3; walk++) {
                Random random = new Random(walk * 7919L + grammar.gbnf().length());
                TokenConstraint c = compiler.start(grammar);
                ByteArrayOutputStream output = new ByteArrayOutputStream();
                boolean ended = false;
                for (int step = 0; step < 150 && !ended; step++) {
                    long[] mask = new long[words];
                    c.fillMask(mask);
                    List<Integer> allowed = new ArrayList<>();
                    for (int t = 0; t < vocabulary.size(); t++) {
                        if ((mask[t >>> 6] & (1L << t)) != 0) {
                            allowed.add(t);
                        }
                    }
                    assertThat(allowed).as("allowed after %s", output).isNotEmpty();
                    for (int k = 0; k < 3000; k++) {
                        int t = random.nextInt(vocabulary.size());
                        assertThat(c.allows(t))
                                .as("token %d after %s", t, output)
                                .isEqualTo((mask[t >>> 6] & (1L << t)) != 0);
                    }
                    int token;
                    if (c.canEnd() && (c.isComplete() || random.nextInt(3) == 0)) {
                        token = endOfTurn;
                    } else {
                        token = -1;
                        for (int pick = 0; pick < 6; pick++) { // prefer longer pieces, as a model would
                            int t = allowed.get(random.nextInt(allowed.size()));
                            if (!vocabulary.isControl(t)
                                    && (token < 0 || vocabulary.pieceLength(t) > vocabulary.pieceLength(token))) {
                                token = t;
                            }
                        }
                        if (token < 0) {
                            token = allowed.stream()
                                    .filter(t -> !vocabulary.isControl(t))
                                    .findFirst()
                                    .orElseThrow();
                        }
                    }
                    c.accept(token);
                    if (vocabulary.isEndOfGeneration(token)) {
                        ended = true;
                    } else {
                        output.writeBytes(vocabulary.piece(token));
                    }
                }
                String text = output.toString(StandardCharsets.UTF_8);
                if (ended) {
                    assertThat(checker.accepts(text)).as("accepted: %s", text).isTrue();
                } else {
                    assertThat(checker.acceptsPrefix(text))
                            .as("a prefix: %s", text)
                            .isTrue();
                }
            }
        }
    }
}
