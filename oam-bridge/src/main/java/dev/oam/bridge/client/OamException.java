package dev.oam.bridge.client;

import dev.oam.core.ErrorCode;
import java.util.Optional;

/**
 * A request failed: the JSON-RPC error the wire would have answered, as an exception. {@link #code()} is the number
 * ({@code -32020}), {@link #dataCode()} the stable string ({@code "session_not_found"}).
 */
public final class OamException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int code;
    private final String dataCode;

    public OamException(int code, String dataCode, String message) {
        super(message);
        this.code = code;
        this.dataCode = dataCode;
    }

    public int code() {
        return code;
    }

    public String dataCode() {
        return dataCode;
    }

    /** The error as the core's enum, when it is one of the protocol's codes. */
    public Optional<ErrorCode> errorCode() {
        return ErrorCode.byDataCode(dataCode);
    }

    @Override
    public String toString() {
        return "OamException[" + code + " " + dataCode + "]: " + getMessage();
    }
}
