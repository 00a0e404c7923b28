package dev.oam.model.openai;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.net.http.HttpHeaders;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Server errors → protocol errors (docs/MODELS.md, "Errors"), with the server's message shortened and keys redacted.
 */
final class Failures {
    static final HttpHeaders NO_HEADERS = HttpHeaders.of(Map.of(), (a, b) -> true);
    /** Longest piece of a server's message quoted in an error. */
    static final int MAX_MESSAGE = 300;

    private static final Set<String> CONTEXT_CODES = Set.of(
            "context_length_exceeded",
            "exceed_context_size_error",
            "context_window_exceeded",
            "string_above_max_length");
    private static final Pattern CONTEXT_TEXT = Pattern.compile("(?i)(context[ _-]?(length|size|window)|maximum context"
            + "|too many tokens|prompt is too long|input is too long|exceeds? the (available )?context|num_ctx)");
    private static final Set<String> FILTER_CODES =
            Set.of("content_filter", "content_policy_violation", "content_filtered", "guardrail_violation");

    private Failures() {}

    static boolean isContextLength(HttpFailure failure) {
        return (failure.code() != null && CONTEXT_CODES.contains(failure.code()))
                || CONTEXT_TEXT.matcher(failure.getMessage()).find();
    }

    static boolean isContentFilter(HttpFailure failure) {
        return failure.code() != null && FILTER_CODES.contains(failure.code());
    }

    /** Whether this failure is about the request's content and would not change without it (no fallback helps). */
    static boolean isFinal(HttpFailure failure) {
        int status = failure.status();
        return status == 429
                || status == 401
                || status == 403
                || status == 404
                || status == 503
                || isContextLength(failure)
                || isContentFilter(failure);
    }

    static AgentException map(HttpFailure failure, Settings settings) {
        String message = shorten(settings.apiKey().redact(redactHeaders(failure.getMessage(), settings)));
        int status = failure.status();
        String where = "The model server at " + settings.displayUrl();
        String http = status == 0 ? "" : "HTTP " + status + ": ";
        if (status == 429) {
            return new AgentException(
                    ErrorCode.RATE_LIMITED,
                    where + " is rate limiting requests (" + http + message + ").",
                    retryAfter(failure.headers()));
        }
        if (status == 401 || status == 403) {
            return new AgentException(
                    ErrorCode.MODEL_UNAVAILABLE,
                    where + " refused the request (" + http + message + "). Check the API key in the host's "
                            + settings.apiKeyEnv() + ".");
        }
        if (isContextLength(failure)) {
            return new AgentException(
                    ErrorCode.CONTEXT_SIZE_EXCEEDED,
                    "The conversation does not fit the model's context on "
                            + "the server (" + http + message
                            + "). Set the model's contextSize to what the server serves, enable "
                            + "trimHistory, or use session/compact.");
        }
        if (isContentFilter(failure)) {
            return new AgentException(
                    ErrorCode.GUARDRAIL_VIOLATION, where + " blocked the content (" + http + message + ").");
        }
        if (status == 404) {
            boolean aboutModel = failure.mentions("model");
            return new AgentException(
                    ErrorCode.MODEL_UNAVAILABLE,
                    aboutModel
                            ? where + " does not have the model '" + settings.model() + "' (" + http + message
                                    + "). Pull or load it, " + "or fix the model name."
                            : where + " has no Chat Completions endpoint (" + http + message
                                    + "). Check that 'baseUrl' is the API root, " + "usually ending in /v1.");
        }
        if (status == 503) {
            return new AgentException(
                    ErrorCode.MODEL_UNAVAILABLE, where + " says the model is not ready (" + http + message + ").");
        }
        return new AgentException(
                ErrorCode.GENERATION_FAILED,
                status == 0 ? where + " reported an error: " + message : where + " answered " + http + message);
    }

    /**
     * {@code retryAfter} (ISO 8601 instant) and {@code retryAfterSeconds} from {@code Retry-After} /
     * {@code retry-after-ms}.
     */
    static ObjectNode retryAfter(HttpHeaders headers) {
        ObjectNode data = Json.object();
        retryAfterSeconds(headers, Instant.now()).ifPresent(seconds -> {
            Instant at = Instant.now()
                    .plusMillis(seconds.movePointRight(3).longValue())
                    .truncatedTo(ChronoUnit.SECONDS);
            data.put("retryAfter", DateTimeFormatter.ISO_INSTANT.format(at));
            data.put(
                    "retryAfterSeconds",
                    seconds.stripTrailingZeros().scale() <= 0 ? seconds.longValue() : seconds.doubleValue());
        });
        return data;
    }

    static Optional<BigDecimal> retryAfterSeconds(HttpHeaders headers, Instant now) {
        Optional<String> millis = headers.firstValue("retry-after-ms");
        if (millis.isPresent()) {
            try {
                BigDecimal value = new BigDecimal(millis.get().strip()).movePointLeft(3);
                if (value.signum() >= 0) {
                    return Optional.of(value.setScale(3, RoundingMode.UP).stripTrailingZeros());
                }
            } catch (NumberFormatException e) {
                // fall back to Retry-After
            }
        }
        Optional<String> header = headers.firstValue("retry-after");
        if (header.isEmpty()) {
            return Optional.empty();
        }
        String value = header.get().strip();
        try {
            BigDecimal seconds = new BigDecimal(value);
            return seconds.signum() < 0 ? Optional.empty() : Optional.of(seconds.stripTrailingZeros());
        } catch (NumberFormatException e) {
            // an HTTP date
        }
        try {
            Instant at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME)
                    .toInstant();
            long seconds = Math.max(0, Duration.between(now, at).toSeconds());
            return Optional.of(BigDecimal.valueOf(seconds));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    /** One line of at most {@link #MAX_MESSAGE} characters. */
    static String shorten(@Nullable String text) {
        if (text == null) {
            return "";
        }
        String line = text.replaceAll("\\s+", " ").strip();
        return line.length() <= MAX_MESSAGE ? line : line.substring(0, MAX_MESSAGE - 1) + "…";
    }

    /** Removes the values of the configured headers (they may carry tokens) from a server's text. */
    private static String redactHeaders(String text, Settings settings) {
        String out = text;
        for (String value : settings.headers().values()) {
            if (value.length() >= 8) {
                out = out.replace(value, "***");
            }
        }
        return out;
    }
}
