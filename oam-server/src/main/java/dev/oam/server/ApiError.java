package dev.oam.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A request the server answers with an error: the HTTP status and OpenAI's envelope {@code {"error": {"message",
 * "type", "param", "code"}}}. Thrown anywhere before the response is committed; after that (a stream already started)
 * it becomes an SSE {@code data: {"error": …}} event.
 */
final class ApiError extends Exception {
    static final String INVALID_REQUEST = "invalid_request_error";
    static final String AUTHENTICATION = "authentication_error";
    static final String PERMISSION = "permission_error";
    static final String NOT_FOUND = "not_found_error";
    static final String RATE_LIMIT = "rate_limit_error";
    static final String SERVER = "server_error";

    private final int status;
    private final String type;
    private final @Nullable String param;
    private final String code;
    private final Map<String, String> headers;

    ApiError(
            int status, String type, @Nullable String param, String code, String message, Map<String, String> headers) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
        this.headers = Map.copyOf(headers);
    }

    ApiError(int status, String type, @Nullable String param, String code, String message) {
        this(status, type, param, code, message, Map.of());
    }

    /** 400 for a request field the server cannot use. */
    static ApiError invalid(@Nullable String param, String code, String message) {
        return new ApiError(400, INVALID_REQUEST, param, code, message);
    }

    static ApiError invalidValue(String param, String message) {
        return invalid(param, "invalid_value", message);
    }

    static ApiError modelNotFound(String model) {
        return new ApiError(
                404,
                INVALID_REQUEST,
                "model",
                "model_not_found",
                "The model '" + model + "' does not exist on this server; GET /v1/models lists the models it serves.");
    }

    static ApiError unavailable(String message) {
        return new ApiError(503, SERVER, null, "model_unavailable", message);
    }

    static ApiError timeout(String message) {
        return new ApiError(504, SERVER, null, "timeout", message);
    }

    static ApiError internal(String message) {
        return new ApiError(500, SERVER, null, "internal_error", message);
    }

    /** How a model failure reaches the client (the status table in docs/SERVER.md). */
    static ApiError fromModel(AgentException e) {
        ErrorCode code = e.code();
        String message = e.getMessage();
        return switch (code) {
            case CONTEXT_SIZE_EXCEEDED -> invalid("messages", "context_length_exceeded", message);
            case GUARDRAIL_VIOLATION -> invalid(null, "content_filter", message);
            case UNSUPPORTED_LANGUAGE -> invalid("messages", "unsupported_language", message);
            case INVALID_SCHEMA -> invalid("response_format", "invalid_schema", message);
            case INVALID_PARAMS, INVALID_REQUEST -> invalid(null, "invalid_request", message);
            case RATE_LIMITED ->
                new ApiError(429, RATE_LIMIT, null, "rate_limited", message, Map.of("Retry-After", "1"));
            case MODEL_UNAVAILABLE -> unavailable(message);
            case TIMEOUT -> timeout(message);
            default -> new ApiError(500, SERVER, null, code.dataCode(), message);
        };
    }

    int status() {
        return status;
    }

    String code() {
        return code;
    }

    String type() {
        return type;
    }

    @Nullable
    String param() {
        return param;
    }

    /** Extra response headers ({@code Retry-After}, {@code Allow}). */
    Map<String, String> headers() {
        return headers;
    }

    ObjectNode envelope() {
        return envelope(getMessage(), type, param, code);
    }

    static ObjectNode envelope(String message, String type, @Nullable String param, @Nullable String code) {
        ObjectNode error = Json.object();
        error.put("message", message);
        error.put("type", type);
        if (param == null) {
            error.putNull("param");
        } else {
            error.put("param", param);
        }
        if (code == null) {
            error.putNull("code");
        } else {
            error.put("code", code);
        }
        ObjectNode root = Json.object();
        root.set("error", error);
        return root;
    }
}
