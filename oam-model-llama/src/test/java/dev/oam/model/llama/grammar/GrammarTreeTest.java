package dev.oam.model.llama.grammar;

import static dev.oam.model.llama.grammar.Term.between;
import static dev.oam.model.llama.grammar.Term.chars;
import static dev.oam.model.llama.grammar.Term.choice;
import static dev.oam.model.llama.grammar.Term.group;
import static dev.oam.model.llama.grammar.Term.literal;
import static dev.oam.model.llama.grammar.Term.notChars;
import static dev.oam.model.llama.grammar.Term.optional;
import static dev.oam.model.llama.grammar.Term.ref;
import static dev.oam.model.llama.grammar.Term.sequence;
import static dev.oam.model.llama.grammar.Term.star;
import static dev.oam.model.llama.grammar.Term.times;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.model.llama.GrammarCorpus;
import dev.oam.model.llama.grammar.Term.CharClass.Span;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The grammar tree: how it prints, that its text reads back as the same tree, and that both compile alike. */
class GrammarTreeTest {
    @Test
    void termsPrintInGbnfWithEachSpellingKept() {
        assertThat(literal("a\"b\\c\n\u0001é\u20AC\uD83D\uDC09").gbnf())
                .isEqualTo("\"a\\\"b\\\\c\\x0A\\x01\\xE9\\u20AC\\U0001F409\"");
        assertThat(literal("").gbnf()).isEqualTo("\"\"");
        assertThat(notChars(Span.of('"'), Span.of('\\'), Span.of('\t'), Span.range(0, 0x1F), Span.of(0xE9))
                        .gbnf())
                .isEqualTo("[^\"\\\\\\t\\x00-\\x1F\\u00E9]");
        assertThat(notChars(Span.of('{'), Span.of('[')).gbnf()).as("a lone [").isEqualTo("[^{[]");
        assertThat(chars(Span.of('['), Span.of(']')).gbnf()).as("both brackets").isEqualTo("[\\[\\]]");
        assertThat(chars(Span.range('5', '5')).gbnf()).isEqualTo("[5-5]");
        assertThat(notChars().gbnf()).isEqualTo("[^]");
        Term x = ref("x");
        assertThat(sequence(optional(x), star(x), times(x, 2), between(x, 2, 2), between(x, 0, 3), between(x, 1, -1))
                        .gbnf())
                .isEqualTo("x? x* x{2} x{2,2} x{0,3} x{1,}");
        assertThat(sequence(literal("a"), group(choice(literal("b"), sequence(x, literal("c")))), literal("d"))
                        .gbnf())
                .isEqualTo("\"a\" (\"b\" | x \"c\") \"d\"");
    }

    @Test
    void theFactoriesFlattenAndTheRecordsRefuseWhatWouldPrintAmbiguously() {
        Term x = ref("x");
        assertThat(sequence(x, sequence(x, null, x))).isEqualTo(new Term.Sequence(java.util.List.of(x, x, x)));
        assertThat(sequence(x)).isEqualTo(x);
        assertThat(choice(x, choice(literal("a"), literal("b"))).gbnf()).isEqualTo("x | \"a\" | \"b\"");
        assertThatThrownBy(() -> new Term.Repeat(sequence(x, x), 0, 1, Term.Spelling.OPERATOR))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Term.Sequence(java.util.List.of(x, choice(x, literal("a")))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new Term.Repeat(x, 0, 2, Term.Spelling.OPERATOR))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Grammar.of(Map.of("root", ref("missing"))))
                .hasMessageContaining("undefined rule 'missing'");
        assertThatThrownBy(() -> Grammar.of(Map.of("a", literal("a")))).hasMessageContaining("no 'root' rule");
    }

    @Test
    void aGrammarPrintsOneRuleALineInOrder() {
        Map<String, Term> rules = new LinkedHashMap<>();
        rules.put("root", sequence(literal("{"), ref("item"), literal("}")));
        rules.put("item", choice(literal("a"), between(chars(Span.range('0', '9')), 1, 3)));
        assertThat(Grammar.of(rules).gbnf()).isEqualTo("root ::= \"{\" item \"}\"\nitem ::= \"a\" | [0-9]{1,3}\n");
    }

    @Test
    void everyCorpusGrammarReadsBackAsTheSameTreeAndCompilesAlike() throws Exception {
        for (Map.Entry<String, Grammar> entry : GrammarCorpus.grammars().entrySet()) {
            Grammar tree = entry.getValue();
            Grammar read = GbnfParser.parse(tree.gbnf());
            assertThat(read.rules()).as(entry.getKey()).isEqualTo(tree.rules());
            GbnfGrammar fromTree = GbnfGrammar.compile(tree);
            GbnfGrammar fromText = GbnfGrammar.compile(read);
            assertThat(fromTree.code).as(entry.getKey()).isEqualTo(fromText.code);
            assertThat(fromTree.alternatives).as(entry.getKey()).isDeepEqualTo(fromText.alternatives);
            assertThat(fromTree.bounds).as(entry.getKey()).isEqualTo(fromText.bounds);
            assertThat(fromTree.classIntervals).as(entry.getKey()).isDeepEqualTo(fromText.classIntervals);
        }
    }
}
