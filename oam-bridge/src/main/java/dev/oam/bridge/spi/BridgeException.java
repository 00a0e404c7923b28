package dev.oam.bridge.spi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A protocol error: it becomes an error response {@code {code, message, data: {code, …}}}. Custom codes (-32057…-32099)
 * come with their own {@code data.code} string.
 */
public final class BridgeException extends Exception {
    private final int code;
    private final String dataCode;
    private final ObjectNode data;
    private final @Nullable String member;
    private final String problem;

    public BridgeException(int code, String dataCode, String message, ObjectNode data) {
        this(code, dataCode, message, data, null, message);
    }

    private BridgeException(
            int code, String dataCode, String message, ObjectNode data, @Nullable String member, String problem) {
        super(message, null, false, false);
        this.code = code;
        this.dataCode = dataCode;
        this.data = data.deepCopy();
        this.member = member;
        this.problem = problem;
    }

    public BridgeException(ErrorCode code, String message) {
        this(code.code(), code.dataCode(), message, Json.object());
    }

    public BridgeException(ErrorCode code, String message, ObjectNode data) {
        this(code.code(), code.dataCode(), message, data);
    }

    public static BridgeException invalidParams(String message) {
        return new BridgeException(ErrorCode.INVALID_PARAMS, message);
    }

    /**
     * {@code -32602} about one member: the wire message is {@code Parameter '<member>'<problem>}, and
     * {@link #shortMessage()} is {@code '<member>'<problem>} for hosts that report it in their own words (the CLI).
     *
     * @param problem what is wrong, starting with the character that follows the quoted name (" must be a string.")
     */
    public static BridgeException invalidParameter(String member, String problem) {
        return new BridgeException(
                ErrorCode.INVALID_PARAMS.code(),
                ErrorCode.INVALID_PARAMS.dataCode(),
                "Parameter '" + member + "'" + problem,
                Json.object(),
                member,
                problem);
    }

    /** {@code -32602} for a required member that is absent: {@code Missing required parameter '<member>'.} */
    public static BridgeException missingParameter(String member) {
        return new BridgeException(
                ErrorCode.INVALID_PARAMS.code(),
                ErrorCode.INVALID_PARAMS.dataCode(),
                "Missing required parameter '" + member + "'.",
                Json.object(),
                member,
                " is missing.");
    }

    /** The member an {@link #invalidParameter}/{@link #missingParameter} error is about, if it is one. */
    public Optional<String> member() {
        return Optional.ofNullable(member);
    }

    /** The message without the wire's "Parameter" wording: {@code '<member>'<problem>}, or the message itself. */
    public String shortMessage() {
        return member != null ? "'" + member + "'" + problem : getMessage();
    }

    public static BridgeException of(ErrorCode code, String message, String key, JsonNode value) {
        ObjectNode data = Json.object();
        data.set(key, value);
        return new BridgeException(code, message, data);
    }

    public static BridgeException from(AgentException e) {
        return new BridgeException(e.code(), e.getMessage(), e.data());
    }

    /**
     * What a handler's failure is answered with: a protocol error as it is, an agent's error by its code, anything else
     * an internal error whose details go to the log, never into the response.
     */
    public static BridgeException wrap(Throwable e) {
        if (e instanceof BridgeException bridge) {
            return bridge;
        }
        if (e instanceof AgentException agent) {
            return from(agent);
        }
        Log.error("internal error", e);
        return new BridgeException(
                ErrorCode.INTERNAL_ERROR,
                "Internal error (" + e.getClass().getSimpleName()
                        + "); please report it. Details are in the bridge's log.");
    }

    /** The exception an error response's {@code error} object stands for (for in-process callers). */
    public static BridgeException fromJson(JsonNode error) {
        ObjectNode data = error.path("data").isObject() ? (ObjectNode) error.get("data") : Json.object();
        return new BridgeException(
                error.path("code").asInt(),
                data.path("code").asText("internal_error"),
                error.path("message").asText(),
                data);
    }

    public int code() {
        return code;
    }

    public String dataCode() {
        return dataCode;
    }

    /** The error object of the response. */
    public ObjectNode toJson() {
        ObjectNode error = Json.object();
        error.put("code", code);
        error.put("message", getMessage());
        ObjectNode fullData = Json.object();
        fullData.put("code", dataCode);
        data.properties().forEach(e -> {
            if (!e.getKey().equals("code")) {
                fullData.set(e.getKey(), e.getValue());
            }
        });
        error.set("data", fullData);
        return error;
    }
}
