package dev.oam.bridge;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeExtension;
import dev.oam.bridge.spi.BridgeRequest;
import dev.oam.bridge.spi.ExtensionContext;
import dev.oam.bridge.spi.Handler;
import dev.oam.bridge.spi.MethodRegistry;
import dev.oam.bridge.spi.Methods;
import dev.oam.bridge.spi.Params;
import dev.oam.bridge.spi.Reply;
import dev.oam.bridge.transport.DeliveryListener;
import dev.oam.bridge.transport.StreamSink;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.agent.HistoryLimits;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.game.world.WorldBudget;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The JSON-RPC 2.0 engine. Lines come in through {@link #receive(String)} (any thread; they are handled one at a time
 * in arrival order) and go out through one writer thread to the sink. {@link #call} is the in-process API for JVM
 * hosts.
 */
public final class BridgeEngine implements AutoCloseable {
    public static final String PROTOCOL_VERSION = "1.0";
    public static final String SERVER_NAME = "open-apple-models";
    public static final String VERSION = CoreMethods.readVersion();

    private final BridgeConfiguration configuration;
    private final MethodRegistry registry;
    private final List<BridgeExtension> extensions;
    private final List<String> notificationMethods;
    private final DeliveryListener deliveryListener;
    private final Outbound outbound;
    private final Sessions sessions;
    private final ClientCalls clientCalls = new ClientCalls(this);
    private final HistoryLimits historyLimits;
    private final ReentrantLock dispatchLock = new ReentrantLock();
    private final InFlight inflight = new InFlight();
    private final DeferredWork deferred = new DeferredWork();
    private long sequence; // guarded by dispatchLock
    private final AtomicLong localIds = new AtomicLong();
    private final Shutdown shutdown;
    private final AtomicBoolean backendsReleased = new AtomicBoolean();
    private final ExtensionContext context = new Context();
    private @Nullable RealRequest handling; // guarded by dispatchLock: the request whose handler runs now

    /** An engine whose outgoing lines go to {@code sink} (called on the writer thread, one line at a time). */
    public BridgeEngine(BridgeConfiguration configuration, Consumer<String> sink) {
        this((MessageSink) sink::accept, configuration);
    }

    /** An engine writing to a sink that can be flushed (stdio). */
    public static BridgeEngine withSink(BridgeConfiguration configuration, MessageSink sink) {
        return new BridgeEngine(sink, configuration);
    }

    private BridgeEngine(MessageSink sink, BridgeConfiguration configuration) {
        this.configuration = Objects.requireNonNull(configuration, "configuration");
        configuration.ownedBackends().acquire(); // first: a configuration whose backends are closed makes no engine
        this.deliveryListener = sink instanceof StreamSink stream ? stream.deliveryListener() : DeliveryListener.NONE;
        Outbound out = new Outbound(sink, deliveryListener, dispatchLock::isHeldByCurrentThread);
        this.outbound = out;
        try {
            this.historyLimits = configuration.memoryLimits().histories();
            this.sessions = new Sessions(this);
            MethodRegistry.Builder builder = MethodRegistry.builder();
            CoreMethods.register(builder, this);
            PullMethods.register(builder, this);
            sessions.register(builder);
            List<String> notifications =
                    new ArrayList<>(List.of(Methods.SESSION_EVENT, Methods.TOOL_CANCEL, Methods.MODEL_PROGRESS));
            List<BridgeExtension> made = new ArrayList<>();
            for (BridgeExtension.Factory factory : configuration.extensions()) {
                BridgeExtension extension =
                        Objects.requireNonNull(factory.create(), "an extension factory returned null");
                made.add(extension);
                extension.register(builder, context);
                for (String method : extension.notificationMethods()) {
                    if (!notifications.contains(method)) {
                        notifications.add(method);
                    }
                }
            }
            this.extensions = List.copyOf(made);
            this.registry = builder.build();
            this.notificationMethods = List.copyOf(notifications);
        } catch (RuntimeException | Error e) { // a refused registration, a failing extension: no engine, nothing held
            out.close(0);
            backendsReleased.set(true);
            configuration.ownedBackends().release();
            throw e;
        }
        this.shutdown = new Shutdown(
                sessions,
                deferred,
                clientCalls,
                inflight,
                extensions,
                outbound,
                configuration.onShutdown(),
                dispatchLock);
    }

    /** This engine's own instance of an extension type (the game extension: {@code extension(GameExtension.class)}). */
    public <T extends BridgeExtension> Optional<T> extension(Class<T> type) {
        return extensions.stream().filter(type::isInstance).map(type::cast).findFirst();
    }

    public BridgeConfiguration configuration() {
        return configuration;
    }

    /** The history caps every session and NPC of this engine is held to (docs/RELIABILITY.md, Limits). */
    HistoryLimits historyLimits() {
        return historyLimits;
    }

    /** Handles one incoming line (without its newline). Blank lines are ignored. */
    public void receive(String line) {
        if (line.isBlank()) {
            return;
        }
        JsonNode root;
        try {
            root = Json.parse(line);
        } catch (JsonProcessingException e) {
            reject(null, null, Envelope.parseError(e));
            return;
        }
        dispatch(root, null);
    }

    /** Handles one incoming line given as UTF-8 bytes; invalid UTF-8 is a parse error. */
    public void receive(byte[] bytes, int offset, int length) {
        if (Envelope.isBlank(bytes, offset, length)) {
            return;
        }
        JsonNode root;
        try {
            root = Json.parse(bytes, offset, length);
        } catch (IOException | RuntimeException e) {
            reject(null, null, Envelope.parseError(e));
            return;
        }
        dispatch(root, null);
    }

    /**
     * Answers a line the transport could not read (longer than its limit, say) with {@code -32600} and a null id, in
     * order with the lines around it.
     */
    public void rejectLine(String reason) {
        reject(null, null, new BridgeException(ErrorCode.INVALID_MESSAGE, reason));
    }

    /**
     * Calls a method in-process. The future completes with the result, or exceptionally with a {@link BridgeException},
     * after every message the request caused was delivered to the sink. Events name a private {@code local-<n>} request
     * id.
     */
    public CompletableFuture<JsonNode> call(String method, @Nullable JsonNode params) {
        return callMessage(Envelope.request("local-" + localIds.incrementAndGet(), method, params))
                .thenCompose(response -> {
                    JsonNode error = response.get("error");
                    return error == null
                            ? CompletableFuture.completedFuture(response.get("result"))
                            : CompletableFuture.failedFuture(BridgeException.fromJson(error));
                });
    }

    /**
     * Handles one request message whose response is delivered to the returned future instead of the sink (its events
     * and {@code tool/call}s still go to the sink first). {@code jsonrpc} and {@code id} may be absent: without an id,
     * events name a private {@code local-<n>} id. This is what {@code oam_call_blocking} uses.
     */
    public CompletableFuture<ObjectNode> callMessage(ObjectNode request) {
        CompletableFuture<ObjectNode> future = new CompletableFuture<>();
        ObjectNode message = request.deepCopy();
        if (!message.has("jsonrpc")) {
            message.put("jsonrpc", "2.0");
        }
        if (!message.has("id")) {
            message.put("id", "local-" + localIds.incrementAndGet());
        }
        dispatch(message, future::complete);
        return future;
    }

    /**
     * Cancels the queued or running work of every in-flight request with this id (it is then answered {@code -32009}).
     * Returns how many requests had work to cancel.
     */
    public int cancel(JsonNode id) {
        String key = Json.write(id);
        int count = 0;
        for (RealRequest request : inflight.snapshot()) {
            JsonNode requestId = request.id() != null ? request.id() : request.requestId();
            if (Json.write(requestId).equals(key) && request.cancel()) {
                count++;
            }
        }
        return count;
    }

    /** Waits until every request received so far has been answered, or the timeout passed. */
    public boolean awaitIdle(Duration timeout) throws InterruptedException {
        return inflight.awaitNoneBut(null, timeout.toNanos());
    }

    /**
     * Shuts down as {@code shutdown} does (without a response) and stops the writer after delivering what is queued.
     * After a {@code shutdown} request it first lets that request finish, so its response is delivered too. The last
     * engine of its configuration to close then closes the backends the host gave it
     * ({@link BridgeConfiguration#ownedBackends()}). Idempotent.
     */
    @Override
    public void close() {
        shutdown.close();
        outbound.close(Shutdown.WAIT_MILLIS);
        if (!backendsReleased.getAndSet(true)) {
            configuration.ownedBackends().release();
        }
    }

    public boolean isShutDown() {
        return shutdown.started();
    }

    /**
     * Sends a notification through the single writer, after what is queued: the engine's own ({@code tool/cancel},
     * {@code model/progress}), an extension's through its context, or a host's.
     */
    public void sendNotification(String method, ObjectNode params) {
        outbound.queue(Envelope.notification(method, params));
    }

    /** What this engine's extensions and their requests may use of it. */
    ExtensionContext context() {
        return context;
    }

    ModelAvailability systemAvailability() {
        LanguageModel system = configuration.systemModel();
        return system == null ? BridgeConfiguration.NO_SYSTEM_MODEL : system.availability();
    }

    MethodRegistry registry() {
        return registry;
    }

    List<String> notificationMethods() {
        return notificationMethods;
    }

    /** Told which path each line and tool reply took (a stream sink's, else {@link DeliveryListener#NONE}). */
    DeliveryListener deliveryListener() {
        return deliveryListener;
    }

    Outbound outbound() {
        return outbound;
    }

    ClientCalls clientCalls() {
        return clientCalls;
    }

    Sessions sessions() {
        return sessions;
    }

    /** Called by a request once its answer is queued: it is no longer in flight. */
    void finished(RealRequest request) {
        inflight.remove(request);
    }

    private void dispatch(JsonNode root, @Nullable Consumer<ObjectNode> local) {
        dispatchLock.lock();
        try {
            dispatchLocked(root, local);
        } finally {
            dispatchLock.unlock();
        }
    }

    private void dispatchLocked(JsonNode root, @Nullable Consumer<ObjectNode> local) {
        Envelope.Call call;
        switch (Envelope.read(root, local != null)) {
            case Envelope.Call c -> call = c;
            case Envelope.Response response -> {
                clientCalls.complete(response.id(), response.message());
                return;
            }
            case Envelope.Invalid invalid -> {
                reject(local, invalid.id(), invalid.error());
                return;
            }
            case Envelope.Ignored ignored -> {
                return;
            }
        }
        String method = call.method();
        JsonNode requestId = call.id() != null ? call.id() : TextNode.valueOf("local-" + localIds.incrementAndGet());
        RealRequest request = new RealRequest(
                this,
                ++sequence,
                call.notification() ? null : call.id(),
                requestId,
                method,
                Params.of(call.params()),
                local);
        if (shutdown.started()) {
            request.fail(new BridgeException(ErrorCode.SHUT_DOWN, "The bridge has shut down."));
            return;
        }
        Handler handler = registry.handler(method);
        if (handler == null) {
            if (call.notification()) {
                Log.debug("ignored notification for unknown method '" + method + "'");
                return;
            }
            request.fail(BridgeException.of(
                    ErrorCode.METHOD_NOT_FOUND,
                    "Unknown method '" + method + "'.",
                    "method",
                    TextNode.valueOf(method)));
            return;
        }
        // In flight before its handler runs: a worker may answer it while the handler is still running, and shutdown
        // must count it until that answer is queued, or the shutdown response could overtake it.
        inflight.add(request);
        handling = request;
        try {
            Reply reply = handler.handle(request);
            switch (reply) {
                case Reply.Result result -> request.respond(result.value());
                case Reply.Deferred work -> deferred.start(request, work.work());
                case Reply.Pending pending -> {
                    // answered later by whoever took it, which ends its time in flight
                }
            }
        } catch (Exception e) {
            request.fail(BridgeException.wrap(e));
        } finally {
            handling = null;
        }
    }

    /** Answers a message that is no request; on the dispatcher, so in order with the answers around it. */
    private void reject(@Nullable Consumer<ObjectNode> local, @Nullable JsonNode id, BridgeException error) {
        ObjectNode message = Envelope.error(id, error);
        if (local != null) {
            outbound.after(() -> local.accept(message));
            return;
        }
        dispatchLock.lock(); // reentrant: held already when called from dispatch
        try {
            outbound.send(message);
        } finally {
            dispatchLock.unlock();
        }
    }

    /**
     * The order-sensitive part of {@code shutdown}: from here on every request fails with -32023. Called by the
     * {@code shutdown} handler, on the dispatcher, with the request it handles.
     */
    void beginShutdown(BridgeRequest request) {
        RealRequest current = handling;
        if (current == null || current != request) {
            throw new IllegalStateException("shutdown begins only in the handler of the request being dispatched");
        }
        shutdown.begin(current);
    }

    /** The engine as its extensions see it ({@link ExtensionContext}). */
    private final class Context implements ExtensionContext {
        @Override
        public LanguageModel makeModel(@Nullable JsonNode spec, String path) throws BridgeException {
            return Models.create(configuration, spec, path).model();
        }

        @Override
        public void sendNotification(String method, ObjectNode params) {
            BridgeEngine.this.sendNotification(method, params);
        }

        @Override
        public Duration defaultToolTimeout() {
            return configuration.defaultToolTimeout();
        }

        @Override
        public HistoryLimits historyLimits() {
            return historyLimits;
        }

        @Override
        public WorldBudget worldBudget() {
            return configuration.memoryLimits().worlds();
        }

        @Override
        public java.nio.file.@Nullable Path saveFolder() {
            return configuration.saveFolder();
        }
    }
}
