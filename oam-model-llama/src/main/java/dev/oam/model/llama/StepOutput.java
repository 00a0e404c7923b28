package dev.oam.model.llama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.model.llama.prompt.CallFormat;
import dev.oam.model.llama.prompt.ChatPrompt;
import dev.oam.model.llama.prompt.DialogueAnswer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Reads a step's output. The grammar already shapes it, but the grammar may have been ignored (llama.cpp drops a
 * grammar it cannot parse) and the output may be cut off at the token limit (the engine reports no stop reason), so
 * everything is parsed and validated again:
 *
 * <ul>
 *   <li>tool calls: complete JSON of the one call format, offered tools only, arguments valid for the tool's generation
 *       schema; otherwise a retryable {@code generation_failed} (as the OpenAI backend's emulated calls). Exception:
 *       once a tool ran in this turn the agent no longer retries, so a well-formed call with invalid arguments is
 *       passed on and the agent answers it with an error output the model can correct ({@code Invalid arguments for
 *       …});
 *   <li>structured answers: parsed and put in schema order; the agent validates them with the same validator and
 *       regenerates within {@code maxAttempts} (also after a tool ran);
 *   <li>text answers: the text without leading white space, exactly what was streamed.
 * </ul>
 */
final class StepOutput {
    private static final int SHOWN = 200;
    /** The shortest passage of the prompt whose verbatim copy is taken out of an answer. */
    static final int ECHO_LENGTH = 24;
    /** The same for a line of the step note ("Tools you can call:"), which is never a player's or a model's words. */
    static final int NOTE_ECHO_LENGTH = 12;

    private StepOutput() {}

    /** Whether {@code text} (with leading white space) is, or begins like, the tool-call form. */
    static boolean looksLikeCalls(String text) {
        return CallFormat.looksLikeCalls(text);
    }

    static ModelResponse parse(String text, ModelRequest request, Usage usage) throws AgentException {
        ToolCallingMode mode = request.mode();
        if (mode == ToolCallingMode.REQUIRED || (mode == ToolCallingMode.ALLOWED && looksLikeCalls(text))) {
            return new ModelResponse.ToolCalls(calls(text, request), usage);
        }
        GenerationSchema schema = request.schema();
        DialogueAnswer dialogue = DialogueAnswer.of(request);
        if (dialogue != null && dialogue.isText()) {
            String line = dialogue.line(text);
            if (line != null) {
                return new ModelResponse.Answer(line, null, usage);
            }
        } else if (dialogue != null) {
            // Not in the form (the grammar was ignored, or cut off): no value, so the agent's validation regenerates.
            JsonNode value = dialogue.parse(text);
            return new ModelResponse.Answer(value != null ? Json.write(value) : text, value, usage);
        }
        if (schema != null) {
            JsonNode value = null;
            try {
                value = schema.reorder(Json.parse(text.strip()));
            } catch (Exception e) {
                // not JSON (cut off?): the agent's validation reports it and regenerates
            }
            return new ModelResponse.Answer(text, value, usage);
        }
        String answer = withoutEcho(text.stripLeading(), request);
        if (answer.isBlank() && !text.isBlank() && request.turnToolOutputs().isEmpty()) {
            // Asked again with another draw; after a tool ran the step is not asked again, and the answer is empty.
            throw new AgentException(
                    ErrorCode.GENERATION_FAILED, "The model's answer only read its prompt back: " + shorten(text));
        }
        return new ModelResponse.Answer(answer, null, usage);
    }

    /**
     * {@code text} without the session's instructions, context note, the turn's prompt or the step note read back
     * verbatim (a base model continues its prompt instead of answering: Gemma 3 270M wrote its instructions, the
     * player's question or "Tools you can call:" as its answer). Only whole lines of at least {@value #ECHO_LENGTH}
     * characters ({@value #NOTE_ECHO_LENGTH} of the note) are taken out, so an answer that merely shares words stays.
     */
    static String withoutEcho(String text, ModelRequest request) {
        String out = text;
        String note = ChatPrompt.stepNote(request);
        String[][] sources = {{request.instructions(), request.contextNote(), request.prompt()}, {note}};
        for (int kind = 0; kind < sources.length; kind++) {
            int least = kind == 0 ? ECHO_LENGTH : NOTE_ECHO_LENGTH; // the note's own lines are the bridge's words
            for (String passage : sources[kind]) {
                if (passage == null) {
                    continue;
                }
                for (String part : passage.strip().split("\\n+")) {
                    String p = part.strip();
                    if (p.length() >= least && out.contains(p)) {
                        out = out.replace(p, "");
                    }
                }
            }
        }
        return out.equals(text)
                ? text
                : out.strip().replaceAll("[ \\t]{2,}", " ").replaceAll("\\n{3,}", "\n\n");
    }

    private static List<ToolCall> calls(String text, ModelRequest request) throws AgentException {
        JsonNode root;
        try {
            root = Json.parse(text.strip());
        } catch (Exception e) {
            throw invalid("it is not complete JSON (cut off at the token limit?)", text);
        }
        JsonNode array = root.isObject() && root.size() == 1 && root.get("tool_call") instanceof ObjectNode one
                ? Json.mapper().createArrayNode().add(one)
                : root.get("tool_calls");
        if (!root.isObject() || root.size() != 1 || array == null || !array.isArray() || array.isEmpty()) {
            throw invalid("it is neither {\"tool_call\": {…}} nor {\"tool_calls\": […]} with at least one call", text);
        }
        boolean toolRan = !request.turnToolOutputs().isEmpty();
        List<ToolCall> calls = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (JsonNode item : array) {
            if (!item.isObject() || !item.path("name").isTextual()) {
                throw invalid("a call has no name", text);
            }
            String name = item.get("name").textValue();
            JsonNode arguments = item.get("arguments");
            if (arguments != null && !arguments.isNull() && !arguments.isObject()) {
                throw invalid("the arguments of '" + name + "' are not an object", text);
            }
            ObjectNode args = arguments instanceof ObjectNode object ? object : Json.object();
            boolean direct = request.offerRespondDirectly() && name.equals(ToolDefinition.RESPOND_DIRECTLY);
            Optional<ToolDefinition> tool =
                    request.tools().stream().filter(t -> t.name().equals(name)).findFirst();
            if (!direct && tool.isEmpty()) {
                throw invalid("it calls '" + name + "', which is not offered in this step", text);
            }
            if (tool.isPresent() && !toolRan) {
                Optional<String> violation = tool.get().schema().firstViolation(args);
                if (violation.isPresent()) {
                    throw invalid(
                            "the arguments of '" + name + "' do not match its parameters: " + violation.get(), text);
                }
            }
            String id;
            do {
                id = ToolCall.newId();
            } while (!ids.add(id));
            calls.add(new ToolCall(id, name, args));
        }
        return calls;
    }

    private static AgentException invalid(String why, String text) {
        return new AgentException(
                ErrorCode.GENERATION_FAILED,
                "The model's output is not a valid tool call (" + why + "): " + shorten(text));
    }

    static String shorten(String text) {
        String flat = text.strip();
        return flat.length() <= SHOWN ? flat : flat.substring(0, SHOWN) + "…";
    }
}
