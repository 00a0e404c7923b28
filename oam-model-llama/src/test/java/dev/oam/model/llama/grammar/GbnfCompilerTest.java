package dev.oam.model.llama.grammar;

import static dev.oam.model.llama.grammar.SyntheticVocabulary.BYTE;
import static dev.oam.model.llama.grammar.SyntheticVocabulary.EMPTY;
import static dev.oam.model.llama.grammar.SyntheticVocabulary.END_OF_TURN;
import static dev.oam.model.llama.grammar.SyntheticVocabulary.EOS;
import static dev.oam.model.llama.grammar.SyntheticVocabulary.START_OF_TURN;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Each GBNF shape through {@link GbnfCompiler}, on a vocabulary of single bytes plus a few longer pieces. */
class GbnfCompilerTest {
    private static final TokenVocabulary VOCABULARY = SyntheticVocabulary.create(1, 0);
    private static final GbnfCompiler COMPILER = GbnfCompiler.create(VOCABULARY);

    /** Whether {@code grammar} accepts {@code text} fed one byte token at a time and then ends. */
    private static boolean accepts(String grammar, String text) {
        return feed(grammar, text.getBytes(StandardCharsets.UTF_8));
    }

    private static boolean feed(String grammar, byte[] bytes) {
        TokenConstraint c = start(COMPILER, grammar);
        for (byte b : bytes) {
            int token = BYTE + (b & 0xFF);
            if (!c.allows(token)) {
                return false;
            }
            c.accept(token);
        }
        return c.canEnd() && c.allows(EOS);
    }

    private static int token(String piece) {
        byte[] bytes = piece.getBytes(StandardCharsets.UTF_8);
        for (int t = 0; t < VOCABULARY.size(); t++) {
            if (!VOCABULARY.isControl(t) && Arrays.equals(VOCABULARY.piece(t), bytes)) {
                return t;
            }
        }
        throw new AssertionError("no token " + piece);
    }

    private static BitSet mask(TokenConstraint c) {
        long[] words = new long[(VOCABULARY.size() + 63) / 64 + 1];
        Arrays.fill(words, -1L);
        c.fillMask(words);
        return BitSet.valueOf(words);
    }

    @Test
    void forcedTextIsWhatMustComeNextUpToTheNextChoice() {
        String g = "root ::= \"{\\\"name\\\": \\\"\" (\"open\" | \"opal\") \"\\\", \\\"n\\\": \" [0-9]+ \"}\"";
        TokenConstraint c = start(COMPILER, g);
        assertThat(c.forcedText(64)).isEqualTo("{\"name\": \"op");
        assertThat(c.forcedText(3)).isEqualTo("{\"n");
        for (byte b : "{\"name\": \"op".getBytes(StandardCharsets.UTF_8)) {
            c.accept(BYTE + (b & 0xFF));
        }
        assertThat(c.forcedText(64)).as("a choice: e or a").isEmpty();
        for (byte b : "en".getBytes(StandardCharsets.UTF_8)) {
            c.accept(BYTE + (b & 0xFF));
        }
        assertThat(c.forcedText(64)).isEqualTo("\", \"n\": ");
        for (byte b : "\", \"n\": 4".getBytes(StandardCharsets.UTF_8)) {
            c.accept(BYTE + (b & 0xFF));
        }
        assertThat(c.forcedText(64)).as("another digit or the end: a choice").isEmpty();
        TokenConstraint end = start(COMPILER, "root ::= \"ab\" | \"ab\" \"c\"");
        assertThat(end.forcedText(64)).isEqualTo("ab");
        end.accept(BYTE + 'a');
        end.accept(BYTE + 'b');
        assertThat(end.forcedText(64)).as("the grammar may end here").isEmpty();
        TokenConstraint wide = start(COMPILER, "root ::= [a-b] \"x\"");
        assertThat(wide.forcedText(64))
                .as("one interval of two code points is a choice")
                .isEmpty();
    }

    @Test
    void literalsAndSequencesMatchExactly() {
        String g = "root ::= \"ab\" \"c\"";
        assertThat(accepts(g, "abc")).isTrue();
        assertThat(accepts(g, "ab")).isFalse();
        assertThat(accepts(g, "abcd")).isFalse();
        assertThat(accepts(g, "abd")).isFalse();
    }

    @Test
    void characterClassesCoverRangesNegationEscapesAndAny() {
        assertThat(accepts("root ::= [a-cx]", "b")).isTrue();
        assertThat(accepts("root ::= [a-cx]", "x")).isTrue();
        assertThat(accepts("root ::= [a-cx]", "d")).isFalse();
        assertThat(accepts("root ::= [^\"\\\\\\x00-\\x1F]", "é")).isTrue();
        assertThat(accepts("root ::= [^\"\\\\\\x00-\\x1F]", "\"")).isFalse();
        assertThat(accepts("root ::= [^\"\\\\\\x00-\\x1F]", "\n")).isFalse();
        assertThat(accepts("root ::= [\\u00E0-\\u00FF]", "é")).isTrue();
        assertThat(accepts("root ::= [\\u00E0-\\u00FF]", "e")).isFalse();
        assertThat(accepts("root ::= [\\U0001F400-\\U0001F4FF]", "🐉")).isTrue();
        assertThat(accepts("root ::= [\\U0001F400-\\U0001F4FF]", "漢")).isFalse();
        assertThat(accepts("root ::= . .", "a🐉")).isTrue();
        assertThat(accepts("root ::= [\\]\\[-]+", "[]-")).isTrue();
        assertThat(accepts("root ::= \"\\x41\\t\\u00e9\\\"\"", "A\té\"")).isTrue();
    }

    @Test
    void rulesGroupsAndAlternativesNest() {
        String g = """
                root ::= greeting ("," " " name | "!")
                greeting ::= "hi" | "hello"
                name ::= [A-Z] [a-z]*
                """;
        assertThat(accepts(g, "hi, Bob")).isTrue();
        assertThat(accepts(g, "hello!")).isTrue();
        assertThat(accepts(g, "hello, bob")).isFalse();
        assertThat(accepts(g, "hey!")).isFalse();
    }

    @Test
    void repetitionsHonourTheirBounds() {
        assertThat(accepts("root ::= \"a\"?", "")).isTrue();
        assertThat(accepts("root ::= \"a\"?", "aa")).isFalse();
        assertThat(accepts("root ::= \"a\"*", "aaaaaa")).isTrue();
        assertThat(accepts("root ::= \"a\"+", "")).isFalse();
        assertThat(accepts("root ::= \"a\"+", "aaa")).isTrue();
        for (int n = 0; n <= 6; n++) {
            String text = "ab".repeat(n);
            assertThat(accepts("root ::= (\"ab\"){3}", text)).as("{3} x" + n).isEqualTo(n == 3);
            assertThat(accepts("root ::= (\"ab\"){2,4}", text))
                    .as("{2,4} x" + n)
                    .isEqualTo(n >= 2 && n <= 4);
            assertThat(accepts("root ::= (\"ab\"){0,2}", text))
                    .as("{0,2} x" + n)
                    .isEqualTo(n <= 2);
            assertThat(accepts("root ::= (\"ab\"){2,}", text)).as("{2,} x" + n).isEqualTo(n >= 2);
        }
        assertThat(accepts("root ::= [0-9]{1,3} \"x\"", "123x")).isTrue();
        assertThat(accepts("root ::= [0-9]{1,3} \"x\"", "1234x")).isFalse();
    }

    @Test
    void commentsNewlinesInGroupsAndEmptyAlternativesParse() {
        String g = """
                # a comment
                root ::= (
                    "a" |   # first
                    "b"
                  ) tail
                tail ::= "c" |
                """;
        assertThat(accepts(g, "a")).isTrue();
        assertThat(accepts(g, "bc")).isTrue();
        assertThat(accepts(g, "c")).isFalse();
    }

    @Test
    void unparsableGrammarsAreRejectedNamingTheCause() {
        assertThatThrownBy(() -> start(COMPILER, "a ::= \"x\""))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("no 'root' rule");
        assertThatThrownBy(() -> start(COMPILER, "root ::= other")).hasMessageContaining("undefined rule 'other'");
        assertThatThrownBy(() -> start(COMPILER, "root ::= \"x")).hasMessageContaining("unterminated string literal");
        assertThatThrownBy(() -> start(COMPILER, "root ::= [a-")).hasMessageContaining("unterminated character class");
        assertThatThrownBy(() -> start(COMPILER, "root ::= \"\\q\"")).hasMessageContaining("unknown escape");
        assertThatThrownBy(() -> start(COMPILER, "root ::= (\"a\"")).hasMessageContaining("expected ')'");
        assertThatThrownBy(() -> start(COMPILER, "root ::= \"a\"{3,1}"))
                .hasMessageContaining("maximum below its minimum");
        assertThatThrownBy(() -> start(COMPILER, "root ::= \"a\"\nroot ::= \"b\""))
                .hasMessageContaining("defined twice");
        assertThatThrownBy(() -> start(COMPILER, "root = \"a\"")).hasMessageContaining("expected ::=");
        assertThatThrownBy(() -> start(COMPILER, "root ::= x\nx ::= x \"a\" | \"b\""))
                .hasMessageContaining("left-recursive");
        assertThatThrownBy(() -> start(COMPILER, "root ::= \"a\" @"))
                .hasMessageContaining("unexpected '@'")
                .hasMessageContaining("line 1");
        assertThatThrownBy(() -> start(COMPILER, "root ::= " + "(".repeat(10_000) + "\"a\"" + ")".repeat(10_000)))
                .hasMessageContaining("nested deeper");
        assertThatThrownBy(() -> start(COMPILER, "root ::= \"a\"{0,1000000}")).hasMessageContaining("above");
    }

    @Test
    void multiByteTokensAndCharactersSplitAcrossTokensContinue() {
        String g = "root ::= \"\\\"\" [^\"]* \"\\\"\"";
        TokenConstraint c = start(COMPILER, g);
        c.accept(token("\""));
        c.accept(token("café"));
        byte[] dragon = "🐉".getBytes(StandardCharsets.UTF_8);
        int firstHalf = find(new byte[] {dragon[0], dragon[1]});
        int secondHalf = find(new byte[] {dragon[2], dragon[3]});
        assertThat(c.allows(firstHalf)).isTrue();
        c.accept(firstHalf);
        assertThat(c.canEnd()).isFalse();
        assertThat(c.allows(token("\"")))
                .as("a quote cannot finish a character")
                .isFalse();
        assertThat(c.allows(firstHalf))
                .as("a lead byte cannot continue a character")
                .isFalse();
        assertThat(mask(c).get(secondHalf)).isTrue();
        c.accept(secondHalf);
        c.accept(token("\""));
        assertThat(c.isComplete()).isTrue();
    }

    @Test
    void aPartialCharacterIsAllowedOnlyWhenSomeCompletionFitsTheClass() {
        TokenConstraint ascii = start(COMPILER, "root ::= [a-z]+");
        assertThat(ascii.allows(BYTE + 0xC3)).isFalse();
        TokenConstraint latin = start(COMPILER, "root ::= [\\u00E0-\\u00FF]");
        assertThat(latin.allows(BYTE + 0xC3)).isTrue(); // C3 A0..C3 BF are U+00E0..U+00FF
        assertThat(latin.allows(BYTE + 0xC2)).isFalse(); // C2 xx are U+0080..U+00BF
        assertThat(latin.allows(BYTE + 0x80)).as("a stray continuation byte").isFalse();
        assertThat(latin.allows(BYTE + 0xFF)).as("never UTF-8").isFalse();
        assertThat(latin.allows(BYTE + 0xC0)).as("overlong lead").isFalse();
    }

    @Test
    void overlongAndOutOfRangeSequencesAreRefusedWhateverTheClassAdmits() {
        for (String grammar : List.of("root ::= [^\"]*", "root ::= [^\"\\u00E9]*")) { // one or several intervals
            assertThat(feed(grammar, bytes(0xE0, 0x80, 0x80))).as("overlong E0").isFalse();
            assertThat(feed(grammar, bytes(0xE0, 0xA0, 0x80))).as("U+0800").isTrue();
            assertThat(feed(grammar, bytes(0xF0, 0x8F, 0xBF, 0xBF)))
                    .as("overlong F0")
                    .isFalse();
            assertThat(feed(grammar, bytes(0xF0, 0x90, 0x80, 0x80)))
                    .as("U+10000")
                    .isTrue();
            assertThat(feed(grammar, bytes(0xF4, 0x90, 0x80, 0x80)))
                    .as("above U+10FFFF")
                    .isFalse();
            assertThat(feed(grammar, bytes(0xF4, 0x8F, 0xBF, 0xBF)))
                    .as("U+10FFFF")
                    .isTrue();
            assertThat(feed(grammar, bytes(0xC1, 0x81))).as("overlong C1").isFalse();
            assertThat(feed(grammar, bytes(0xE3, 0x81))).as("unfinished").isFalse();
            assertThat(feed(grammar, bytes(0xE3, 0x81, 0x82))).as("U+3042").isTrue();
        }
    }

    private static byte[] bytes(int... values) {
        byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++) {
            out[i] = (byte) values[i];
        }
        return out;
    }

    @Test
    void endOfGenerationIsAllowedExactlyWhereTheGrammarCanEndAndControlTokensNever() {
        TokenConstraint c = start(COMPILER, "root ::= \"a\" \"b\"?");
        assertThat(c.allows(EOS)).isFalse();
        assertThat(c.allows(START_OF_TURN)).isFalse();
        assertThat(c.allows(EMPTY)).as("an empty piece makes no progress").isFalse();
        assertThat(mask(c).get(EOS)).isFalse();
        c.accept(token("a"));
        assertThat(c.canEnd()).isTrue();
        assertThat(c.isComplete()).isFalse();
        assertThat(c.allows(EOS)).isTrue();
        assertThat(c.allows(END_OF_TURN)).isTrue();
        assertThat(c.allows(START_OF_TURN)).isFalse();
        BitSet m = mask(c);
        assertThat(m.get(EOS) && m.get(END_OF_TURN)).isTrue();
        assertThat(m.get(START_OF_TURN)).isFalse();
        c.accept(token("b"));
        assertThat(c.isComplete()).isTrue();
        assertThat(mask(c).stream().boxed().toList()).containsExactly(EOS, END_OF_TURN);
        c.accept(END_OF_TURN);
        assertThat(c.isComplete()).isTrue();
        assertThat(c.allows(EOS)).isFalse();
        assertThat(mask(c).isEmpty()).isTrue();
    }

    @Test
    void acceptingADisallowedTokenThrowsAndLeavesTheStateAlone() {
        TokenConstraint c = start(COMPILER, "root ::= \"ab\" | \"ac\"");
        c.accept(token("a"));
        BitSet before = mask(c);
        assertThatThrownBy(() -> c.accept(token("x")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("does not continue the grammar");
        assertThatThrownBy(() -> c.accept(EOS))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot end");
        assertThatThrownBy(() -> c.accept(START_OF_TURN)).hasMessageContaining("control token");
        assertThatThrownBy(() -> c.accept(-1)).hasMessageContaining("outside the vocabulary");
        assertThat(mask(c)).isEqualTo(before);
        c.accept(token("c"));
        assertThat(c.isComplete()).isTrue();
    }

    @Test
    void masksHoldEveryTokenWithTheSamePieceAndMatchAllows() {
        TokenConstraint c = start(COMPILER, "root ::= \"gate\" | \"ga\" [a-z]*");
        BitSet m = mask(c);
        List<Integer> gates = new ArrayList<>();
        for (int t = 0; t < VOCABULARY.size(); t++) {
            assertThat(m.get(t)).as("token %d", t).isEqualTo(c.allows(t));
            if (!VOCABULARY.isControl(t) && new String(VOCABULARY.piece(t), StandardCharsets.UTF_8).equals("gate")) {
                gates.add(t);
            }
        }
        assertThat(gates).hasSize(2).allMatch(m::get);
    }

    @Test
    void masksAreCachedPerStateAcrossGenerations() {
        GbnfCompiler compiler = GbnfCompiler.create(VOCABULARY);
        String g = "root ::= \"{\" [a-z]{0,5} \"}\"";
        long[] first = new long[(VOCABULARY.size() + 63) / 64];
        long[] second = new long[first.length];
        TokenConstraint a = start(compiler, g);
        a.accept(token("{"));
        a.fillMask(first);
        TokenConstraint b = start(compiler, g);
        b.accept(token("{"));
        b.fillMask(second);
        assertThat(second).isEqualTo(first);
        assertThat(compiler.cacheStats()).contains("1 masks").contains("1 hits");
        assertThatThrownBy(() -> b.fillMask(new long[1])).hasMessageContaining("needs");
    }

    @Test
    void theMaskBudgetBoundsTheCache() {
        GbnfCompiler compiler = GbnfCompiler.create(VOCABULARY, 2_000);
        TokenConstraint c = start(compiler, "root ::= [a-z]{0,50}");
        long[] mask = new long[(VOCABULARY.size() + 63) / 64];
        for (int i = 0; i < 50; i++) {
            c.fillMask(mask);
            c.accept(token("x"));
        }
        assertThat(compiler.masks().bytes()).isLessThanOrEqualTo(2_000);
        assertThat(compiler.masks().size()).isBetween(1, 49);
    }

    @Test
    void aLongStringBodyIsMaskedFromItsSliceUntilItsEndIsWithinReach() {
        TokenVocabulary shortPieces = SyntheticVocabulary.shortPieces(5, 300);
        GbnfCompiler compiler = GbnfCompiler.create(shortPieces);
        assertThat(compiler.longestPiece()).isLessThanOrEqualTo(4);
        GbnfConstraint c = (GbnfConstraint) start(compiler, "root ::= \"\\\"\" [^\"\\\\]{0,20} \"\\\"\"");
        c.accept(BYTE + '"');
        long[] mask = new long[(shortPieces.size() + 63) / 64];
        for (int i = 0; i < 20; i++) {
            int[] free = c.state().freeRanges(Math.min(Slice.MAX_PURE, compiler.longestPiece()));
            if (i <= 20 - compiler.longestPiece()) {
                assertThat(free)
                        .as("free code points with %d characters left", 20 - i)
                        .isNotNull();
                assertThat(free[0]).isZero();
                assertThat(free).doesNotContain('"', '\\');
            } else {
                assertThat(free).as("near the bound, %d left", 20 - i).isNull();
            }
            c.fillMask(mask);
            for (int t = 0; t < shortPieces.size(); t++) {
                assertThat((mask[t >>> 6] & (1L << t)) != 0)
                        .as("token %d at %d", t, i)
                        .isEqualTo(c.allows(t));
            }
            c.accept(BYTE + 'x');
        }
        assertThat(compiler.cacheStats()).contains("masks");
    }

    @Test
    @Timeout(120)
    void generationsOnManyThreadsShareOneCompilerAndSeeTheSameMasks() throws Exception {
        TokenVocabulary vocabulary = SyntheticVocabulary.shortPieces(9, 300);
        String grammar = "root ::= \"{\\\"a\\\":\\\"\" [^\"\\\\\\x00-\\x1F]{0,30} \"\\\"}\" | [a-z]{1,20}";
        List<int[]> walks = new ArrayList<>();
        for (int w = 0; w < 8; w++) {
            walks.add(tokens(GbnfCompiler.create(vocabulary, 0), grammar, new java.util.Random(w), vocabulary));
        }
        GbnfCompiler shared = GbnfCompiler.create(vocabulary);
        GbnfCompiler reference = GbnfCompiler.create(vocabulary, 0);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            List<java.util.concurrent.Future<?>> done = new ArrayList<>();
            for (int round = 0; round < 4; round++) {
                for (int[] walk : walks) {
                    done.add(pool.submit(() -> {
                        TokenConstraint a = start(shared, grammar);
                        TokenConstraint b = start(reference, grammar);
                        long[] ma = new long[(vocabulary.size() + 63) / 64];
                        long[] mb = new long[ma.length];
                        for (int token : walk) {
                            a.fillMask(ma);
                            b.fillMask(mb);
                            assertThat(ma).isEqualTo(mb);
                            a.accept(token);
                            b.accept(token);
                        }
                        return null;
                    }));
                }
            }
            for (java.util.concurrent.Future<?> f : done) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** A walk of random allowed tokens to the end (single-threaded, for replay). */
    private static int[] tokens(
            GbnfCompiler compiler, String grammar, java.util.Random random, TokenVocabulary vocabulary) {
        TokenConstraint c = start(compiler, grammar);
        List<Integer> out = new ArrayList<>();
        long[] mask = new long[(vocabulary.size() + 63) / 64];
        while (!c.canEnd() || (!c.isComplete() && random.nextInt(6) != 0)) {
            c.fillMask(mask);
            List<Integer> allowed = new ArrayList<>();
            for (int t = 0; t < vocabulary.size(); t++) {
                if ((mask[t >>> 6] & (1L << t)) != 0 && !vocabulary.isControl(t)) {
                    allowed.add(t);
                }
            }
            int token = allowed.get(random.nextInt(allowed.size()));
            c.accept(token);
            out.add(token);
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private static int find(byte[] piece) {
        for (int t = 0; t < VOCABULARY.size(); t++) {
            if (!VOCABULARY.isControl(t) && Arrays.equals(VOCABULARY.piece(t), piece)) {
                return t;
            }
        }
        throw new AssertionError("no such piece");
    }

    /** A constraint at the start of the grammar {@code gbnf} reads as. */
    private static TokenConstraint start(GrammarCompiler compiler, String gbnf) {
        return compiler.start(GbnfParser.parse(gbnf));
    }
}
