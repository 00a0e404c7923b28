package dev.oam.model.llama;

import static dev.oam.model.llama.Fixtures.OPEN_GATE;
import static dev.oam.model.llama.Fixtures.prompt;
import static dev.oam.model.llama.Fixtures.request;
import static dev.oam.model.llama.Fixtures.schema;
import static dev.oam.model.llama.Fixtures.tool;
import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.model.llama.grammar.GbnfParser;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.Term;
import dev.oam.model.llama.grammar.Term.CharClass.Span;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The longest output of a grammar, and steps sized to fit their budget with it. */
class GrammarBoundTest {
    private static long bound(String grammar) {
        return GrammarBound.maxBytes(GbnfParser.parse(grammar), rule -> false);
    }

    @Test
    void literalsClassesAndRepetitionsCountTheirLongestUtf8() {
        assertThat(bound("root ::= \"abc\"\n")).isEqualTo(3);
        assertThat(bound("root ::= \"\\u00E9\\U0001F600\\x41\"\n")).isEqualTo(2 + 4 + 1);
        assertThat(bound("root ::= [a-z]{2,5} [^\"]\n")).isEqualTo(5 + 4);
        assertThat(bound("root ::= a | b b\na ::= \"xxxx\"\nb ::= (\"x\" \"y\"?)?\n"))
                .isEqualTo(4);
        assertThat(bound("root ::= [\\x00-\\x7F]{3}\n")).isEqualTo(3);
        assertThat(bound("root ::= [a-\\u07FF]\n")).isEqualTo(2);
        assertThat(bound("root ::= \"a\" [^x]*\n")).isEqualTo(GrammarBound.UNBOUNDED);
        assertThat(bound("root ::= \"a\" b\nb ::= \"(\" b? \")\"\n"))
                .as("recursion")
                .isEqualTo(GrammarBound.UNBOUNDED);
        assertThat(GrammarBound.maxBytes(
                        GbnfParser.parse("root ::= \"{\" | text-3\ntext-3 ::= [^{] [^\\x00]*\n"),
                        StepGrammar::isFreeText))
                .isEqualTo(1);
    }

    @Test
    void boundsAreReadFromTheTrees() {
        Map<String, Term> rules = new LinkedHashMap<>();
        rules.put("root", Term.sequence(Term.literal("é"), Term.optional(Term.ref("a")), Term.ref("b")));
        rules.put("a", Term.between(Term.chars(Span.range('a', 'z')), 2, 5));
        rules.put(
                "b",
                Term.choice(
                        Term.group(Term.choice(Term.literal("xy"), Term.notChars(Span.of('"')))),
                        Term.times(Term.literal("\u20AC"), 2)));
        Grammar grammar = Grammar.of(rules);
        assertThat(GrammarBound.maxBytes(grammar, rule -> false)).isEqualTo(2 + 5 + 6);
        assertThat(GrammarBound.maxBytes(grammar, rule -> rule.equals("a"))).isEqualTo(2 + 6);
        assertThat(GrammarBound.minCodePoints(grammar)).isEqualTo(1 + 1);
        rules.put("a", Term.star(Term.ref("b")));
        assertThat(GrammarBound.maxBytes(Grammar.of(rules), rule -> false)).isEqualTo(GrammarBound.UNBOUNDED);
        assertThat(GrammarBound.minCodePoints(Grammar.of(rules))).isEqualTo(2);
    }

    @Test
    void aForcedStepWithManyStringsFitsItsBudgetByGivingUpParallelCallsFirst() throws Exception {
        var form = tool("fill_form", "Fills a form.", """
                {"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},
                 "d":{"type":"array","items":{"type":"string"}}},"required":["a","b","c","d"]}""");
        for (int budget : new int[] {256, 600, 1024, 4000}) {
            ModelRequest step = request(
                    prompt("Fill it."),
                    List.of(form, OPEN_GATE),
                    ToolCallingMode.REQUIRED,
                    false,
                    null,
                    new GenerationOptions(null, budget, null));
            LlamaLanguageModel.StepPlan plan = LlamaLanguageModel.plan(step, 8192);
            assertThat(plan.maxTokens()).isEqualTo(budget);
            assertThat(GrammarBound.maxBytes(plan.grammar(), StepGrammar::isFreeText))
                    .as("budget %d", budget)
                    .isLessThanOrEqualTo(budget);
        }
        ModelRequest roomy = request(
                prompt("Open."),
                List.of(OPEN_GATE),
                ToolCallingMode.REQUIRED,
                false,
                null,
                new GenerationOptions(null, 1024, null, true));
        assertThat(LlamaLanguageModel.plan(roomy, 8192).grammar().gbnf())
                .as("small calls keep parallel calls")
                .contains("){0,3}");
    }

    @Test
    void anEngineThatClosesAtTheBudgetKeepsWholeStringsAndTheBudget() throws Exception {
        var form = tool("fill_form", "Fills a form.", """
                {"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["a","b"]}""");
        ModelRequest step = request(
                prompt("Fill it."),
                List.of(form),
                ToolCallingMode.REQUIRED,
                false,
                null,
                new GenerationOptions(null, 100, null));
        LlamaLanguageModel.StepPlan fitted = LlamaLanguageModel.plan(step, 8192, false);
        LlamaLanguageModel.StepPlan closed = LlamaLanguageModel.plan(step, 8192, true);
        assertThat(fitted.grammar().gbnf()).doesNotContain("string-" + LlamaLanguageModel.MAX_STRING);
        assertThat(closed.grammar().gbnf()).contains("string-" + LlamaLanguageModel.MAX_STRING);
        assertThat(closed.maxTokens()).isEqualTo(100);
        ModelRequest unset = request(prompt("Fill it."), List.of(form), ToolCallingMode.REQUIRED, false, null);
        assertThat(LlamaLanguageModel.plan(unset, 8192, true).maxTokens())
                .as("a forced call's default bound")
                .isEqualTo(LlamaLanguageModel.DEFAULT_CALL_TOKENS);
        ModelRequest tiny = request(
                prompt("Fill it."),
                List.of(form),
                ToolCallingMode.REQUIRED,
                false,
                null,
                new GenerationOptions(null, 1, null));
        LlamaLanguageModel.StepPlan roomForTheShortest = LlamaLanguageModel.plan(tiny, 8192, true);
        assertThat((long) roomForTheShortest.maxTokens())
                .as("room for the shortest call")
                .isGreaterThanOrEqualTo(GrammarBound.minCodePoints(roomForTheShortest.grammar()));
        assertThat(GrammarBound.minCodePoints(GbnfParser.parse(
                        "root ::= \"ab\" c? d{2,5} (e | \"xyz\")\nc ::= \"q\"\nd ::= [a-z]\ne ::= \"e\"+\n")))
                .isEqualTo(2 + 0 + 2 + 1);
    }

    @Test
    void freeTextIsCutByTheBudgetAndOnlyTheCallsMustFit() throws Exception {
        ModelRequest step = request(
                prompt("Hi."),
                List.of(OPEN_GATE),
                ToolCallingMode.ALLOWED,
                false,
                null,
                new GenerationOptions(null, 300, null));
        LlamaLanguageModel.StepPlan plan = LlamaLanguageModel.plan(step, 8192);
        assertThat(plan.maxTokens()).isEqualTo(300);
        assertThat(plan.grammar().gbnf()).contains("text-");
        assertThat(GrammarBound.maxBytes(plan.grammar(), StepGrammar::isFreeText))
                .isLessThanOrEqualTo(300);
    }

    @Test
    void aSchemaThatCannotFitGetsWhatItsSmallestGrammarNeeds() throws Exception {
        StringBuilder properties = new StringBuilder();
        StringBuilder required = new StringBuilder();
        for (int i = 0; i < 12; i++) {
            properties.append(i == 0 ? "" : ",").append("\"field_").append(i).append("\":{\"type\":\"integer\"}");
            required.append(i == 0 ? "" : ",").append("\"field_").append(i).append('"');
        }
        ModelRequest step = request(
                prompt("Stats?"),
                List.of(),
                ToolCallingMode.DISALLOWED,
                false,
                schema("{\"type\":\"object\",\"properties\":{" + properties + "},\"required\":[" + required + "]}"),
                new GenerationOptions(null, 20, null));
        LlamaLanguageModel.StepPlan plan = LlamaLanguageModel.plan(step, 8192);
        long needed = GrammarBound.maxBytes(plan.grammar(), StepGrammar::isFreeText);
        assertThat(needed).isGreaterThan(20);
        assertThat(plan.maxTokens()).isEqualTo((int) needed);
    }

    @Test
    void textStepsHaveTheWordsGrammarAndTheirBudget() throws Exception {
        ModelRequest step = request(
                prompt("Hi."),
                List.of(),
                ToolCallingMode.DISALLOWED,
                false,
                null,
                new GenerationOptions(null, 33, null));
        LlamaLanguageModel.StepPlan plan = LlamaLanguageModel.plan(step, 8192);
        assertThat(plan.maxTokens()).isEqualTo(33);
        assertThat(plan.grammar().gbnf()).contains(StepGrammar.TEXT.gbnf());
    }
}
