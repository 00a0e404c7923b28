package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One request as a handler sees it. It is answered exactly once: the first {@link #respond} or
 * {@link #fail} wins and later ones are ignored.
 */
public final class BridgeRequest {
    private final BridgeEngine engine;
    private final long sequence;
    private final @Nullable JsonNode id;
    private final JsonNode requestId;
    private final String method;
    private final Params params;
    private final @Nullable Consumer<ObjectNode> local;
    private final AtomicBoolean answered = new AtomicBoolean();
    private volatile @Nullable Runnable canceller;

    BridgeRequest(BridgeEngine engine, long sequence, @Nullable JsonNode id, JsonNode requestId, String method, Params params,
            @Nullable Consumer<ObjectNode> local) {
        this.engine = engine;
        this.sequence = sequence;
        this.id = id;
        this.requestId = requestId;
        this.method = method;
        this.params = params;
        this.local = local;
    }

    public BridgeEngine engine() {
        return engine;
    }

    long sequence() {
        return sequence;
    }

    /** The id as echoed in the response; {@code null} for a notification. */
    public @Nullable JsonNode id() {
        return id;
    }

    /** The id events name in {@code requestId} (a private {@code local-<n>} for notifications). */
    public JsonNode requestId() {
        return requestId;
    }

    public String method() {
        return method;
    }

    public Params params() {
        return params;
    }

    public boolean isNotification() {
        return id == null && local == null;
    }

    public boolean isAnswered() {
        return answered.get();
    }

    /** Sends the result (after every message this request caused). Returns false when already answered. */
    public boolean respond(JsonNode result) {
        if (!answered.compareAndSet(false, true)) {
            return false;
        }
        deliver(Envelope.result(id == null ? requestId : id, result));
        engine.finished(this); // after queueing, so whoever waits for idle also finds the response queued
        return true;
    }

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

    /** Sets how this request is cancelled by {@link BridgeEngine#cancel(JsonNode)} while it is in flight. */
    void setCanceller(Runnable canceller) {
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

    public boolean failCancelled() {
        return fail(new BridgeException(ErrorCode.CANCELLED, "The request was cancelled."));
    }

    /**
     * The channel for this request's client tools: {@code tool/call} requests whose params are
     * {@code context} (e.g. {@code {"npc": "gorm"}}) plus {@code requestId} and {@code call}. It
     * {@linkplain dev.oam.core.tool.ToolChannel#announcesOnReplyThread() announces replies on the input thread}: a turn
     * listener used with it gets {@code toolCallCompleted} on the thread that read the reply, so it must not block
     * ({@link #events} does not: it only sends).
     */
    public dev.oam.core.tool.ToolChannel toolChannel(ObjectNode context) {
        return engine.clientCalls().channel(context, requestId);
    }

    /**
     * A turn listener sending {@code method} notifications ({@code <namespace>/event}) with
     * {@code {…context, requestId, event}} params, as {@code session/event} does.
     */
    public dev.oam.core.agent.TurnListener events(ObjectNode context, String method) {
        return Sessions.eventSender(this, context, method);
    }

    /**
     * Sends a notification (an event) through the single writer, before this request's response. Call it from
     * the thread working on the request, holding no lock: on stdio that thread may write the line itself.
     */
    public void notify(String notificationMethod, ObjectNode notificationParams) {
        engine.outbound().send(Envelope.notification(notificationMethod, notificationParams));
    }
}
