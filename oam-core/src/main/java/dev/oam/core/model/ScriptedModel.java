package dev.oam.core.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A deterministic model that plays a script: each inference plays the next step, then the fallback. One instance is one
 * cursor, shared by every turn that uses the same {@code model} value.
 */
public final class ScriptedModel implements LanguageModel {
    /** The variable a host reads a script from ({@code oam stdio}, {@code oam serve}): it replaces the model. */
    public static final String SCRIPT_VARIABLE = "OAM_SCRIPT";

    public static final ScriptStep DEFAULT_FALLBACK = new ScriptStep.Text("(script exhausted)", 1, 0);
    private static final long MAX_DELAY_MS = 86_400_000L;

    private final List<ScriptStep> steps;
    private final ScriptStep fallback;
    private final AtomicInteger cursor = new AtomicInteger();

    public ScriptedModel(List<ScriptStep> steps, ScriptStep fallback) {
        this.steps = List.copyOf(steps);
        this.fallback = fallback;
    }

    /**
     * Reads {@code "scripted"} or {@code {"type": "scripted", "steps", "fallback"?}}.
     *
     * @param path the parameter's name for error messages, e.g. {@code model}
     * @throws IllegalArgumentException naming the bad field in single quotes
     */
    public static ScriptedModel fromJson(JsonNode spec, String path) {
        if (spec.isTextual()) {
            return new ScriptedModel(List.of(), DEFAULT_FALLBACK);
        }
        JsonNode stepsNode = spec.get("steps");
        List<ScriptStep> steps = new ArrayList<>();
        if (stepsNode != null && !stepsNode.isNull()) {
            if (!stepsNode.isArray()) {
                throw new IllegalArgumentException("Parameter '" + path + ".steps' must be an array of steps.");
            }
            for (int i = 0; i < stepsNode.size(); i++) {
                steps.add(parseStep(stepsNode.get(i), path + ".steps[" + i + "]"));
            }
        }
        JsonNode fallbackNode = spec.get("fallback");
        ScriptStep fallback = fallbackNode == null || fallbackNode.isNull()
                ? DEFAULT_FALLBACK
                : parseStep(fallbackNode, path + ".fallback");
        return new ScriptedModel(steps, fallback);
    }

    static ScriptStep parseStep(JsonNode node, String path) {
        if (!node.isObject()) {
            throw new IllegalArgumentException("Parameter '" + path + "' must be an object.");
        }
        long delay = 0;
        JsonNode delayNode = node.get("delayMs");
        if (delayNode != null && !delayNode.isNull()) {
            if (!delayNode.isNumber()
                    || delayNode.decimalValue().signum() < 0
                    || delayNode.decimalValue().compareTo(java.math.BigDecimal.valueOf(MAX_DELAY_MS)) > 0) {
                throw new IllegalArgumentException("Parameter '" + path
                        + ".delayMs' must be a number of milliseconds from 0 to " + MAX_DELAY_MS + ".");
            }
            delay = delayNode.decimalValue().longValue();
        }
        int chunks = 1;
        JsonNode chunksNode = node.get("chunks");
        if (chunksNode != null && !chunksNode.isNull()) {
            if (!chunksNode.isIntegralNumber() || !chunksNode.canConvertToInt() || chunksNode.intValue() < 1) {
                throw new IllegalArgumentException("Parameter '" + path + ".chunks' must be an integer ≥ 1.");
            }
            chunks = chunksNode.intValue();
        }
        if (present(node, "text")) {
            return new ScriptStep.Text(string(node, "text", path), chunks, delay);
        }
        if (present(node, "template")) {
            return new ScriptStep.Template(string(node, "template", path), chunks, delay);
        }
        if (node.has("json")) {
            return new ScriptStep.Json(node.get("json").deepCopy(), chunks, delay);
        }
        if (present(node, "toolCalls")) {
            JsonNode calls = node.get("toolCalls");
            if (!calls.isArray() || calls.isEmpty()) {
                throw new IllegalArgumentException(
                        "Parameter '" + path + ".toolCalls' must be a non-empty array of calls.");
            }
            List<ScriptStep.Call> parsed = new ArrayList<>();
            for (int i = 0; i < calls.size(); i++) {
                String callPath = path + ".toolCalls[" + i + "]";
                JsonNode call = calls.get(i);
                if (!call.isObject()) {
                    throw new IllegalArgumentException("Parameter '" + callPath + "' must be an object.");
                }
                String name = string(call, "name", callPath);
                JsonNode args = call.get("arguments");
                ObjectNode arguments;
                if (args == null || args.isNull()) {
                    arguments = Json.object();
                } else if (args.isObject()) {
                    arguments = (ObjectNode) args.deepCopy();
                } else {
                    throw new IllegalArgumentException("Parameter '" + callPath + ".arguments' must be an object.");
                }
                String id = present(call, "id") ? string(call, "id", callPath) : null;
                parsed.add(new ScriptStep.Call(name, arguments, id));
            }
            return new ScriptStep.ToolCalls(parsed, delay);
        }
        if (present(node, "error")) {
            String code = string(node, "error", path);
            ErrorCode errorCode = ErrorCode.byDataCode(code)
                    .filter(ErrorCode::isAgentError)
                    .orElseThrow(() -> new IllegalArgumentException(
                            "Parameter '" + path + ".error' must be an agent error code such as "
                                    + "\"guardrail_violation\" or \"generation_failed\", not \"" + code + "\"."));
            String message = present(node, "message") ? string(node, "message", path) : null;
            return new ScriptStep.Error(errorCode, message, delay);
        }
        throw new IllegalArgumentException(
                "Parameter '" + path + "' must have one of 'text', 'toolCalls', 'json', 'template' or 'error'.");
    }

    private static boolean present(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value != null && !value.isNull();
    }

    private static String string(JsonNode node, String field, String path) {
        JsonNode value = node.get(field);
        if (value == null || !value.isTextual()) {
            throw new IllegalArgumentException("Parameter '" + path + "." + field + "' must be a string.");
        }
        return value.textValue();
    }

    /** Steps not played yet (the fallback is not counted). */
    public int remainingSteps() {
        return Math.max(0, steps.size() - cursor.get());
    }

    /** A script is the model: an answer it gives is never replaced by another step's. */
    @Override
    public boolean retriesInvalidOutput() {
        return false;
    }

    @Override
    public ModelAvailability availability() {
        return ModelAvailability.ready(8192, "scripted", List.of());
    }

    /** A script has no state to save, and says nothing about it: a save is its JSON alone. */
    @Override
    public ModelState.Saved saveState(
            @org.jspecify.annotations.Nullable ModelRequest lastStep, java.nio.file.Path file) {
        return new ModelState.Saved(null, List.of());
    }

    /** Nothing to restore, and nothing to warn about: the script goes on from its JSON. */
    @Override
    public ModelState.Restored restoreState(
            com.fasterxml.jackson.databind.JsonNode reference, java.nio.file.Path file) {
        return new ModelState.Restored(0, List.of());
    }

    @Override
    public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
            throws AgentException {
        int index = cursor.getAndIncrement();
        ScriptStep step = index < steps.size() ? steps.get(index) : fallback;
        if (step.delayMs() > 0) {
            token.sleep(step.delayMs());
        }
        token.check();
        int input = request.estimatedInputTokens();
        return switch (step) {
            case ScriptStep.Text text -> answer(text.text(), text.chunks(), input, listener);
            case ScriptStep.Template template ->
                answer(fill(template.template(), request), template.chunks(), input, listener);
            case ScriptStep.Json json ->
                answer(
                        Json.write(json.value()),
                        json.chunks(),
                        input,
                        listener,
                        json.value().deepCopy());
            case ScriptStep.ToolCalls calls -> {
                List<ToolCall> out = new ArrayList<>();
                for (ScriptStep.Call call : calls.calls()) {
                    out.add(new ToolCall(
                            call.id() != null ? call.id() : ToolCall.newId(),
                            call.name(),
                            call.arguments().deepCopy()));
                }
                yield new ModelResponse.ToolCalls(
                        out,
                        new Usage(
                                input,
                                0,
                                Tokens.estimate(Json.write(Json.mapper()
                                        .valueToTree(out.stream()
                                                .map(c -> Map.of("name", c.name(), "arguments", c.arguments()))
                                                .toList())))));
            }
            // The prompt was read before the step failed, as a server reports for a blocked answer.
            case ScriptStep.Error error ->
                throw new AgentException(
                                error.code(),
                                error.message() != null
                                        ? error.message()
                                        : "Scripted failure: " + error.code().dataCode() + ".")
                        .withUsage(new Usage(input, 0, 0));
        };
    }

    private static ModelResponse answer(String text, int chunks, int input, ModelListener listener) {
        return answer(text, chunks, input, listener, parseJsonObjectOrNull(text));
    }

    private static ModelResponse answer(
            String text, int chunks, int input, ModelListener listener, JsonNode structured) {
        for (String piece : split(text, chunks)) {
            listener.onText(piece);
        }
        return new ModelResponse.Answer(text, structured, new Usage(input, 0, Tokens.estimate(text)));
    }

    private static JsonNode parseJsonObjectOrNull(String text) {
        String trimmed = text.strip();
        if (!(trimmed.startsWith("{") || trimmed.startsWith("["))) {
            return null;
        }
        try {
            return Json.parse(trimmed);
        } catch (Exception e) {
            return null;
        }
    }

    /** Splits into about {@code chunks} pieces at word boundaries where possible; never empty pieces. */
    static List<String> split(String text, int chunks) {
        if (text.isEmpty()) {
            return List.of();
        }
        if (chunks <= 1) {
            return List.of(text);
        }
        int target = Math.max(1, (int) Math.ceil(text.length() / (double) chunks));
        List<String> pieces = new ArrayList<>();
        int start = 0;
        while (start < text.length()) {
            int end = Math.min(text.length(), start + target);
            if (end < text.length()) {
                int space = text.lastIndexOf(' ', end);
                if (space > start) {
                    end = space;
                }
                if (Character.isHighSurrogate(text.charAt(end - 1))) {
                    end++;
                }
            }
            pieces.add(text.substring(start, end));
            start = end;
        }
        return pieces;
    }

    private static final java.util.regex.Pattern PLACEHOLDER =
            java.util.regex.Pattern.compile("\\{(prompt|toolOutputs|toolOutput)\\}");

    /** Substitutes the placeholders in one pass, so text they bring in is never expanded again. */
    static String fill(String template, ModelRequest request) {
        List<String> outputs = request.turnToolOutputs();
        String latest = outputs.isEmpty() ? "" : outputs.get(outputs.size() - 1);
        java.util.regex.Matcher matcher = PLACEHOLDER.matcher(template);
        StringBuilder out = new StringBuilder();
        while (matcher.find()) {
            String value = switch (matcher.group(1)) {
                case "prompt" -> request.prompt();
                case "toolOutputs" -> String.join("\n", outputs);
                default -> latest;
            };
            matcher.appendReplacement(out, java.util.regex.Matcher.quoteReplacement(value));
        }
        matcher.appendTail(out);
        return out.toString();
    }
}
