package dev.oam.model.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * A model on an OpenAI-compatible Chat Completions server. Each step is one request whose tools, {@code tool_choice}
 * and {@code response_format} this class sets for that step (native), or whose tool calls come as schema-constrained
 * JSON (emulated); see {@link ToolCallMode}.
 *
 * <p>Thread safety: steps of different sessions run at once on their own threads; the availability cache is guarded by
 * {@code lock}, learned endpoint facts live in {@link Endpoint}.
 */
final class OpenAIModel implements LanguageModel {
    static final List<String> LANGUAGES = List.of("en");
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);
    /** Longest time {@link #availability()} (called on the dispatcher) waits for a probe. */
    static final Duration PROBE_WAIT = Duration.ofMillis(1500);

    private static final long AVAILABLE_FRESH_NANOS = Duration.ofSeconds(30).toNanos();
    private static final long UNAVAILABLE_FRESH_NANOS = Duration.ofSeconds(3).toNanos();

    private final Settings settings;
    private final Endpoint endpoint;
    private final Exchange exchange;
    private final Object lock = new Object();
    private final AtomicBoolean samplingWarned = new AtomicBoolean();
    private @Nullable ModelAvailability known; // guarded by lock
    private long knownAt; // guarded by lock
    private @Nullable CompletableFuture<ModelAvailability> probe; // guarded by lock
    /** For a system model configured without a name: the server's only model, once seen. */
    private volatile @Nullable String resolvedName;

    OpenAIModel(Settings settings, Endpoint endpoint, Exchange exchange) {
        this.settings = settings;
        this.endpoint = endpoint;
        this.exchange = exchange;
    }

    Settings settings() {
        return settings;
    }

    @Override
    public int contextSize() {
        return settings.contextSize();
    }

    @Override
    public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
            throws AgentException {
        token.check();
        String model = modelName();
        try {
            ModelResponse response = step(request, model, listener, token);
            reachable();
            return response;
        } catch (AgentException e) {
            if (e.code() == ErrorCode.MODEL_UNAVAILABLE) {
                remember(ModelAvailability.unavailable("model_not_ready", e.getMessage()));
            }
            throw e;
        }
    }

    private ModelResponse step(
            ModelRequest request, @Nullable String model, ModelListener listener, CancellationToken token)
            throws AgentException {
        if (request.mode() == ToolCallingMode.DISALLOWED || !emulates(request)) {
            try {
                ModelResponse response = nativeStep(request, model, listener, token);
                if (settings.toolCallMode() == ToolCallMode.AUTO
                        && request.mode() == ToolCallingMode.REQUIRED
                        && response instanceof ModelResponse.Answer) {
                    endpoint.learnIgnoresToolChoice();
                    return emulatedStep(request, model, listener, token, response.usage());
                }
                return response;
            } catch (ToolsRejected rejected) {
                endpoint.learnRejectsTools(rejected.getMessage());
                return emulatedStep(request, model, listener, token, Usage.ZERO);
            }
        }
        return emulatedStep(request, model, listener, token, Usage.ZERO);
    }

    /** Whether this step's tool calls are emulated. */
    boolean emulates(ModelRequest request) {
        if (request.mode() == ToolCallingMode.DISALLOWED) {
            return false;
        }
        return switch (settings.toolCallMode()) {
            case NATIVE -> false;
            case EMULATED -> true;
            case AUTO ->
                endpoint.rejectsTools()
                        || (request.mode() == ToolCallingMode.REQUIRED && endpoint.ignoresToolChoice())
                        // tools and a response_format in one request are where servers disagree most
                        || (request.mode() == ToolCallingMode.ALLOWED && request.schema() != null);
        };
    }

    /** Whether the history is sent as plain text (for servers whose tool messages cannot be trusted). */
    private boolean textHistory() {
        return settings.toolCallMode() == ToolCallMode.EMULATED
                || (settings.toolCallMode() == ToolCallMode.AUTO && endpoint.rejectsTools());
    }

    private ModelResponse nativeStep(
            ModelRequest request, @Nullable String model, ModelListener listener, CancellationToken token)
            throws AgentException, ToolsRejected {
        boolean hasTools = request.mode() != ToolCallingMode.DISALLOWED;
        boolean constrained = request.schema() != null && request.mode() != ToolCallingMode.REQUIRED;
        // A forced step whose tool_choice the server is trusted with (not auto, which emulates when it is ignored).
        boolean forcedNative =
                request.mode() == ToolCallingMode.REQUIRED && settings.toolCallMode() != ToolCallMode.AUTO;
        Usage spent = Usage.ZERO;
        while (true) {
            boolean stream = !(hasTools && endpoint.refusesStreamingWithTools());
            SchemaFormat format = endpoint.schemaFormat();
            boolean detecting = constrained && endpoint.detectsSchemaFormat();
            Outputs.TextSink sink =
                    new Outputs.TextSink(listener, stream && request.mode() != ToolCallingMode.REQUIRED);
            ObjectNode body =
                    ChatRequests.nativeBody(request, model, stream, textHistory(), format, endpoint.isLlamaCpp());
            CompletionAnswer completion;
            try {
                completion = exchange.chat(body, stream, sink, token);
            } catch (HttpFailure failure) {
                if (detecting
                        && refusesSchemaFormat(failure)
                        && endpoint.learnSchemaIgnored(format, "HTTP " + failure.status())) {
                    continue;
                }
                completion = fallback(failure, request, model, stream, hasTools, format, token);
            }
            learnServer(completion);
            warnIgnoredSampling(request);
            Usage usage = spent.plus(Outputs.usage(completion, request));
            Outputs.checkStopped(completion, usage);
            String content = completion.content.toString();
            // What had to be a call or JSON. A forced step's plain text under auto is not: the server ignored
            // tool_choice, and the step is emulated below (its length says nothing about the call it never began).
            boolean structured = !completion.calls.isEmpty()
                    || constrained
                    || forcedNative
                    || (hasTools && Outputs.looksStructured(content));
            Outputs.checkLength(completion, request, structured, usage);
            if (detecting
                    && completion.calls.isEmpty()
                    && !judgeSchemaFormat(format, completion, ChatRequests.constraint(body))) {
                sink.retract();
                spent = usage;
                continue;
            }
            if (completion.calls.isEmpty() && forcedNative) {
                // native: the server was trusted with tool_choice and answered without a call
                ModelResponse call = Outputs.callInText(content, request, usage);
                if (call == null) {
                    throw forcedWithoutCall(content, usage);
                }
                Log.debug(endpoint + " wrote a forced step's call as text; it is taken as the call");
                sink.finish(call, content);
                return call;
            }
            ModelResponse response = completion.calls.isEmpty()
                    ? new ModelResponse.Answer(
                            content, request.schema() == null ? null : Outputs.lenientJson(content), usage)
                    : new ModelResponse.ToolCalls(Outputs.allowed(Outputs.calls(completion), request), usage);
            if (!(response instanceof ModelResponse.Answer
                    && settings.toolCallMode() == ToolCallMode.AUTO
                    && request.mode() == ToolCallingMode.REQUIRED)) {
                sink.finish(response, content);
            }
            return response;
        }
    }

    /**
     * A forced step ({@code tool_choice} required or named) that the server answered with text or an empty message in
     * {@code native} mode: never an answer where a call was forced, but a retryable {@code generation_failed} (the
     * agent asks again within {@code maxAttempts}), named in a warning once per endpoint.
     */
    private AgentException forcedWithoutCall(String content, Usage usage) {
        String what = content.isBlank()
                ? "an empty message"
                : "text (\"" + Failures.shorten(settings.apiKey().redact(content.strip())) + "\")";
        endpoint.warnForcedWithoutCall(what);
        return new AgentException(
                        ErrorCode.GENERATION_FAILED,
                        "The model server at " + settings.displayUrl()
                                + " answered a step that had to call a tool with "
                                + what + " instead of a call. toolCallMode native trusts the server's tool_choice; "
                                + "toolCallMode auto (the default) emulates forced calls on a server that ignores it.")
                .withUsage(usage);
    }

    /**
     * Whether the step's output (sent with the unverified {@code format}) stands: it validated against the schema sent
     * (the format is then verified for the endpoint), or it was cut short, or every format has been tried.
     * {@code false}: the server ignored the format, and the step is sent again in the next one.
     */
    private boolean judgeSchemaFormat(SchemaFormat format, CompletionAnswer completion, @Nullable JsonNode schema) {
        if (schema == null || "length".equals(completion.finishReason)) {
            return true; // a cut-short answer says nothing about the constraint
        }
        String violation = Outputs.violation(completion.content.toString(), schema);
        if (violation == null) {
            endpoint.learnSchemaHonoured(format);
            return true;
        }
        return !endpoint.learnSchemaIgnored(format, violation);
    }

    /** A 400/422 that is about the way the schema was sent (an unknown member, a format it does not take). */
    private static boolean refusesSchemaFormat(HttpFailure failure) {
        if (failure.status() != 400 && failure.status() != 422) {
            return false;
        }
        for (String word : List.of(
                "response_format",
                "json_schema",
                "json_object",
                "guided",
                "format",
                "schema",
                "unrecognized",
                "unknown",
                "extra")) {
            if (failure.mentions(word)) {
                return true;
            }
        }
        return false;
    }

    /** A failed native request: retried without streaming, or handed to emulation, or mapped to a protocol error. */
    private CompletionAnswer fallback(
            HttpFailure failure,
            ModelRequest request,
            @Nullable String model,
            boolean stream,
            boolean hasTools,
            SchemaFormat format,
            CancellationToken token)
            throws AgentException, ToolsRejected {
        if (Failures.isFinal(failure) || failure.status() < 400) {
            throw Failures.map(failure, settings);
        }
        HttpFailure last = failure;
        boolean aboutToolsOnly = failure.mentions("tool") && !failure.mentions("stream");
        if (stream && hasTools && !aboutToolsOnly) {
            try {
                CompletionAnswer completion = exchange.chat(
                        ChatRequests.nativeBody(request, model, false, textHistory(), format, endpoint.isLlamaCpp()),
                        false,
                        delta -> {},
                        token);
                endpoint.learnRefusesStreamingWithTools();
                return completion;
            } catch (HttpFailure second) {
                if (Failures.isFinal(second) || second.status() < 400) {
                    throw Failures.map(second, settings);
                }
                last = second;
            }
        }
        if (hasTools
                && settings.toolCallMode() == ToolCallMode.AUTO
                && last.mentions("tool")
                && (last.status() == 400 || last.status() == 422 || last.status() == 500 || last.status() == 501)) {
            throw new ToolsRejected("HTTP " + last.status() + ": "
                    + Failures.shorten(settings.apiKey().redact(last.getMessage())));
        }
        throw Failures.map(last, settings);
    }

    private ModelResponse emulatedStep(
            ModelRequest request, @Nullable String model, ModelListener listener, CancellationToken token, Usage before)
            throws AgentException {
        boolean mayAnswer = request.mode() == ToolCallingMode.ALLOWED;
        Usage spent = before;
        while (true) {
            SchemaFormat format = endpoint.schemaFormat();
            boolean detecting = endpoint.detectsSchemaFormat();
            Outputs.AnswerSink sink =
                    new Outputs.AnswerSink(mayAnswer ? listener : ModelListener.NONE, request.schema() != null);
            ObjectNode body =
                    ChatRequests.emulatedBody(request, model, true, textHistory(), format, endpoint.isLlamaCpp());
            CompletionAnswer completion;
            try {
                completion = exchange.chat(body, true, sink, token);
            } catch (HttpFailure failure) {
                if (detecting
                        && refusesSchemaFormat(failure)
                        && endpoint.learnSchemaIgnored(format, "HTTP " + failure.status())) {
                    continue;
                }
                throw Failures.map(failure, settings);
            }
            learnServer(completion);
            warnIgnoredSampling(request);
            Usage usage = spent.plus(Outputs.usage(completion, request));
            Outputs.checkStopped(completion, usage);
            Outputs.checkLength(completion, request, true, usage);
            if (detecting && !judgeSchemaFormat(format, completion, ChatRequests.constraint(body))) {
                sink.retract();
                spent = usage;
                continue;
            }
            ModelResponse response = Outputs.emulated(completion.content.toString(), request, usage);
            sink.finish(response);
            return response;
        }
    }

    /**
     * llama.cpp's server reports {@code timings} with every answer; from then on its prompts ask to reuse its cache.
     */
    private void learnServer(CompletionAnswer completion) {
        if (completion.timings) {
            endpoint.learnLlamaCpp("timings in its answers");
        }
    }

    /**
     * Says once, after the first answer, which sampler settings the server may have ignored: a server that has not
     * shown itself to be llama.cpp's (its {@code timings}, or {@code owned_by: llamacpp}) may not read llama.cpp's
     * names.
     */
    private void warnIgnoredSampling(ModelRequest request) {
        if (endpoint.isLlamaCpp() || samplingWarned.get()) {
            return;
        }
        List<String> names = ChatRequests.llamaOnly(request.options().sampling());
        if (!names.isEmpty() && samplingWarned.compareAndSet(false, true)) {
            Log.warning("The server of " + settings.baseUrl() + " has not shown itself to be llama-server (owned_by "
                    + "llamacpp in its model list, or timings in its answers), so these sampler settings were not "
                    + "sent: " + String.join(", ", names) + ". llama-server reads them all; the OpenAI API and "
                    + "Ollama's OpenAI endpoint read only top_p, presence_penalty, frequency_penalty and seed (and "
                    + "vLLM top_k and min_p, by its own parameters).");
        }
    }

    /** The server refused a request because of its tools (auto mode switches the endpoint to emulation). */
    private static final class ToolsRejected extends Exception {
        ToolsRejected(String message) {
            super(message, null, false, false);
        }
    }

    // ---- model name and availability ----

    /** The name sent as {@code model}; for a system model without one, the server's only model (or none). */
    private @Nullable String modelName() throws AgentException {
        if (settings.model() != null) {
            return settings.model();
        }
        String resolved = resolvedName;
        if (resolved != null) {
            return resolved;
        }
        ModelAvailability availability = awaitProbe(PROBE_TIMEOUT.plusSeconds(1));
        if (resolvedName != null) {
            return resolvedName;
        }
        if (availability != null && !availability.available()) {
            throw new AgentException(
                    ErrorCode.MODEL_UNAVAILABLE,
                    availability.message() == null
                            ? "The model server at " + settings.displayUrl() + " is not available."
                            : availability.message());
        }
        return null; // the server did not list its models: let it pick
    }

    /** The warning of a model-state save on a server. */
    static final String STATE_NOT_AVAILABLE = "The model's state cannot be saved with an OpenAI-compatible server: the"
            + " server keeps its own prompt cache; the conversation is read again after a load.";

    /** The server keeps its own prompt cache, which this protocol cannot save (issue 40): a warning, never silence. */
    @Override
    public dev.oam.core.model.ModelState.Saved saveState(
            dev.oam.core.model.@org.jspecify.annotations.Nullable ModelRequest lastStep, java.nio.file.Path file) {
        return dev.oam.core.model.ModelState.notSaved(STATE_NOT_AVAILABLE);
    }

    /**
     * Called on the dispatcher, so it never waits long: a fresh answer is returned as is, a stale one is returned while
     * a new probe runs in the background, and only the very first call waits (at most {@link #PROBE_WAIT}) for a probe.
     */
    @Override
    public ModelAvailability availability() {
        synchronized (lock) {
            if (known != null) {
                if (System.nanoTime() - knownAt
                        >= (known.available() ? AVAILABLE_FRESH_NANOS : UNAVAILABLE_FRESH_NANOS)) {
                    probeFuture();
                }
                return known;
            }
        }
        ModelAvailability probed = awaitProbe(PROBE_WAIT);
        if (probed != null) {
            return probed;
        }
        synchronized (lock) {
            return known != null
                    ? known
                    : ModelAvailability.unavailable(
                            "model_not_ready",
                            "Waiting for the model server at " + settings.displayUrl() + " to answer.");
        }
    }

    /** Starts a probe in the background (the system model does so when it is configured). */
    void startProbe() {
        probeFuture();
    }

    /** Waits up to {@code wait} for a probe (the running one, or a new one); {@code null} when it takes longer. */
    @Nullable
    ModelAvailability probe(Duration wait) {
        return awaitProbe(wait);
    }

    private @Nullable ModelAvailability awaitProbe(Duration wait) {
        try {
            return probeFuture().get(wait.toNanos(), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (ExecutionException e) {
            return ModelAvailability.unavailable("unknown", "Checking the model server failed: " + e.getCause());
        }
    }

    private CompletableFuture<ModelAvailability> probeFuture() {
        synchronized (lock) {
            if (probe == null) {
                CompletableFuture<ModelAvailability> started = exchange.get("/models", PROBE_TIMEOUT)
                        .handle(this::evaluate)
                        .whenComplete((availability, error) -> {
                            synchronized (lock) {
                                probe = null;
                            }
                            if (availability != null) {
                                remember(availability);
                            }
                        });
                if (probe == null && !started.isDone()) {
                    probe = started;
                }
                return started;
            }
            return probe;
        }
    }

    private ModelAvailability evaluate(@Nullable HttpResponse<String> response, @Nullable Throwable error) {
        if (error != null) {
            Throwable cause =
                    error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            if (cause instanceof java.net.http.HttpTimeoutException
                    && !(cause instanceof java.net.http.HttpConnectTimeoutException)) {
                return ModelAvailability.unavailable(
                        "model_not_ready",
                        "The model server at " + settings.displayUrl() + " did not answer within "
                                + PROBE_TIMEOUT.toSeconds() + " s.");
            }
            return ModelAvailability.unavailable(
                    "model_not_ready", exchange.connectionFailure(cause).getMessage());
        }
        int status = response.statusCode();
        if (status == 401 || status == 403) {
            return ModelAvailability.unavailable(
                    "model_not_ready",
                    Failures.map(Exchange.failure(status, response.headers(), response.body()), settings)
                            .getMessage());
        }
        String name = settings.model() != null ? settings.model() : resolvedName;
        if (status != 200) {
            // No model list here (or not now): the turns will tell.
            return ModelAvailability.ready(settings.contextSize(), name, LANGUAGES);
        }
        List<String> ids = new ArrayList<>();
        boolean llamaServer = false;
        try {
            for (JsonNode model : Json.parse(response.body()).path("data")) {
                if (model.path("id").isTextual()) {
                    ids.add(model.path("id").textValue());
                }
                llamaServer |= "llamacpp".equals(model.path("owned_by").asText());
            }
        } catch (java.io.IOException e) {
            return ModelAvailability.ready(settings.contextSize(), name, LANGUAGES);
        }
        if (llamaServer) {
            endpoint.learnLlamaCpp("owned_by llamacpp in its model list");
        }
        if (name == null) {
            if (ids.size() == 1) {
                resolvedName = ids.get(0);
                return ModelAvailability.ready(settings.contextSize(), ids.get(0), LANGUAGES);
            }
            if (ids.isEmpty()) {
                return ModelAvailability.ready(settings.contextSize(), null, LANGUAGES);
            }
            return ModelAvailability.unavailable(
                    "model_not_ready",
                    "No model name is configured (--model-name or "
                            + "OAM_MODEL_NAME) and the server at " + settings.displayUrl() + " has " + ids.size()
                            + " models: "
                            + Failures.shorten(String.join(", ", ids)) + ".");
        }
        String match = match(name, ids);
        if (match != null) {
            return ModelAvailability.ready(settings.contextSize(), match, LANGUAGES);
        }
        if (ids.isEmpty()) {
            return ModelAvailability.ready(settings.contextSize(), name, LANGUAGES);
        }
        if (llamaServer) {
            // llama-server serves its one model under any name
            return ModelAvailability.ready(settings.contextSize(), ids.get(0), LANGUAGES);
        }
        return ModelAvailability.unavailable(
                "model_not_ready",
                "The model server at " + settings.displayUrl()
                        + " does not have the model '" + name + "' (it has: " + Failures.shorten(String.join(", ", ids))
                        + "). Pull or load it, or fix the model name.");
    }

    /** The listed id for {@code name}: exact, or Ollama's implicit {@code :latest} tag. */
    static @Nullable String match(String name, List<String> ids) {
        for (String id : ids) {
            if (id.equals(name)) {
                return id;
            }
        }
        String bare = strip(name);
        for (String id : ids) {
            if (strip(id).equalsIgnoreCase(bare)) {
                return id;
            }
        }
        return null;
    }

    private static String strip(String id) {
        String lower = id.toLowerCase(Locale.ROOT);
        return lower.endsWith(":latest") ? lower.substring(0, lower.length() - ":latest".length()) : lower;
    }

    private void reachable() {
        synchronized (lock) {
            if (known == null || !known.available()) {
                String name = settings.model() != null ? settings.model() : resolvedName;
                known = ModelAvailability.ready(settings.contextSize(), name, LANGUAGES);
            }
            knownAt = System.nanoTime();
        }
    }

    private void remember(ModelAvailability availability) {
        synchronized (lock) {
            known = availability;
            knownAt = System.nanoTime();
        }
    }
}
