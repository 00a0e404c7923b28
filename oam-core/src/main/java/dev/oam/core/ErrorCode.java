package dev.oam.core;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** Every error code of the protocol with its stable {@code data.code} string. */
public enum ErrorCode {
    PARSE_ERROR(-32700, "parse_error"),
    INVALID_MESSAGE(-32600, "invalid_message"),
    METHOD_NOT_FOUND(-32601, "method_not_found"),
    INVALID_PARAMS(-32602, "invalid_params"),
    INTERNAL_ERROR(-32603, "internal_error"),
    MODEL_UNAVAILABLE(-32001, "model_unavailable"),
    GUARDRAIL_VIOLATION(-32002, "guardrail_violation"),
    REFUSAL(-32003, "refusal"),
    CONTEXT_SIZE_EXCEEDED(-32004, "context_size_exceeded"),
    RATE_LIMITED(-32005, "rate_limited"),
    UNSUPPORTED_LANGUAGE(-32006, "unsupported_language"),
    INVALID_SCHEMA(-32007, "invalid_schema"),
    TOOL_FAILED(-32008, "tool_failed"),
    CANCELLED(-32009, "cancelled"),
    BUSY(
            -32010,
            "busy"), // listed by the protocol (docs/PROTOCOL.md, "Errors"); turns are queued, so nothing produces it
    INVALID_REQUEST(-32011, "invalid_request"),
    GENERATION_FAILED(-32012, "generation_failed"),
    SESSION_NOT_FOUND(-32020, "session_not_found"),
    SESSION_EXISTS(-32021, "session_exists"),
    SESSION_LIMIT(-32022, "session_limit"),
    SHUT_DOWN(-32023, "shut_down"),
    TIMEOUT(-32024, "timeout"),
    NPC_NOT_FOUND(-32050, "npc_not_found"),
    NPC_EXISTS(-32051, "npc_exists"),
    WORLD_NOT_FOUND(-32052, "world_not_found"),
    WORLD_EXISTS(-32053, "world_exists"),
    WORLD_ERROR(-32054, "world_error"),
    LIMIT_REACHED(-32055, "limit_reached"),
    SUBSCRIPTION_NOT_FOUND(-32056, "subscription_not_found"),
    /** {@code model/pull} (this edition's extension) failed; {@code data.reason} says how (docs/PROTOCOL.md). */
    PULL_FAILED(-32060, "pull_failed");

    private static final Map<String, ErrorCode> BY_NAME = new HashMap<>();

    static {
        for (ErrorCode code : values()) {
            BY_NAME.put(code.dataCode, code);
        }
    }

    private final int code;
    private final String dataCode;

    ErrorCode(int code, String dataCode) {
        this.code = code;
        this.dataCode = dataCode;
    }

    /** The JSON-RPC numeric code. */
    public int code() {
        return code;
    }

    /** The stable string sent as {@code data.code}. */
    public String dataCode() {
        return dataCode;
    }

    /** True for the codes an agent turn (and so a scripted {@code error} step) can fail with. */
    public boolean isAgentError() {
        return code <= -32001 && code >= -32012;
    }

    public static Optional<ErrorCode> byDataCode(String dataCode) {
        return Optional.ofNullable(BY_NAME.get(dataCode));
    }
}
