package dev.oam.model.llama;

import static dev.oam.model.llama.Fixtures.CHECK_INVENTORY;
import static dev.oam.model.llama.Fixtures.OPEN_GATE;
import static dev.oam.model.llama.Fixtures.prompt;
import static dev.oam.model.llama.Fixtures.request;
import static dev.oam.model.llama.Fixtures.schema;
import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ToolCallingMode;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The grammar of each step form. */
class StepGrammarTest {
    private static final String OPEN =
            "{\"tool_call\": {\"name\": \"open_gate\", \"arguments\": {\"gate\": \"north\"}}}";
    private static final String OPEN_CALL =
            "{\"name\": \"open_gate\", \"arguments\": {\"gate\": \"south\", \"force\": true}}";
    private static final String CHECK_CALL = "{\"name\": \"check_inventory\", \"arguments\": {}}";
    private static final String TWO = "{\"tool_calls\": [" + OPEN_CALL + ", " + CHECK_CALL + "]}";
    private static final String DIRECT = "{\"tool_call\": {\"name\": \"respond_directly\", \"arguments\": {}}}";
    private static final GenerationOptions PARALLEL = new GenerationOptions(null, null, null, true);

    private static GbnfChecker grammar(ModelRequest request) throws Exception {
        return GbnfChecker.parse(StepGrammar.of(request, 64));
    }

    @Test
    void requiredStepsAllowExactlyOneCallOfAnEnabledToolWithValidArguments() throws Exception {
        GbnfChecker g = grammar(request(
                prompt("Open it."), List.of(OPEN_GATE, CHECK_INVENTORY), ToolCallingMode.REQUIRED, false, null));
        assertThat(g.accepts(OPEN)).isTrue();
        assertThat(g.accepts("{\"tool_call\": " + OPEN_CALL + "}")).isTrue();
        assertThat(g.accepts(TWO))
                .as("one call per step unless parallelToolCalls")
                .isFalse();
        assertThat(g.accepts("{\"tool_calls\": [" + OPEN_CALL + "]}"))
                .as("the parallel form")
                .isFalse();
        assertThat(g.accepts("The gate is open.")).isFalse();
        assertThat(g.accepts(OPEN.replace("north", "west"))).as("enum argument").isFalse();
        assertThat(g.accepts("{\"tool_call\": {\"name\": \"open_gate\", \"arguments\": {}}}"))
                .as("required argument")
                .isFalse();
        assertThat(g.accepts(OPEN.replace("open_gate", "burn_gate"))).isFalse();
        assertThat(g.accepts(DIRECT)).as("not offered").isFalse();
        assertThat(g.accepts(OPEN.replace(": ", ":")))
                .as("the one spacing the prompt shows")
                .isFalse();
    }

    @Test
    void parallelToolCallsAllowOneToFourCallsInTheListForm() throws Exception {
        GbnfChecker g = grammar(request(
                prompt("Open it."),
                List.of(OPEN_GATE, CHECK_INVENTORY),
                ToolCallingMode.REQUIRED,
                false,
                null,
                PARALLEL));
        assertThat(g.accepts(TWO)).isTrue();
        assertThat(g.accepts("{\"tool_calls\": [" + OPEN_CALL + "]}")).isTrue();
        assertThat(g.accepts(OPEN))
                .as("the single form belongs to one-call steps")
                .isFalse();
        assertThat(g.accepts("{\"tool_calls\": []}")).isFalse();
        String five = "{\"tool_calls\": ["
                + String.join(", ", java.util.Collections.nCopies(StepGrammar.MAX_CALLS + 1, CHECK_CALL)) + "]}";
        assertThat(g.accepts(five)).isFalse();
    }

    @Test
    void respondDirectlyIsACallOfItsOwnOnlyWhenOffered() throws Exception {
        GbnfChecker g =
                grammar(request(prompt("Hi."), List.of(OPEN_GATE), ToolCallingMode.REQUIRED, true, null, PARALLEL));
        assertThat(g.accepts(DIRECT)).isTrue();
        assertThat(g.accepts("{\"tool_calls\": [" + OPEN_CALL + "]}")).isTrue();
        assertThat(g.accepts(
                        "{\"tool_calls\": [{\"name\": \"respond_directly\", \"arguments\": {}}, " + OPEN_CALL + "]}"))
                .isFalse();
    }

    @Test
    void allowedTextStepsAcceptACallOrWordsThatCannotStartOrHoldAJsonObject() throws Exception {
        GbnfChecker g = grammar(request(prompt("Hi."), List.of(OPEN_GATE), ToolCallingMode.ALLOWED, false, null));
        assertThat(g.accepts(OPEN)).isTrue();
        assertThat(g.accepts("Halt! Who goes there? {not a call}\nNext line.")).isTrue();
        assertThat(g.accepts("{\"answer\": \"hi\"}")).isFalse();
        assertThat(g.accepts("[1, 2]")).isFalse();
        assertThat(g.accepts("Sure: {\"tool_call\": {\"name\": \"open_gate\"}}"))
                .as("a call written into words")
                .isFalse();
        assertThat(g.accepts(" leading space")).isFalse();
        assertThat(g.accepts("")).isFalse();
    }

    @Test
    void allowedStructuredStepsAcceptCallsOrTheSchemasJson() throws Exception {
        GbnfChecker g = grammar(request(
                prompt("Decide."), List.of(OPEN_GATE), ToolCallingMode.ALLOWED, false, schema(Fixtures.DECISION)));
        assertThat(g.accepts(OPEN)).isTrue();
        assertThat(g.accepts("{\"reasoning\": \"r\", \"choice\": \"flee\", \"confidence\": 3}"))
                .isTrue();
        assertThat(g.accepts("{\"reasoning\": \"r\", \"choice\": \"hide\", \"confidence\": 3}"))
                .isFalse();
        assertThat(g.accepts("Flee!")).isFalse();
    }

    @Test
    void disallowedStepsGetWordsForTextAndTheSchemaOtherwise() throws Exception {
        GbnfChecker text = grammar(request(prompt("Hi."), List.of(OPEN_GATE), ToolCallingMode.DISALLOWED, false, null));
        assertThat(text.accepts("The gate is open.")).isTrue();
        assertThat(text.accepts(OPEN))
                .as("the answer after a tool round is never the call again")
                .isFalse();
        assertThat(text.accepts("Done. {\"tool_call\": 1}")).isFalse();
        GbnfChecker g = grammar(
                request(prompt("Decide."), List.of(), ToolCallingMode.DISALLOWED, false, schema(Fixtures.DECISION)));
        assertThat(g.accepts("{\"reasoning\": \"r\", \"choice\": \"fight\", \"confidence\": 55}"))
                .isTrue();
        assertThat(g.accepts(OPEN)).isFalse();
    }

    @Test
    void stringsInCallsAreBoundedByTheGivenLength() throws Exception {
        ModelRequest request = request(
                prompt("Say."),
                List.of(
                        Fixtures.tool(
                                "say",
                                "Says a line.",
                                "{\"type\":\"object\",\"properties\":{\"line\":{\"type\":\"string\"}},\"required\":[\"line\"]}")),
                ToolCallingMode.REQUIRED,
                false,
                null);
        GbnfChecker g = GbnfChecker.parse(StepGrammar.of(request, 16));
        assertThat(g.accepts(
                        "{\"tool_call\": {\"name\": \"say\", \"arguments\": {\"line\": \"" + "x".repeat(16) + "\"}}}"))
                .isTrue();
        assertThat(g.accepts(
                        "{\"tool_call\": {\"name\": \"say\", \"arguments\": {\"line\": \"" + "x".repeat(17) + "\"}}}"))
                .isFalse();
    }
}
