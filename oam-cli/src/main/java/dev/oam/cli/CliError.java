package dev.oam.cli;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;

/**
 * A command failed: a stable code (the model-side codes of the protocol, or the command line's own {@code usage},
 * {@code invalid_input}, {@code io_error}, {@code missing_tool_output}) and the exit status it maps to (docs/CLI.md,
 * "Exit codes").
 */
final class CliError extends Exception {
    static final int OK = 0;
    static final int FAILURE = 1;
    static final int USAGE = 2;
    static final int UNAVAILABLE = 3;
    static final int REFUSED = 4;
    static final int CONTEXT = 5;
    static final int RATE_LIMITED = 6;
    static final int TOOL_CALLS = 10;
    static final int INTERRUPTED = 130;

    private final String code;
    private final int exit;

    CliError(String code, int exit, String message) {
        super(message, null, false, false);
        this.code = code;
        this.exit = exit;
    }

    static CliError usage(String message) {
        return new CliError("usage", USAGE, message);
    }

    static CliError invalidInput(String message) {
        return new CliError("invalid_input", USAGE, message);
    }

    static CliError io(String message) {
        return new CliError("io_error", FAILURE, message);
    }

    static CliError of(AgentException e) {
        return new CliError(e.code().dataCode(), exitFor(e.code()), e.getMessage());
    }

    /** The exit status of a model-side error code. */
    static int exitFor(ErrorCode code) {
        return switch (code) {
            case MODEL_UNAVAILABLE -> UNAVAILABLE;
            case GUARDRAIL_VIOLATION, REFUSAL -> REFUSED;
            case CONTEXT_SIZE_EXCEEDED -> CONTEXT;
            case RATE_LIMITED -> RATE_LIMITED;
            case INVALID_SCHEMA, INVALID_REQUEST, UNSUPPORTED_LANGUAGE, INVALID_PARAMS -> USAGE;
            case CANCELLED -> INTERRUPTED;
            default -> FAILURE;
        };
    }

    String code() {
        return code;
    }

    int exit() {
        return exit;
    }

    ObjectNode json() {
        ObjectNode root = Json.object();
        ObjectNode error = root.putObject("error");
        error.put("code", code);
        error.put("message", getMessage());
        return root;
    }
}
