package dev.oam.core.testing;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.Agent;
import dev.oam.core.agent.TurnContext;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.agent.TurnRequest;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.ScriptedModel;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/** Small builders shared by the core tests. */
public final class Fixtures {
    private Fixtures() {}

    public static JsonNode json(String text) {
        try {
            return Json.parse(text);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static ObjectNode object(String text) {
        return (ObjectNode) json(text);
    }

    /** A scripted model from the JSON of a {@code model} value, e.g. {@code {"steps": [...]}}. */
    public static ScriptedModel scripted(String spec) {
        return ScriptedModel.fromJson(json(spec), "model");
    }

    public static ToolDefinition tool(String name) {
        return tool(name, null);
    }

    public static ToolDefinition tool(String name, @Nullable Duration timeout) {
        return new ToolDefinition(
                name,
                "The " + name + " tool.",
                object("{\"type\": \"object\", \"properties\": {\"gate\": {\"type\": \"string\"}}}"),
                timeout);
    }

    public static TurnContext context(CancellationToken token, TurnListener listener, ToolChannel tools) {
        return new TurnContext(token, listener, tools, TurnContext.CommitPoint.NONE);
    }

    public static TurnContext context(TurnListener listener, ToolChannel tools) {
        return context(CancellationToken.create(), listener, tools);
    }

    /** Runs one turn on a new daemon thread. */
    public static CompletableFuture<TurnResult> startTurn(Agent agent, TurnRequest request, TurnContext context) {
        CompletableFuture<TurnResult> result = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("test-turn").start(() -> {
            try {
                result.complete(agent.respond(request, context));
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        });
        return result;
    }

    /** Waits for a turn started with {@link #startTurn} to succeed. */
    public static TurnResult awaitResult(CompletableFuture<TurnResult> turn) throws Exception {
        try {
            return turn.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("the turn failed", e.getCause());
        }
    }

    /** Waits for a turn started with {@link #startTurn} to fail with an agent error, and returns it. */
    public static AgentException awaitFailure(CompletableFuture<TurnResult> turn, Duration within) throws Exception {
        try {
            TurnResult result = turn.get(within.toMillis(), TimeUnit.MILLISECONDS);
            throw new AssertionError("the turn succeeded with " + result);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof AgentException agent) {
                return agent;
            }
            throw new AssertionError("the turn failed with something else", e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("the turn did not finish within " + within);
        }
    }
}
