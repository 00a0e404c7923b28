package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeRequest;
import dev.oam.bridge.spi.ExtensionContext;
import dev.oam.bridge.spi.Params;
import dev.oam.core.ErrorCode;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/** The engine's request: answered once, through the engine's outbound queue, and then out of flight. */
final class RealRequest implements BridgeRequest {
    private final BridgeEngine engine;
    private final long sequence;
    private final @Nullable JsonNode id;
    private final JsonNode requestId;
    private final String method;
    private final Params params;
    private final @Nullable Consumer<ObjectNode> local;
    private final AtomicBoolean answered = new AtomicBoolean();
    private volatile @Nullable Runnable canceller;

    RealRequest(
            BridgeEngine engine,
            long sequence,
            @Nullable JsonNode id,
            JsonNode requestId,
            String method,
            Params params,
            @Nullable Consumer<ObjectNode> local) {
        this.engine = engine;
        this.sequence = sequence;
        this.id = id;
        this.requestId = requestId;
        this.method = method;
        this.params = params;
        this.local = local;
    }

    @Override
    public ExtensionContext context() {
        return engine.context();
    }

    long sequence() {
        return sequence;
    }

    @Override
    public @Nullable JsonNode id() {
        return id;
    }

    @Override
    public JsonNode requestId() {
        return requestId;
    }

    @Override
    public String method() {
        return method;
    }

    @Override
    public Params params() {
        return params;
    }

    @Override
    public boolean isNotification() {
        return id == null && local == null;
    }

    @Override
    public boolean isAnswered() {
        return answered.get();
    }

    @Override
    public boolean respond(JsonNode result) {
        if (!answered.compareAndSet(false, true)) {
            return false;
        }
        deliver(Envelope.result(id == null ? requestId : id, result));
        engine.finished(this); // after queueing, so whoever waits for idle also finds the response queued
        return true;
    }

    @Override
    public boolean fail(BridgeException error) {
        if (!answered.compareAndSet(false, true)) {
            return false;
        }
        if (id == null && local == null) {
            dev.oam.core.Log.debug("notification '" + method + "' failed: " + error.getMessage());
        } else {
            deliver(Envelope.error(id == null ? requestId : id, error));
        }
        engine.finished(this);
        return true;
    }

    private void deliver(ObjectNode message) {
        if (local != null) {
            engine.outbound().after(() -> local.accept(message));
        } else if (id != null) {
            engine.outbound().send(message);
        }
    }

    @Override
    public void setCanceller(Runnable canceller) {
        this.canceller = canceller;
    }

    /** Cancels the request's work if it is queued or deferred; returns whether there was any to cancel. */
    boolean cancel() {
        Runnable action = canceller;
        if (action == null || answered.get()) {
            return false;
        }
        action.run();
        return true;
    }

    @Override
    public boolean failCancelled() {
        return fail(new BridgeException(ErrorCode.CANCELLED, "The request was cancelled."));
    }

    @Override
    public dev.oam.core.tool.ToolChannel toolChannel(ObjectNode context) {
        return engine.clientCalls().channel(context, requestId);
    }

    @Override
    public dev.oam.core.agent.TurnListener events(ObjectNode context, String method) {
        return Sessions.eventSender(this, context, method, engine.clientCalls());
    }

    @Override
    public void notify(String notificationMethod, ObjectNode notificationParams) {
        engine.outbound().send(Envelope.notification(notificationMethod, notificationParams));
    }
}
