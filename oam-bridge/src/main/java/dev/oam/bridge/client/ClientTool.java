package dev.oam.bridge.client;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * A tool the model may call, answered in-process by {@link #handler()} (on a virtual thread of its own).
 *
 * <p>A tool that must do its work on the game's own thread (a Minecraft server tick, an engine's main thread) is made
 * with {@link #async}: its handler hands the work to that thread and returns a {@link CompletionStage} at once, and the
 * output is sent when the stage completes, from the thread that completes it. No thread then waits for the game thread,
 * so a game thread that starts a turn and keeps ticking (polling the turn's future instead of joining it) never
 * deadlocks with its own tools.
 *
 * @param parametersSchema the JSON Schema of the arguments, as JSON text ({@code {"type":"object",...}})
 * @param timeout how long a call may take before the model is told it timed out; {@code null} for the default
 */
public record ClientTool(
        String name,
        @Nullable String description,
        String parametersSchema,
        @Nullable Duration timeout,
        AsyncHandler handler) {
    /** Answers a call: the returned text is the tool's output; a thrown exception's message is an error output. */
    @FunctionalInterface
    public interface Handler {
        String call(ToolInvocation invocation) throws Exception;
    }

    /**
     * Answers a call later: the stage's text is the tool's output; a stage completed exceptionally (or an exception
     * thrown here) is an error output with the exception's message.
     */
    @FunctionalInterface
    public interface AsyncHandler {
        CompletionStage<String> call(ToolInvocation invocation) throws Exception;
    }

    public ClientTool {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(parametersSchema, "parametersSchema");
        Objects.requireNonNull(handler, "handler");
    }

    /** A tool taking the arguments {@code parametersSchema} describes. */
    public static ClientTool of(String name, String description, String parametersSchema, Handler handler) {
        Objects.requireNonNull(handler, "handler");
        return new ClientTool(
                name,
                description,
                parametersSchema,
                null,
                invocation -> CompletableFuture.completedFuture(handler.call(invocation)));
    }

    /** A tool without arguments. */
    public static ClientTool of(String name, String description, Handler handler) {
        return of(name, description, NO_PARAMETERS, handler);
    }

    /** A tool answered when the stage its handler returns completes (see the class comment). */
    public static ClientTool async(String name, String description, String parametersSchema, AsyncHandler handler) {
        return new ClientTool(name, description, parametersSchema, null, handler);
    }

    /** A tool without arguments, answered when the stage its handler returns completes. */
    public static ClientTool async(String name, String description, AsyncHandler handler) {
        return async(name, description, NO_PARAMETERS, handler);
    }

    private static final String NO_PARAMETERS = "{\"type\":\"object\",\"properties\":{}}";
}
