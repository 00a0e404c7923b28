package dev.oam.model.llama;

import static dev.oam.model.llama.Fixtures.CHECK_INVENTORY;
import static dev.oam.model.llama.Fixtures.OPEN_GATE;
import static dev.oam.model.llama.Fixtures.prompt;
import static dev.oam.model.llama.Fixtures.request;
import static dev.oam.model.llama.Fixtures.schema;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.core.model.ToolCallingMode;
import dev.oam.model.llama.grammar.GbnfCompiler;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.SyntheticVocabulary;
import dev.oam.model.llama.grammar.TokenConstraint;
import dev.oam.model.llama.grammar.TokenVocabulary;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The Java grammar constraint against {@link GbnfChecker} on the grammars the project writes: random walks that pick
 * random allowed tokens from a synthetic vocabulary (single bytes, JSON pieces, UTF-8 fragments, quotes and
 * backslashes) must produce only sentences the checker accepts, every mask must equal {@code {t : allows(t)}}, and
 * where the output so far is whole characters, {@code allows(t)} must agree with the checker on whether output +
 * piece(t) is still a prefix of a sentence.
 */
class GbnfConstraintPropertyTest {
    private static final TokenVocabulary VOCABULARY = SyntheticVocabulary.create(7, 400);
    private static final GbnfCompiler CACHED = GbnfCompiler.create(VOCABULARY);
    private static final GbnfCompiler UNCACHED = GbnfCompiler.create(VOCABULARY, 0);
    /** Pieces of at most 4 bytes, against strings of up to 24 characters: repetition counts merge in mask keys. */
    private static final TokenVocabulary SHORT = SyntheticVocabulary.shortPieces(11, 300);

    private static final GbnfCompiler SHORT_CACHED = GbnfCompiler.create(SHORT);

    private static final List<String> SCHEMAS = List.of(
            Fixtures.DECISION,
            """
            {"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"boolean"},
             "d":{"type":"null"}},"required":["a","c"]}""",
            "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"},\"b\":{\"type\":\"integer\"},\"c\":{\"type\":\"integer\"}}}",
            "{\"type\":\"number\",\"minimum\":2,\"maximum\":30}",
            "{\"type\":\"number\"}",
            "{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000}",
            "{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":1,\"maxItems\":3}",
            "{\"type\":\"array\",\"items\":{\"type\":\"string\"}}",
            "{\"type\":[\"string\",\"null\"]}",
            "{\"anyOf\":[{\"type\":\"integer\"},{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"boolean\"}},\"required\":[\"x\"]}]}",
            """
            {"$defs":{"Node":{"type":"object","properties":{"name":{"type":"string"},
              "children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["name"]}},
             "$ref":"#/$defs/Node"}""",
            "{\"type\":\"object\",\"properties\":{\"extra\":{}},\"required\":[\"extra\"]}",
            "{\"type\":\"string\",\"enum\":[\"say \\\"hi\\\"\",\"back\\\\slash\",\"café\",\"🐉\",\"two\\nlines\"]}");

    static Stream<Grammar> grammars() throws Exception {
        return grammars(6);
    }

    static Stream<Grammar> longStringGrammars() throws Exception {
        return grammars(24);
    }

    static Stream<Grammar> grammars(int maxString) throws Exception {
        Map<String, Grammar> out = new LinkedHashMap<>();
        for (String json : SCHEMAS) {
            Gbnf gbnf = new Gbnf(maxString);
            out.put(json, gbnf.build(gbnf.schema(schema(json).json()).root()));
        }
        out.put(
                "required",
                StepGrammar.of(
                        request(
                                prompt("Open it."),
                                List.of(OPEN_GATE, CHECK_INVENTORY),
                                ToolCallingMode.REQUIRED,
                                false,
                                null),
                        maxString));
        out.put(
                "required+direct",
                StepGrammar.of(
                        request(prompt("Hi."), List.of(OPEN_GATE), ToolCallingMode.REQUIRED, true, null), maxString));
        out.put(
                "allowed text",
                StepGrammar.of(
                        request(prompt("Hi."), List.of(OPEN_GATE), ToolCallingMode.ALLOWED, false, null), maxString));
        out.put(
                "allowed decision",
                StepGrammar.of(
                        request(
                                prompt("Decide."),
                                List.of(OPEN_GATE),
                                ToolCallingMode.ALLOWED,
                                false,
                                schema(Fixtures.DECISION)),
                        maxString));
        out.put(
                "disallowed decision",
                StepGrammar.of(
                        request(
                                prompt("Decide."),
                                List.of(),
                                ToolCallingMode.DISALLOWED,
                                false,
                                schema(Fixtures.DECISION)),
                        maxString));
        return out.values().stream();
    }

    @ParameterizedTest
    @MethodSource("grammars")
    void randomWalksStayInsideTheGrammarAndMasksMatchAllowsAndTheChecker(Grammar grammar) {
        randomWalks(grammar, VOCABULARY, walk -> walk % 3 == 2 ? UNCACHED : CACHED, 12);
    }

    @ParameterizedTest
    @MethodSource("longStringGrammars")
    void cachedMasksStayExactWhereRepetitionCountsAreMerged(Grammar grammar) {
        randomWalks(grammar, SHORT, walk -> SHORT_CACHED, 6);
    }

    private static void randomWalks(
            Grammar grammar,
            TokenVocabulary vocabulary,
            java.util.function.IntFunction<GbnfCompiler> compilers,
            int walks) {
        GbnfChecker checker = GbnfChecker.parse(grammar);
        int words = (vocabulary.size() + 63) / 64;
        int ended = 0;
        for (int walk = 0; walk < walks; walk++) {
            Random random = new Random(grammar.hashCode() * 31L + walk);
            GbnfCompiler compiler = compilers.apply(walk);
            TokenConstraint c = compiler.start(grammar);
            ByteArrayOutputStream output = new ByteArrayOutputStream();
            boolean stopped = false;
            for (int step = 0; step < 200 && !stopped; step++) {
                long[] mask = new long[words];
                c.fillMask(mask);
                List<Integer> allowed = new ArrayList<>();
                for (int t = 0; t < vocabulary.size(); t++) {
                    boolean bit = (mask[t >>> 6] & (1L << t)) != 0;
                    assertThat(bit)
                            .as("mask bit of token %d equals allows, after %s", t, printable(output))
                            .isEqualTo(c.allows(t));
                    if (bit) {
                        allowed.add(t);
                    }
                }
                if (!c.isComplete()) {
                    assertThat(allowed)
                            .as("a token is allowed after %s", printable(output))
                            .isNotEmpty();
                }
                String text = decode(output.toByteArray());
                if (text != null && step % 2 == 0) {
                    checkAgainstChecker(c, checker, vocabulary, output.toByteArray(), text, random);
                }
                if (step % 5 == 0) {
                    int rejected = random.nextInt(vocabulary.size());
                    if (!c.allows(rejected)) {
                        assertThatThrownBy(() -> c.accept(rejected)).isInstanceOf(IllegalArgumentException.class);
                        long[] again = new long[words];
                        c.fillMask(again);
                        assertThat(again)
                                .as("the state is unchanged by a refused token")
                                .isEqualTo(mask);
                    }
                }
                if (allowed.isEmpty()) {
                    break;
                }
                int token;
                if (c.canEnd() && (random.nextInt(4) == 0 || c.isComplete())) {
                    token = random.nextBoolean() ? SyntheticVocabulary.EOS : SyntheticVocabulary.END_OF_TURN;
                } else {
                    List<Integer> pieces = allowed.stream()
                            .filter(t -> !vocabulary.isEndOfGeneration(t))
                            .toList();
                    token = pieces.get(random.nextInt(pieces.size()));
                }
                c.accept(token);
                if (vocabulary.isEndOfGeneration(token)) {
                    stopped = true;
                } else {
                    output.writeBytes(vocabulary.piece(token));
                }
            }
            String text = decode(output.toByteArray());
            if (stopped) {
                ended++;
                assertThat(text).as("ended output is whole UTF-8").isNotNull();
                assertThat(checker.accepts(text))
                        .as("the checker accepts %s", text)
                        .isTrue();
            } else if (text != null) {
                assertThat(checker.acceptsPrefix(text))
                        .as("the checker accepts %s as a prefix", text)
                        .isTrue();
            }
        }
        assertThat(ended).as("walks that reached the end").isPositive();
    }

    /** allows(t) against the checker for a sample of tokens whose piece ends on a whole character. */
    private static void checkAgainstChecker(
            TokenConstraint c,
            GbnfChecker checker,
            TokenVocabulary vocabulary,
            byte[] output,
            String text,
            Random random) {
        assertThat(c.canEnd()).as("canEnd after %s", text).isEqualTo(checker.accepts(text));
        assertThat(c.allows(SyntheticVocabulary.EOS)).isEqualTo(checker.accepts(text));
        for (int k = 0; k < 60; k++) {
            int t = k < 20 ? SyntheticVocabulary.BYTE + random.nextInt(128) : random.nextInt(vocabulary.size());
            if (vocabulary.isControl(t) || vocabulary.pieceLength(t) == 0) {
                continue;
            }
            byte[] piece = vocabulary.piece(t);
            byte[] joined = Arrays.copyOf(output, output.length + piece.length);
            System.arraycopy(piece, 0, joined, output.length, piece.length);
            String next = decode(joined);
            if (next != null && next.indexOf('\0') < 0) {
                assertThat(c.allows(t))
                        .as("allows %s after %s", printable(piece), text)
                        .isEqualTo(checker.acceptsPrefix(next));
            }
        }
    }

    @Test
    void theSameGrammarWithAndWithoutTheCacheGivesTheSameMasks() throws Exception {
        int words = (VOCABULARY.size() + 63) / 64;
        Grammar grammar = grammars().toList().get(0);
        TokenConstraint a = CACHED.start(grammar);
        TokenConstraint b = UNCACHED.start(grammar);
        Random random = new Random(3);
        for (int step = 0; step < 60 && !a.isComplete(); step++) {
            long[] ma = new long[words];
            long[] mb = new long[words];
            a.fillMask(ma);
            a.fillMask(ma); // the second is a cache hit
            b.fillMask(mb);
            assertThat(ma).isEqualTo(mb);
            List<Integer> allowed = new ArrayList<>();
            for (int t = 0; t < VOCABULARY.size(); t++) {
                if ((ma[t >>> 6] & (1L << t)) != 0 && !VOCABULARY.isEndOfGeneration(t)) {
                    allowed.add(t);
                }
            }
            if (allowed.isEmpty()) {
                break;
            }
            int token = allowed.get(random.nextInt(allowed.size()));
            a.accept(token);
            b.accept(token);
        }
    }

    private static @Nullable String decode(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    private static String printable(ByteArrayOutputStream output) {
        return printable(output.toByteArray());
    }

    private static String printable(byte[] bytes) {
        StringBuilder out = new StringBuilder("'");
        for (byte b : bytes) {
            int c = b & 0xFF;
            out.append(c >= 0x20 && c < 0x7F ? String.valueOf((char) c) : String.format("\\x%02X", c));
        }
        return out.append('\'').toString();
    }
}
