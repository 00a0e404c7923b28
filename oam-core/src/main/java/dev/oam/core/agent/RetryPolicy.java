package dev.oam.core.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import org.jspecify.annotations.Nullable;

/**
 * One model step, asked again where that may help, within the options' {@code maxAttempts}:
 *
 * <ul>
 *   <li>a structured answer that does not fit the accepted schema is generated again only by a model that
 *       {@linkplain LanguageModel#retriesInvalidOutput() retries invalid output} (others fail at once with
 *       {@code invalid_output});
 *   <li>a retryable failure ({@code generation_failed}) is tried again after a backoff (300 ms, doubling), but never
 *       once a tool of the turn has run and never for invalid output;
 *   <li>cancellation wins over everything: a failure seen after the token was cancelled becomes {@code cancelled}.
 * </ul>
 *
 * The usage of the attempts asked again is added to the usage of the response (or of the failure), so a turn reports
 * what it really consumed. Each attempt streams through a fresh {@link StreamAccumulator}; an attempt asked again after
 * text was streamed first resets the text.
 *
 * <p>The rules themselves ({@link #retriesFailure}, {@link #retriesInvalidOutput}, {@link #backoffMillis},
 * {@link #violation}) are public: a loop that cannot take back what an attempt already sent (the OpenAI-compatible
 * server, which streams text to its client) applies the same rules with its own notion of what is out.
 */
public final class RetryPolicy {
    static final long FIRST_BACKOFF_MS = 300;

    private final LanguageModel model;

    RetryPolicy(LanguageModel model) {
        this.model = model;
    }

    /** Generates {@code request}, whose answer must fit {@code accept}; {@code schema} shapes the streamed partials. */
    ModelResponse generate(
            ModelRequest request,
            CancellationToken token,
            TurnListener listener,
            int maxAttempts,
            boolean toolRan,
            @Nullable GenerationSchema schema,
            @Nullable GenerationSchema accept)
            throws AgentException {
        Usage retried = Usage.ZERO; // what the attempts asked again consumed
        for (int attempt = 1; ; attempt++) {
            StreamAccumulator text = new StreamAccumulator(listener, schema);
            try {
                ModelResponse response =
                        model.respond(attempt == 1 ? request : request.withAttempt(attempt), text, token);
                token.check();
                String violation = violation(response, accept);
                if (violation != null) {
                    if (!retriesInvalidOutput(model, attempt, maxAttempts, false)) {
                        throw AgentException.invalidOutput(violation).withUsage(response.usage());
                    }
                    retried = retried.plus(response.usage());
                    text.resetIfStreamed();
                    continue;
                }
                return plusUsage(response, retried);
            } catch (AgentException e) {
                if (token.isCancelled()) {
                    throw AgentException.cancelled().withUsage(retried.plus(e.usage()));
                }
                if (!retriesFailure(e, attempt, maxAttempts, toolRan)) {
                    throw e.withUsage(retried);
                }
                retried = retried.plus(e.usage());
                text.resetIfStreamed();
                token.sleep(backoffMillis(attempt));
            } catch (RuntimeException e) {
                if (token.isCancelled()) {
                    throw AgentException.cancelled();
                }
                throw e;
            }
        }
    }

    /**
     * Whether a failed attempt is tried again: a retryable failure ({@code generation_failed}) that is not invalid
     * output, with attempts left, when nothing the step did is already out ({@code committed}: a tool of the turn ran,
     * or text reached a client that cannot be told to forget it).
     */
    public static boolean retriesFailure(AgentException e, int attempt, int maxAttempts, boolean committed) {
        return e.isRetryable() && !e.isInvalidOutput() && !committed && attempt < maxAttempts;
    }

    /**
     * Whether an answer that does not fit is generated again: only by a model that
     * {@linkplain LanguageModel#retriesInvalidOutput() retries invalid output}, with attempts left, when nothing is
     * out.
     */
    public static boolean retriesInvalidOutput(LanguageModel model, int attempt, int maxAttempts, boolean committed) {
        return model.retriesInvalidOutput() && !committed && attempt < maxAttempts;
    }

    /** How long to wait before asking again after failed attempt {@code attempt} (1-based): 300 ms, doubling. */
    public static long backoffMillis(int attempt) {
        return FIRST_BACKOFF_MS << Math.min(attempt - 1, 16);
    }

    /** Why a structured answer is unusable, or {@code null} when it fits {@code schema} (or there is no schema). */
    public static @Nullable String violation(ModelResponse response, @Nullable GenerationSchema schema) {
        if (schema == null || !(response instanceof ModelResponse.Answer answer)) {
            return null;
        }
        JsonNode value = answer.structured();
        if (value == null) {
            try {
                value = Json.parse(answer.text().strip());
            } catch (Exception e) {
                return "The model's answer is not JSON for the requested schema.";
            }
        }
        return schema.firstViolation(value)
                .map(v -> "The model's answer does not match the schema: " + v)
                .orElse(null);
    }

    /** {@code response} with {@code extra} added to its usage. */
    private static ModelResponse plusUsage(ModelResponse response, Usage extra) {
        if (extra.equals(Usage.ZERO)) {
            return response;
        }
        return switch (response) {
            case ModelResponse.Answer a -> new ModelResponse.Answer(a.text(), a.structured(), extra.plus(a.usage()));
            case ModelResponse.ToolCalls c -> new ModelResponse.ToolCalls(c.calls(), extra.plus(c.usage()));
        };
    }
}
