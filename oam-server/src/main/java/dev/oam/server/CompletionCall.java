package dev.oam.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.agent.RetryPolicy;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;

/**
 * One Chat Completions request against one model: exactly one model step, because every tool the request declares is
 * the client's (a call ends the request with {@code finish_reason: "tool_calls"}; the client runs it and sends the
 * whole history again). An answer that breaks its schema, or a call to a tool the step did not offer, is generated once
 * more when the model allows it.
 */
final class CompletionCall {
    /** Why generation was stopped from outside the model. */
    enum Interruption {
        NONE,
        CUT,
        TIMEOUT,
        CLIENT_GONE
    }

    static final String JSON_OBJECT_INSTRUCTION =
            "Answer with a single JSON object and nothing else: no prose, no code fences.";
    private static final int MAX_ATTEMPTS = 2;

    /**
     * @param content the answer text ({@code null} for a pure tool-call or refusal answer)
     * @param finishReason {@code stop}, {@code length} or {@code tool_calls}
     */
    record Result(
            @Nullable String content,
            @Nullable String refusal,
            List<ToolCall> toolCalls,
            String finishReason,
            Usage usage) {
        Result {
            toolCalls = List.copyOf(toolCalls);
        }
    }

    /** Receives what the client may see while the step runs: answer text, in order. */
    interface Stream {
        Stream NONE = delta -> {};

        void text(String delta);
    }

    private final ChatRequest request;
    private final LanguageModel model;
    private final CancellationToken token;
    private final AtomicReference<Interruption> interruption = new AtomicReference<>(Interruption.NONE);

    CompletionCall(ChatRequest request, LanguageModel model, CancellationToken token) {
        this.request = request;
        this.model = model;
        this.token = token;
    }

    /** Stops generation for {@code why}; the first reason wins. */
    void interrupt(Interruption why) {
        if (interruption.compareAndSet(Interruption.NONE, why)) {
            token.cancel();
        }
    }

    Interruption interruption() {
        return interruption.get();
    }

    /** The step's tools and mode under {@code tool_choice} and {@code allowed_tools}. */
    record Plan(ToolCallingMode mode, List<ToolDefinition> tools) {}

    static Plan plan(ChatRequest request) {
        List<ToolDefinition> enabled = request.tools();
        if (request.enabledTools() != null) {
            Set<String> allowed = new HashSet<>(request.enabledTools());
            enabled = enabled.stream()
                    .filter(tool -> allowed.contains(tool.name()))
                    .toList();
        }
        ToolChoice choice = request.toolChoice();
        ToolCallingMode mode = switch (choice) {
            case ToolChoice.None none -> ToolCallingMode.DISALLOWED;
            case ToolChoice.Required required -> ToolCallingMode.REQUIRED;
            case ToolChoice.Named named -> {
                enabled = request.tools().stream()
                        .filter(tool -> tool.name().equals(named.tool()))
                        .toList();
                yield ToolCallingMode.REQUIRED;
            }
            default -> ToolCallingMode.ALLOWED;
        };
        if (enabled.isEmpty() || mode == ToolCallingMode.DISALLOWED) {
            return new Plan(ToolCallingMode.DISALLOWED, List.of());
        }
        return new Plan(mode, enabled);
    }

    /** Input tokens of the step as the model counts them. */
    static int inputTokens(
            LanguageModel model,
            @Nullable String instructions,
            List<TranscriptEntry> entries,
            List<ToolDefinition> tools,
            @Nullable GenerationSchema schema) {
        int total = instructions == null ? 0 : model.countTokens(instructions);
        for (TranscriptEntry entry : entries) {
            total += model.countTokens(entry);
        }
        for (ToolDefinition tool : tools) {
            total += model.countTokens(tool.name()
                    + (tool.description() == null ? "" : tool.description())
                    + Json.write(tool.schema().json()));
        }
        if (schema != null) {
            total += model.countTokens(Json.write(schema.json()));
        }
        return total;
    }

    /**
     * Runs the step. Streamed text reaches {@code stream} as the model produces it (structured formats are not
     * streamed: their text is only final once validated).
     *
     * @throws ApiError for every failure the client is told about, including a timeout
     * @throws ClientGone when the client went away (nobody is left to answer)
     */
    Result run(Stream stream) throws ApiError, ClientGone {
        ChatRequest.Format format = request.format();
        GenerationSchema schema = format instanceof ChatRequest.Format.JsonSchema js ? js.generationSchema() : null;
        boolean structured = !(format instanceof ChatRequest.Format.Text);
        String instructions = request.instructions();
        if (format instanceof ChatRequest.Format.JsonObject) {
            instructions =
                    instructions == null ? JSON_OBJECT_INSTRUCTION : instructions + "\n\n" + JSON_OBJECT_INSTRUCTION;
        }
        Plan plan = plan(request);
        int input = inputTokens(model, instructions, request.entries(), plan.tools(), schema);
        int reserved = request.maxTokens() == null ? 0 : request.maxTokens();
        if (input + reserved > model.contextSize()) {
            throw ApiError.invalid(
                    "messages",
                    "context_length_exceeded",
                    "This model's maximum context length is "
                            + model.contextSize() + " tokens. However, your messages resulted in " + input + " tokens"
                            + (reserved > 0 ? " and max_tokens asks for " + reserved + " more" : "")
                            + ". Please reduce the length of the messages.");
        }
        GenerationOptions options =
                new GenerationOptions(request.temperature(), request.maxTokens(), request.sampling());
        ModelRequest step = new ModelRequest(
                instructions, null, request.entries(), plan.tools(), plan.mode(), false, schema, options, input);
        for (int attempt = 1; ; attempt++) {
            // Structured answers go out whole; text is gated by stop and max_tokens and streamed as it passes.
            TextGate gate = new TextGate(
                    structured ? List.of() : request.stop(),
                    structured ? null : request.maxTokens(),
                    model,
                    structured ? delta -> {} : stream::text,
                    () -> interrupt(Interruption.CUT));
            ModelListener listener = new ModelListener() {
                @Override
                public void onText(String delta) {
                    gate.append(delta);
                }

                @Override
                public void onReset(String text) {
                    gate.reset(text);
                }
            };
            ModelResponse response;
            try {
                response = model.respond(attempt == 1 ? step : step.withAttempt(attempt), listener, token);
            } catch (AgentException e) {
                switch (interruption.get()) {
                    case CUT -> {
                        return answered(gate, null, new Usage(input, 0, model.countTokens(gate.text())));
                    }
                    case TIMEOUT -> throw ApiError.timeout("The request took longer than the server's timeout.");
                    case CLIENT_GONE -> throw new ClientGone();
                    case NONE -> {}
                }
                if (e.code() == ErrorCode.REFUSAL) {
                    return new Result(null, e.getMessage(), List.of(), "stop", new Usage(input, 0, 0));
                }
                if (RetryPolicy.retriesFailure(e, attempt, MAX_ATTEMPTS, gate.sawText())) {
                    backOff(attempt);
                    continue;
                }
                throw ApiError.fromModel(e);
            } catch (RuntimeException e) {
                if (interruption.get() == Interruption.CLIENT_GONE) {
                    throw new ClientGone();
                }
                dev.oam.core.Log.error("the model failed", e);
                throw ApiError.internal("The model failed: " + e.getClass().getSimpleName());
            }
            switch (interruption.get()) {
                case TIMEOUT -> throw ApiError.timeout("The request took longer than the server's timeout.");
                case CLIENT_GONE -> throw new ClientGone();
                default -> {}
            }
            // Text the client has seen cannot be taken back, so an attempt that streamed some is never asked again.
            boolean mayRetry = RetryPolicy.retriesInvalidOutput(model, attempt, MAX_ATTEMPTS, gate.sawText());
            switch (response) {
                case ModelResponse.ToolCalls calls -> {
                    String problem = badCalls(calls.calls(), plan);
                    if (problem != null) {
                        if (mayRetry) {
                            continue;
                        }
                        throw new ApiError(500, ApiError.SERVER, null, "generation_failed", problem);
                    }
                    List<ToolCall> returned = request.parallelToolCalls()
                            ? calls.calls()
                            : calls.calls().subList(0, 1);
                    List<ToolCall> withIds = new ArrayList<>();
                    for (ToolCall call : returned) {
                        withIds.add(
                                call.id() == null || call.id().isBlank()
                                        ? new ToolCall(ToolCall.newId(), call.name(), call.arguments())
                                        : call);
                    }
                    String text = gate.text();
                    return new Result(text.isEmpty() ? null : text, null, withIds, "tool_calls", calls.usage());
                }
                case ModelResponse.Answer answer -> {
                    if (format instanceof ChatRequest.Format.JsonSchema js) {
                        String problem = RetryPolicy.violation(answer, js.generationSchema());
                        if (problem != null) {
                            if (mayRetry) {
                                continue;
                            }
                            throw new ApiError(500, ApiError.SERVER, null, "generation_failed", problem);
                        }
                        JsonNode value = answer.structured() != null ? answer.structured() : parsed(answer.text());
                        String text = Json.write(js.generationSchema().reorder(value));
                        stream.text(text);
                        return new Result(text, null, List.of(), finishReason(answer.usage(), false), answer.usage());
                    }
                    if (format instanceof ChatRequest.Format.JsonObject) {
                        JsonNode value = JsonObjects.extract(answer.text());
                        if (value == null) {
                            if (mayRetry) {
                                continue;
                            }
                            throw new ApiError(
                                    500,
                                    ApiError.SERVER,
                                    null,
                                    "invalid_json_output",
                                    "The model did not answer with a JSON object.");
                        }
                        String text = Json.write(value);
                        stream.text(text);
                        return new Result(text, null, List.of(), finishReason(answer.usage(), false), answer.usage());
                    }
                    gate.finish(answer.text());
                    return answered(gate, answer, answer.usage());
                }
            }
        }
    }

    /** Waits before asking again after failed attempt {@code attempt}, as the agent loop does ({@link RetryPolicy}). */
    private void backOff(int attempt) throws ApiError, ClientGone {
        try {
            token.sleep(RetryPolicy.backoffMillis(attempt));
        } catch (AgentException e) {
            switch (interruption.get()) {
                case TIMEOUT -> throw ApiError.timeout("The request took longer than the server's timeout.");
                case CLIENT_GONE -> throw new ClientGone();
                default -> throw ApiError.fromModel(e);
            }
        }
    }

    /** An answer's text as JSON, once {@link RetryPolicy#violation} found it is. */
    private static JsonNode parsed(String text) {
        try {
            return Json.parse(text.strip());
        } catch (Exception e) {
            throw new IllegalStateException("a validated answer must be JSON", e);
        }
    }

    private Result answered(TextGate gate, ModelResponse.@Nullable Answer answer, Usage usage) {
        boolean length = gate.cut() == TextGate.Cut.LENGTH;
        if (gate.cut() != TextGate.Cut.NONE) {
            usage = new Usage(
                    usage.inputTokens(),
                    usage.cachedInputTokens(),
                    Math.min(
                            usage.outputTokens() == 0 ? Integer.MAX_VALUE : usage.outputTokens(),
                            model.countTokens(gate.text())));
        }
        return new Result(
                gate.text(),
                null,
                List.of(),
                length ? "length" : finishReason(usage, gate.cut() == TextGate.Cut.STOP),
                usage);
    }

    /** {@code length} when the model used up {@code max_tokens} (models that stop on their own at the limit). */
    private String finishReason(Usage usage, boolean stopped) {
        if (!stopped && request.maxTokens() != null && usage.outputTokens() >= request.maxTokens()) {
            return "length";
        }
        return "stop";
    }

    /** Why the calls cannot go to the client, or {@code null}. */
    private static @Nullable String badCalls(List<ToolCall> calls, Plan plan) {
        if (plan.mode() == ToolCallingMode.DISALLOWED) {
            return "The model called a tool although tools were disabled for this request.";
        }
        for (ToolCall call : calls) {
            ToolDefinition tool = plan.tools().stream()
                    .filter(t -> t.name().equals(call.name()))
                    .findFirst()
                    .orElse(null);
            if (tool == null) {
                return "The model called '" + call.name() + "', which is not among the tools offered.";
            }
            var violation = tool.schema().firstViolation(call.arguments());
            if (violation.isPresent()) {
                return "The model called '" + call.name() + "' with arguments that do not match its parameters: "
                        + violation.get();
            }
        }
        return null;
    }

    /** The client disconnected; the request is dropped without an answer. */
    static final class ClientGone extends Exception {
        ClientGone() {
            super("client gone", null, false, false);
        }
    }
}
