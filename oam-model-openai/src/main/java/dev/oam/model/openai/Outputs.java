package dev.oam.model.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.Tokens;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.PartialJson;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/** What a completion means for the agent: calls with usable ids and arguments, an answer, or an error. */
final class Outputs {
    private Outputs() {}

    /** Refusals and content filters end the step whatever else came with them; the error carries the step's usage. */
    static void checkStopped(CompletionAnswer completion, Usage usage) throws AgentException {
        String refusal = completion.refusal.toString().strip();
        if (!refusal.isEmpty()) {
            throw new AgentException(ErrorCode.REFUSAL, "The model refused: " + Failures.shorten(refusal))
                    .withUsage(usage);
        }
        if ("content_filter".equals(completion.finishReason)) {
            throw new AgentException(
                            ErrorCode.GUARDRAIL_VIOLATION,
                            "The model server's content filter stopped the answer"
                                    + (completion.content.isEmpty()
                                            ? "."
                                            : " after: " + Failures.shorten(completion.content.toString())))
                    .withUsage(usage);
        }
    }

    /**
     * A step whose output had to be a call or JSON and was cut by {@code max_tokens} ({@code finish_reason: "length"})
     * fails with a retryable {@code generation_failed} naming the bound; the agent asks again within
     * {@code maxAttempts}. Free text cut short is a shorter answer and stands (as in the embedded backend).
     *
     * @param structured whether the output had to be a call or a JSON value (not free text)
     */
    static void checkLength(CompletionAnswer completion, ModelRequest request, boolean structured, Usage usage)
            throws AgentException {
        if (!"length".equals(completion.finishReason) || !structured) {
            return;
        }
        int bound = ChatRequests.maxTokens(request);
        boolean configured = request.options().maxResponseTokens() != null;
        String what = !completion.calls.isEmpty() || request.mode() == ToolCallingMode.REQUIRED
                ? "tool call"
                : request.schema() != null ? "JSON answer" : "tool call or answer";
        throw new AgentException(
                        ErrorCode.GENERATION_FAILED,
                        "The model's output reached the step's limit of " + bound
                                + " tokens before its " + what + " was complete"
                                + (configured
                                        ? " (the session's maxResponseTokens)"
                                        : " (the default for this kind of step)")
                                + ". Set the session option maxResponseTokens higher to "
                                + "allow longer outputs.")
                .withUsage(usage);
    }

    /**
     * Whether a step's text that came without calls was meant as a call or JSON: a tool step's text that opens an
     * object.
     */
    static boolean looksStructured(String content) {
        String text = content.stripLeading();
        return text.startsWith("{") || text.startsWith("[") || text.startsWith("```");
    }

    static Usage usage(CompletionAnswer completion, ModelRequest request) {
        JsonNode usage = completion.usage;
        if (usage != null && usage.path("prompt_tokens").canConvertToInt()) {
            int input = usage.path("prompt_tokens").intValue();
            int cached =
                    usage.path("prompt_tokens_details").path("cached_tokens").asInt(0);
            int output = usage.path("completion_tokens").asInt(0);
            return new Usage(input, Math.min(Math.max(0, cached), input), output);
        }
        StringBuilder produced = new StringBuilder(completion.content);
        for (CompletionAnswer.RawCall call : completion.calls) {
            produced.append(call.name).append(call.arguments);
        }
        return new Usage(request.estimatedInputTokens(), 0, Tokens.estimate(produced.toString()));
    }

    /** The server's calls with generated ids where the server sent none (or a duplicate). */
    static List<ToolCall> calls(CompletionAnswer completion) throws AgentException {
        List<ToolCall> calls = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        for (CompletionAnswer.RawCall raw : completion.calls) {
            if (raw.name.isBlank()) {
                throw new AgentException(
                        ErrorCode.GENERATION_FAILED, "The model server returned a tool call without a name.");
            }
            ObjectNode arguments = raw.argumentsValue != null
                    ? asObject(raw.argumentsValue, raw.name)
                    : arguments(raw.arguments.toString(), raw.name);
            String id = raw.id.isBlank() || !ids.add(raw.id) ? ToolCall.newId() : raw.id;
            ids.add(id);
            calls.add(new ToolCall(id, raw.name, arguments));
        }
        return calls;
    }

    /**
     * {@code calls}, or only the first when the step may not call several tools ({@code parallel_tool_calls: false}).
     */
    static List<ToolCall> allowed(List<ToolCall> calls, ModelRequest request) {
        if (calls.size() <= 1 || request.options().parallelToolCalls()) {
            return calls;
        }
        Log.debug("the server returned " + calls.size()
                + " tool calls in a step without parallelToolCalls; the first is kept");
        return List.of(calls.get(0));
    }

    private static ObjectNode arguments(String text, String name) throws AgentException {
        if (text.isBlank()) {
            return Json.object();
        }
        try {
            return asObject(Json.parse(text.strip()), name);
        } catch (java.io.IOException e) {
            throw new AgentException(
                    ErrorCode.GENERATION_FAILED,
                    "The model's call of '" + name + "' has arguments that are not JSON: " + Failures.shorten(text));
        }
    }

    private static ObjectNode asObject(JsonNode value, String name) throws AgentException {
        JsonNode node = value;
        if (node.isTextual()) {
            // some servers encode the arguments twice
            try {
                node = Json.parse(node.textValue());
            } catch (java.io.IOException e) {
                node = value;
            }
        }
        if (node instanceof ObjectNode object) {
            return object;
        }
        throw new AgentException(
                ErrorCode.GENERATION_FAILED,
                "The model's call of '" + name + "' has arguments that are not a JSON object: "
                        + Failures.shorten(Json.write(value)));
    }

    /** JSON from a model's text: as is, inside a Markdown fence, or between the first '{' and the last '}'. */
    static @Nullable JsonNode lenientJson(String text) {
        String trimmed = text.strip();
        if (trimmed.startsWith("```")) {
            int firstLine = trimmed.indexOf('\n');
            int end = trimmed.lastIndexOf("```");
            if (firstLine > 0 && end > firstLine) {
                trimmed = trimmed.substring(firstLine + 1, end).strip();
            }
        }
        try {
            return Json.parse(trimmed);
        } catch (java.io.IOException e) {
            // try the outermost object
        }
        int start = trimmed.indexOf('{');
        int end = trimmed.lastIndexOf('}');
        if (start >= 0 && end > start) {
            try {
                return Json.parse(trimmed.substring(start, end + 1));
            } catch (java.io.IOException e) {
                return null;
            }
        }
        return null;
    }

    /**
     * Why {@code content} is not a JSON value that validates against {@code schema} ({@code null} when it is): the
     * check of whether a server honoured a schema. Strict: a constrained output is JSON and nothing else.
     */
    static @Nullable String violation(String content, JsonNode schema) {
        JsonNode value;
        try {
            value = Json.parse(content.strip());
        } catch (java.io.IOException | RuntimeException e) {
            return "the output is not JSON";
        }
        if (!(schema instanceof ObjectNode object)) {
            return null;
        }
        return new GenerationSchema(object, List.of()).firstViolation(value).orElse(null);
    }

    /**
     * An emulated step's JSON as calls or an answer. Anything else is a retryable {@code generation_failed}: the agent
     * generates the step again within {@code maxAttempts}.
     */
    static ModelResponse emulated(String content, ModelRequest request, Usage usage) throws AgentException {
        JsonNode value = lenientJson(content);
        if (value instanceof ObjectNode object) {
            JsonNode name = object.get("name");
            if (name != null && name.isTextual()) {
                return new ModelResponse.ToolCalls(List.of(emulatedCall(object, request, content)), usage);
            }
            JsonNode several = object.get("calls");
            if (several != null && several.isArray() && !several.isEmpty()) {
                List<ToolCall> calls = new ArrayList<>();
                for (JsonNode item : several) {
                    if (!(item instanceof ObjectNode call) || !call.path("name").isTextual()) {
                        throw invalid("an item of its calls is not a call", content);
                    }
                    calls.add(emulatedCall(call, request, content));
                }
                return new ModelResponse.ToolCalls(allowed(calls, request), usage);
            }
            JsonNode answer = object.get("answer");
            if (answer != null && request.mode() == ToolCallingMode.ALLOWED) {
                if (request.schema() == null) {
                    if (!answer.isTextual()) {
                        throw invalid("its answer is not a string", content);
                    }
                    return new ModelResponse.Answer(answer.textValue(), null, usage);
                }
                return new ModelResponse.Answer(Json.write(answer), answer, usage);
            }
        }
        throw invalid(value == null ? "it is not JSON" : "it is neither a tool call nor an answer", content);
    }

    /**
     * The call a server left as text in a forced step (a JSON object naming an offered tool, as an emulated step writes
     * it, possibly in a fence or among words), so that a call is never dropped; {@code null} when the text holds none.
     */
    static ModelResponse.@Nullable ToolCalls callInText(String content, ModelRequest request, Usage usage) {
        if (request.mode() != ToolCallingMode.REQUIRED || content.indexOf('{') < 0) {
            return null;
        }
        try {
            return emulated(content, request, usage) instanceof ModelResponse.ToolCalls calls ? calls : null;
        } catch (AgentException e) {
            return null;
        }
    }

    private static ToolCall emulatedCall(ObjectNode object, ModelRequest request, String content)
            throws AgentException {
        String tool = object.get("name").textValue();
        boolean offered = request.tools().stream().anyMatch(t -> t.name().equals(tool))
                || (request.offerRespondDirectly() && tool.equals(ToolDefinition.RESPOND_DIRECTLY));
        if (!offered) {
            throw invalid("it calls '" + tool + "', which is not offered in this step", content);
        }
        JsonNode arguments = object.get("arguments");
        ObjectNode args = arguments == null || arguments.isNull() ? Json.object() : asObject(arguments, tool);
        return new ToolCall(ToolCall.newId(), tool, args);
    }

    private static AgentException invalid(String why, String content) {
        return new AgentException(
                ErrorCode.GENERATION_FAILED,
                "The model's output is not a valid tool call (" + why + "): " + Failures.shorten(content));
    }

    /**
     * Forwards answer text to the listener: as it arrives for steps that may answer, once at the end otherwise;
     * retracts it when the step turns out to call tools.
     */
    static final class TextSink implements Consumer<String> {
        private final ModelListener listener;
        private final boolean live;
        private boolean forwarded;

        TextSink(ModelListener listener, boolean live) {
            this.listener = listener;
            this.live = live;
        }

        @Override
        public void accept(String delta) {
            if (live && !delta.isEmpty()) {
                forwarded = true;
                listener.onText(delta);
            }
        }

        /** Takes back what was forwarded (the step is sent again). */
        void retract() {
            if (forwarded) {
                listener.onReset("");
                forwarded = false;
            }
        }

        /** Brings the listener in line with the step's outcome. */
        void finish(ModelResponse response, String content) {
            if (response instanceof ModelResponse.ToolCalls) {
                if (forwarded) {
                    listener.onReset("");
                }
            } else if (!forwarded && !content.isEmpty()) {
                listener.onText(content);
            }
        }
    }

    /**
     * Streams the answer inside an emulated step's {@code {"answer": …}}: text as deltas, structured values as partial
     * values. Nothing is shown while the JSON is a tool call.
     */
    static final class AnswerSink implements Consumer<String> {
        private final ModelListener listener;
        private final boolean structured;
        private final StringBuilder raw = new StringBuilder();
        private String shown = "";
        private boolean partials;

        AnswerSink(ModelListener listener, boolean structured) {
            this.listener = listener;
            this.structured = structured;
        }

        @Override
        public void accept(String delta) {
            raw.append(delta);
            JsonNode partial = PartialJson.parse(raw.toString());
            if (!(partial instanceof ObjectNode object) || object.has("name") || !object.has("answer")) {
                return;
            }
            JsonNode answer = object.get("answer");
            if (structured) {
                partials = true;
                listener.onPartial(answer);
            } else if (answer.isTextual()) {
                show(answer.textValue());
            }
        }

        private void show(String text) {
            if (text.equals(shown)) {
                return;
            }
            if (text.startsWith(shown)) {
                listener.onText(text.substring(shown.length()));
            } else {
                listener.onReset(text);
            }
            shown = text;
        }

        /** Takes back what was shown (the step is sent again). */
        void retract() {
            if (!shown.isEmpty() || partials) {
                listener.onReset("");
                shown = "";
                partials = false;
            }
        }

        void finish(ModelResponse response) {
            if (response instanceof ModelResponse.Answer answer && !structured) {
                show(answer.text());
            } else if (response instanceof ModelResponse.ToolCalls && !shown.isEmpty()) {
                listener.onReset("");
            }
        }
    }
}
