package dev.oam.bridge.spi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.tool.ToolChannel;
import org.jspecify.annotations.Nullable;

/**
 * One request as a handler sees it. It is answered exactly once: the first {@link #respond} or {@link #fail} wins and
 * later ones are ignored. Implemented by the engine only.
 */
public interface BridgeRequest {
    /** What the handler may use of the engine: the same context its extension was registered with. */
    ExtensionContext context();

    /** The id as echoed in the response; {@code null} for a notification. */
    @Nullable
    JsonNode id();

    /** The id events name in {@code requestId} (a private {@code local-<n>} for notifications). */
    JsonNode requestId();

    String method();

    Params params();

    boolean isNotification();

    boolean isAnswered();

    /** Sends the result (after every message this request caused). Returns false when already answered. */
    boolean respond(JsonNode result);

    /** Sends the error (after every message this request caused). Returns false when already answered. */
    boolean fail(BridgeException error);

    /** Answers {@code -32009}, the request was cancelled. */
    boolean failCancelled();

    /**
     * Sets how the engine's {@code cancel} and shutdown cancel this request's work while it is in flight (a queue's or
     * a deferred thread's token).
     */
    void setCanceller(Runnable canceller);

    /**
     * The channel for this request's client tools: {@code tool/call} requests whose params are {@code context} (e.g.
     * {@code {"npc": "gorm"}}) plus {@code requestId} and {@code call}. Its replies complete on the thread that read
     * them: a turn listener that {@linkplain TurnListener#acceptsReplyThread() accepts that thread} gets
     * {@code toolCallCompleted} there, so it must not block ({@link #events} does not: it only sends).
     */
    ToolChannel toolChannel(ObjectNode context);

    /**
     * A turn listener sending {@code method} notifications ({@code <namespace>/event}) with {@code {…context,
     * requestId, event}} params, as {@code session/event} does. It {@linkplain TurnListener#acceptsReplyThread()
     * accepts the thread completing a tool reply}, so {@code toolCallCompleted} is sent the moment the client's reply
     * is read.
     */
    TurnListener events(ObjectNode context, String method);

    /**
     * Sends a notification (an event) through the single writer, before this request's response. Call it from the
     * thread working on the request, holding no lock: on stdio that thread may write the line itself.
     */
    void notify(String notificationMethod, ObjectNode notificationParams);
}
