package dev.oam.model.llama;

import dev.oam.core.ErrorCode;
import dev.oam.core.agent.AgentException;
import dev.oam.core.agent.ToolCallingMode;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolDefinition;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The grammar of one step, which carries the step's mode (the prompt does not change with it):
 *
 * <ul>
 *   <li>{@code required}: {@code {"tool_calls":[call,…]}} with 1 to {@value #MAX_CALLS} calls of the
 *       enabled tools, or exactly one call of {@code respond_directly} when it is offered;
 *   <li>{@code allowed}: that, or an answer: free text whose first character is neither {@code {} nor
 *       white space, or on a structured turn the schema's JSON;
 *   <li>{@code disallowed}: the schema's JSON on a structured turn, else no grammar at all.
 * </ul>
 *
 * A call is {@code {"name":"open_gate","arguments":{…}}} with the arguments in the tool's compact form.
 */
final class StepGrammar {
    /** Calls one step may make. Small models repeat themselves; a few calls keep parallel rounds possible. */
    static final int MAX_CALLS = 4;
    /** How every tool-call output starts (and how the history shows calls). */
    static final String CALLS_PREFIX = "{\"tool_calls\":[";
    private static final String TEXT_RULE = "text";

    private StepGrammar() {}

    /** The grammar with up to {@link #MAX_CALLS} calls, or {@code null} for unconstrained text. */
    static @Nullable String of(ModelRequest request, int maxString) throws AgentException {
        return of(request, maxString, MAX_CALLS);
    }

    /**
     * The grammar, or {@code null} for unconstrained text.
     *
     * @param maxCalls the most calls a tool-call output may hold (1 to {@link #MAX_CALLS})
     */
    static @Nullable String of(ModelRequest request, int maxString, int maxCalls) throws AgentException {
        Gbnf gbnf = new Gbnf(maxString);
        String answer = null;
        GenerationSchema schema = request.schema();
        if (schema != null) {
            answer = gbnf.schema(schema.json()).root();
            if (answer == null) {
                throw new AgentException(ErrorCode.GENERATION_FAILED,
                        "The answer's schema has no value within the grammar's bounds (recursion deeper than "
                                + Gbnf.MAX_REF_DEPTH + " levels).");
            }
        }
        return switch (request.mode()) {
            case DISALLOWED -> answer == null ? null : gbnf.build(answer);
            case REQUIRED -> gbnf.build(calls(gbnf, request, maxCalls));
            case ALLOWED -> gbnf.build(calls(gbnf, request, maxCalls) + " | " + (answer != null ? answer
                    : gbnf.rule(TEXT_RULE, "[^{ \\t\\r\\n] [^\\x00]*")));
        };
    }

    /** Whether {@code rule} is the free text of an answer (its length is the token limit's business). */
    static boolean isFreeText(String rule) {
        return rule.startsWith(TEXT_RULE + "-");
    }

    private static String calls(Gbnf gbnf, ModelRequest request, int maxCalls) throws AgentException {
        List<String> alternatives = new ArrayList<>();
        for (ToolDefinition tool : request.tools()) {
            String arguments = gbnf.schema(tool.schema().json()).root();
            if (arguments != null) {
                alternatives.add(gbnf.rule("call", Gbnf.literal("{\"name\":\"" + tool.name() + "\",\"arguments\":")
                        + " " + arguments + " \"}\""));
            }
        }
        List<String> forms = new ArrayList<>();
        if (!alternatives.isEmpty()) {
            String call = alternatives.size() == 1 ? alternatives.get(0) : gbnf.rule("call", String.join(" | ", alternatives));
            forms.add(maxCalls <= 1 ? call : call + " (\",\" " + call + "){0," + (maxCalls - 1) + "}");
        }
        if (request.offerRespondDirectly()) {
            forms.add(Gbnf.literal("{\"name\":\"" + ToolDefinition.RESPOND_DIRECTLY + "\",\"arguments\":{}}"));
        }
        if (forms.isEmpty()) {
            throw new AgentException(ErrorCode.GENERATION_FAILED, "No tool of this step has arguments within the grammar's "
                    + "bounds, so no call can be generated.");
        }
        return gbnf.rule("tool-calls", Gbnf.literal(CALLS_PREFIX) + " (" + String.join(" | ", forms) + ") " + Gbnf.literal("]}"));
    }

    /** Whether {@code mode} lets the step call tools at all. */
    static boolean mayCall(ToolCallingMode mode) {
        return mode != ToolCallingMode.DISALLOWED;
    }
}
