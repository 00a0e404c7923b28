package dev.oam.bridge.client;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A tool the model may call, answered in-process by {@link #handler()} (on a virtual thread of its own).
 *
 * @param parametersSchema the JSON Schema of the arguments, as JSON text ({@code {"type":"object",...}})
 * @param timeout how long a call may take before the model is told it timed out; {@code null} for the default
 */
public record ClientTool(String name, @Nullable String description, String parametersSchema, @Nullable Duration timeout,
        Handler handler) {
    /** Answers a call: the returned text is the tool's output; a thrown exception's message is an error output. */
    @FunctionalInterface
    public interface Handler {
        String call(ToolInvocation invocation) throws Exception;
    }

    public ClientTool {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(parametersSchema, "parametersSchema");
        Objects.requireNonNull(handler, "handler");
    }

    /** A tool taking the arguments {@code parametersSchema} describes. */
    public static ClientTool of(String name, String description, String parametersSchema, Handler handler) {
        return new ClientTool(name, description, parametersSchema, null, handler);
    }

    /** A tool without arguments. */
    public static ClientTool of(String name, String description, Handler handler) {
        return of(name, description, "{\"type\":\"object\",\"properties\":{}}", handler);
    }
}
