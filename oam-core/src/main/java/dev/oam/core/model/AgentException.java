package dev.oam.core.model;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import org.jspecify.annotations.Nullable;

/**
 * A turn failed with one of the agent error codes (-32001…-32012). Tool failures are not agent exceptions: they travel
 * back to the model as error outputs.
 */
public final class AgentException extends Exception {
    private final ErrorCode code;
    private final ObjectNode data;
    private boolean invalidOutput;
    private Usage usage = Usage.ZERO;

    public AgentException(ErrorCode code, String message) {
        this(code, message, null);
    }

    public AgentException(ErrorCode code, String message, @Nullable ObjectNode data) {
        super(message, null, false, false);
        this.code = code;
        this.data = data == null ? Json.object() : data;
    }

    /**
     * The model produced output that does not fit its schema ({@code -32012}); retried only when the model allows it.
     */
    public static AgentException invalidOutput(String message) {
        AgentException e = new AgentException(ErrorCode.GENERATION_FAILED, message);
        e.invalidOutput = true;
        return e;
    }

    public boolean isInvalidOutput() {
        return invalidOutput;
    }

    /**
     * The tokens the failed turn had consumed: its finished steps, attempts the agent asked again, and the failing step
     * itself when the model reported them (a blocked step's prompt was still read).
     */
    public Usage usage() {
        return usage;
    }

    /** Adds {@code spent} to {@link #usage()}; returns this exception, for {@code throw e.withUsage(…)}. */
    public AgentException withUsage(Usage spent) {
        usage = usage.plus(spent);
        return this;
    }

    public static AgentException cancelled() {
        return new AgentException(ErrorCode.CANCELLED, "The request was cancelled.");
    }

    public ErrorCode code() {
        return code;
    }

    /** Extra members for the error's {@code data} object (besides {@code code}). */
    public ObjectNode data() {
        return data;
    }

    /** Transient failures that {@code maxAttempts} may retry. */
    public boolean isRetryable() {
        return code == ErrorCode.GENERATION_FAILED;
    }
}
