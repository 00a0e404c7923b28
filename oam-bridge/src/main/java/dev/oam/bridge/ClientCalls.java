package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.Coding;
import dev.oam.bridge.spi.Methods;
import dev.oam.bridge.transport.DeliveryListener;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolReply;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Outstanding bridge-to-client requests ({@code tool/call}). Replies are applied the moment they arrive, bypassing
 * every queue; a reply to an id nobody waits for is ignored and logged.
 */
final class ClientCalls {
    private final BridgeEngine engine;
    private final AtomicLong counter = new AtomicLong();
    private final Map<String, Pending> pending = new ConcurrentHashMap<>();
    // Measuring only (a delivery listener other than NONE): the thread applying a reply now, and whether the reply's
    // toolCallCompleted was announced on it (set by that thread itself, inside complete).
    private volatile @Nullable Thread completing;
    private boolean announcedByCompleting;

    ClientCalls(BridgeEngine engine) {
        this.engine = engine;
    }

    /** A channel whose calls carry {@code context} (e.g. {@code {"session": "guard"}}) and {@code requestId}. */
    ToolChannel channel(ObjectNode context, JsonNode requestId) {
        return new ToolChannel() {
            @Override
            public PendingCall send(ToolCall call) {
                return send(call, p -> {});
            }

            @Override
            public PendingCall send(ToolCall call, Consumer<? super PendingCall> beforeSending) {
                String id = "t-" + counter.incrementAndGet();
                Pending pendingCall = new Pending(id, context, requestId, call);
                pending.put(id, pendingCall);
                beforeSending.accept(pendingCall); // before the client can see the call, so before it can answer
                ObjectNode params = context.deepCopy();
                params.set("requestId", requestId);
                params.set("call", Coding.call(call));
                ObjectNode message = Json.object();
                message.put("jsonrpc", "2.0");
                message.put("id", id);
                message.put("method", Methods.TOOL_CALL);
                message.set("params", params);
                engine.outbound().send(message); // the agent's thread, holding no lock
                return pendingCall;
            }
        };
    }

    /** Applies the client's response to a {@code tool/call}. */
    void complete(JsonNode id, JsonNode message) {
        Pending call = id.isTextual() ? pending.remove(id.textValue()) : null;
        DeliveryListener delivery = engine.deliveryListener();
        if (call == null) {
            Log.info("ignored a response to " + Json.write(id) + ", which no tool call is waiting for");
            delivery.toolReply(DeliveryListener.ReplyPath.NO_CALL_WAITING);
            return;
        }
        if (delivery == DeliveryListener.NONE) {
            call.future.complete(reply(message));
            return;
        }
        announcedByCompleting = false;
        completing = Thread.currentThread();
        try {
            call.future.complete(reply(message)); // a turn recording it on this thread announces it in here
        } finally {
            completing = null;
        }
        delivery.toolReply(
                announcedByCompleting
                        ? DeliveryListener.ReplyPath.REPLY_THREAD
                        : DeliveryListener.ReplyPath.TURN_THREAD);
    }

    /**
     * Told by a turn's event sender as it announces a completed tool call: when that happens on the thread applying a
     * client's reply, inside {@link #complete}, the reply's own thread announced it.
     */
    void announced() {
        if (completing == Thread.currentThread()) {
            announcedByCompleting = true;
        }
    }

    static ToolReply reply(JsonNode message) {
        JsonNode error = message.get("error");
        if (error != null && !error.isNull()) {
            JsonNode text = error.isObject() ? error.get("message") : error;
            return ToolReply.error(text == null || text.isNull() ? "The tool failed." : Json.text(text));
        }
        JsonNode result = message.get("result");
        if (result == null) {
            return ToolReply.error("The engine's reply had neither a result nor an error.");
        }
        if (result.isObject() && result.has("output")) {
            JsonNode isError = result.get("isError");
            return new ToolReply(result.get("output"), isError != null && isError.asBoolean(false));
        }
        return ToolReply.output(result);
    }

    void abandonAll(String reason) {
        for (Pending call : List.copyOf(pending.values())) {
            call.abandon(reason);
        }
    }

    private final class Pending implements ToolChannel.PendingCall {
        final String id;
        final ObjectNode context;
        final JsonNode requestId;
        final ToolCall call;
        final CompletableFuture<ToolReply> future = new CompletableFuture<>();

        Pending(String id, ObjectNode context, JsonNode requestId, ToolCall call) {
            this.id = id;
            this.context = context;
            this.requestId = requestId;
            this.call = call;
        }

        @Override
        public CompletableFuture<ToolReply> reply() {
            return future;
        }

        @Override
        public void abandon(String reason) {
            if (!pending.remove(id, this)) {
                return;
            }
            ObjectNode params = context.deepCopy();
            params.set("requestId", requestId);
            params.put("id", id);
            params.put("callId", call.id());
            params.put("reason", reason);
            engine.sendNotification(Methods.TOOL_CANCEL, params);
            future.complete(ToolReply.error(reason));
        }
    }
}
