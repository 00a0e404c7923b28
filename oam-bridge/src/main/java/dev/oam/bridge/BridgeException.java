package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.agent.AgentException;
import dev.oam.core.json.Json;

/**
 * A protocol error: it becomes an error response {@code {code, message, data: {code, …}}}.
 * Custom codes (-32057…-32099) come with their own {@code data.code} string.
 */
public final class BridgeException extends Exception {
    private final int code;
    private final String dataCode;
    private final ObjectNode data;

    public BridgeException(int code, String dataCode, String message, ObjectNode data) {
        super(message, null, false, false);
        this.code = code;
        this.dataCode = dataCode;
        this.data = data.deepCopy();
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

    public static BridgeException of(ErrorCode code, String message, String key, JsonNode value) {
        ObjectNode data = Json.object();
        data.set(key, value);
        return new BridgeException(code, message, data);
    }

    public static BridgeException from(AgentException e) {
        return new BridgeException(e.code(), e.getMessage(), e.data());
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
