package dev.oam.model.llama;

import static dev.oam.model.llama.grammar.Term.between;
import static dev.oam.model.llama.grammar.Term.choice;
import static dev.oam.model.llama.grammar.Term.group;
import static dev.oam.model.llama.grammar.Term.literal;
import static dev.oam.model.llama.grammar.Term.notChars;
import static dev.oam.model.llama.grammar.Term.sequence;
import static dev.oam.model.llama.grammar.Term.star;

import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.Term;
import dev.oam.model.llama.grammar.Term.CharClass.Span;
import dev.oam.model.llama.prompt.CallFormat;
import dev.oam.model.llama.prompt.DialogueAnswer;
import java.util.ArrayList;
import java.util.List;

/**
 * The grammar of one step, which carries the step's mode:
 *
 * <ul>
 *   <li>{@code required}: one call ({@link CallFormat}: {@code {"tool_call": {"name": …, "arguments": {…}}}}) of an
 *       enabled tool, or, when the session allows parallel calls, {@code {"tool_calls": [call, …]}} with 1 to
 *       {@value #MAX_CALLS} calls; {@code respond_directly} when offered is always a call of its own;
 *   <li>{@code allowed}: that, or an answer: plain text ({@link #TEXT}), or on a structured turn the schema's JSON;
 *   <li>{@code disallowed}: the schema's JSON on a structured turn, else plain text.
 * </ul>
 *
 * Plain text starts with neither white space, {@code {} nor {@code [}, and never holds <code>{"</code>: an answer
 * is words for a player, and a small model that has just seen a call in its history otherwise writes the call again
 * as its answer.
 */
public final class StepGrammar {
    /** Calls one step may make when the session allows parallel calls. */
    static final int MAX_CALLS = 4;

    private static final String TEXT_RULE = "text";
    /** Words: no leading white space, no JSON object or array opening, no {@code {"} anywhere. */
    static final Term TEXT = sequence(
            notChars(Span.of('{'), Span.of('['), Span.of(' '), Span.of('\t'), Span.of('\r'), Span.of('\n'), Span.of(0)),
            star(group(choice(
                    notChars(Span.of('{'), Span.of(0)), sequence(literal("{"), notChars(Span.of('"'), Span.of(0)))))));

    private StepGrammar() {}

    /** The grammar with the calls the request allows ({@link #maxCalls}). */
    public static Grammar of(ModelRequest request, int maxString) throws AgentException {
        return of(request, maxString, maxCalls(request));
    }

    /** One call per step unless the session allows parallel calls. */
    static int maxCalls(ModelRequest request) {
        return request.options().parallelToolCalls() ? MAX_CALLS : 1;
    }

    /**
     * The step's grammar.
     *
     * @param maxCalls the most calls a tool-call output may hold (1 to {@link #MAX_CALLS}); 1 writes the single form
     */
    public static Grammar of(ModelRequest request, int maxString, int maxCalls) throws AgentException {
        Gbnf gbnf = new Gbnf(maxString);
        Term answer = null;
        GenerationSchema schema = request.schema();
        DialogueAnswer dialogue = DialogueAnswer.of(request);
        if (dialogue != null) {
            answer = dialogue.rule(gbnf::rule);
        } else if (schema != null) {
            answer = gbnf.schema(schema.json()).root();
            if (answer == null) {
                throw new AgentException(
                        ErrorCode.GENERATION_FAILED,
                        "The answer's schema has no value within the grammar's bounds (recursion deeper than "
                                + Gbnf.MAX_REF_DEPTH + " levels).");
            }
        }
        if (answer == null) {
            answer = gbnf.rule(TEXT_RULE, TEXT);
        }
        return switch (request.mode()) {
            case DISALLOWED -> gbnf.build(answer);
            case REQUIRED -> gbnf.build(calls(gbnf, request, maxCalls));
            case ALLOWED -> gbnf.build(choice(calls(gbnf, request, maxCalls), answer));
        };
    }

    /** Whether {@code rule} is the free text of an answer (its length is the token limit's business). */
    static boolean isFreeText(String rule) {
        return rule.startsWith(TEXT_RULE + "-");
    }

    private static Term calls(Gbnf gbnf, ModelRequest request, int maxCalls) throws AgentException {
        List<Term> alternatives = new ArrayList<>();
        for (ToolDefinition tool : request.tools()) {
            Term arguments = gbnf.schema(tool.schema().json()).root();
            if (arguments != null) {
                alternatives.add(gbnf.rule(
                        "call",
                        sequence(
                                literal(CallFormat.NAME + "\"" + tool.name() + "\"" + CallFormat.ARGUMENTS),
                                arguments,
                                literal("}"))));
            }
        }
        List<Term> forms = new ArrayList<>();
        if (!alternatives.isEmpty()) {
            Term call = alternatives.size() == 1 ? alternatives.get(0) : gbnf.rule("call", choice(alternatives));
            forms.add(
                    maxCalls <= 1
                            ? sequence(literal(CallFormat.SINGLE), call, literal("}"))
                            : sequence(
                                    literal(CallFormat.PARALLEL),
                                    call,
                                    between(group(sequence(literal(", "), call)), 0, maxCalls - 1),
                                    literal("]}")));
        }
        if (request.offerRespondDirectly()) {
            forms.add(literal(CallFormat.SINGLE + CallFormat.NAME + "\"" + ToolDefinition.RESPOND_DIRECTLY + "\""
                    + CallFormat.ARGUMENTS + "{}}}"));
        }
        if (forms.isEmpty()) {
            throw new AgentException(
                    ErrorCode.GENERATION_FAILED,
                    "No tool of this step has arguments within the grammar's "
                            + "bounds, so no call can be generated.");
        }
        return gbnf.rule("tool-calls", choice(forms));
    }

    /** Whether {@code mode} lets the step call tools at all. */
    static boolean mayCall(ToolCallingMode mode) {
        return mode != ToolCallingMode.DISALLOWED;
    }
}
