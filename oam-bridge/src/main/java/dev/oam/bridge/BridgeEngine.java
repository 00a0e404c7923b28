package dev.oam.bridge;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.bridge.internal.TransportAccess;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.agent.AgentException;
import dev.oam.core.agent.CancellationToken;
import dev.oam.core.agent.HistoryLimits;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The JSON-RPC 2.0 engine. Lines come in through {@link #receive(String)} (any thread; they are
 * handled one at a time in arrival order) and go out through one writer thread to the sink.
 * {@link #call} is the in-process API for JVM hosts.
 */
public final class BridgeEngine implements AutoCloseable {
    public static final String PROTOCOL_VERSION = "1.0";
    public static final String SERVER_NAME = "open-apple-models";
    public static final String VERSION = readVersion();
    private static final long MAX_SAFE_LONG = 9_007_199_254_740_991L;
    static final BigDecimal MAX_SAFE_INTEGER = BigDecimal.valueOf(MAX_SAFE_LONG);
    private static final long SHUTDOWN_WAIT_MILLIS = 2_000;

    static {
        TransportAccess.install(new TransportAccess.Engine() { // the transports' friend access
            @Override
            public void rejectLine(BridgeEngine engine, String reason) {
                engine.rejectLine(reason);
            }

            @Override
            public void startReading(BridgeEngine engine) {
                engine.outbound.readerThread();
            }

            @Override
            public void inputDrained(BridgeEngine engine, boolean drained) {
                engine.outbound.readerDrained(drained);
            }

            @Override
            public void inputAhead(BridgeEngine engine, boolean ahead) {
                engine.outbound.readerAhead(ahead);
            }
        });
    }

    private final BridgeConfiguration configuration;
    private final MethodRegistry registry;
    private final List<BridgeExtension> extensions;
    private final List<String> notificationMethods;
    private final Outbound outbound;
    private final Sessions sessions;
    private final ClientCalls clientCalls = new ClientCalls(this);
    private final HistoryLimits historyLimits;
    private final ReentrantLock dispatchLock = new ReentrantLock();
    private final Map<Long, BridgeRequest> inflight = new ConcurrentHashMap<>();
    private final Set<CancellationToken> deferred = ConcurrentHashMap.newKeySet();
    private long sequence; // guarded by dispatchLock
    private final List<BridgeRequest> handling = new ArrayList<>(); // guarded by dispatchLock: whose handler runs (nested: a handler may dispatch)
    private final AtomicLong localIds = new AtomicLong();
    private volatile boolean shutDown;
    private final AtomicBoolean backendsReleased = new AtomicBoolean();
    private volatile @Nullable Thread shutdownThread;

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
        this.outbound = new Outbound(sink);
        this.historyLimits = configuration.memoryLimits().histories();
        this.sessions = new Sessions(this);
        MethodRegistry.Builder builder = MethodRegistry.builder();
        CoreMethods.register(builder, this);
        PullMethods.register(builder, this);
        sessions.register(builder);
        List<String> notifications = new ArrayList<>(List.of(Methods.SESSION_EVENT, Methods.TOOL_CANCEL, Methods.MODEL_PROGRESS));
        List<BridgeExtension> made = new ArrayList<>();
        for (BridgeExtension.Factory factory : configuration.extensions()) {
            BridgeExtension extension = Objects.requireNonNull(factory.create(), "an extension factory returned null");
            made.add(extension);
            extension.register(builder, this);
            for (String method : extension.notificationMethods()) {
                if (!notifications.contains(method)) {
                    notifications.add(method);
                }
            }
        }
        this.extensions = List.copyOf(made);
        this.registry = builder.build();
        this.notificationMethods = List.copyOf(notifications);
    }

    /** This engine's own instance of an extension type (the game extension: {@code extension(GameExtension.class)}). */
    public <T extends BridgeExtension> Optional<T> extension(Class<T> type) {
        return extensions.stream().filter(type::isInstance).map(type::cast).findFirst();
    }

    public BridgeConfiguration configuration() {
        return configuration;
    }

    /** The history caps every session and NPC of this engine is held to (docs/RELIABILITY.md, Limits). */
    public HistoryLimits historyLimits() {
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
            parseError(e);
            return;
        }
        dispatch(root, null);
    }

    /** Handles one incoming line given as UTF-8 bytes; invalid UTF-8 is a parse error. */
    public void receive(byte[] bytes, int offset, int length) {
        if (isBlank(bytes, offset, length)) {
            return;
        }
        JsonNode root;
        try {
            root = Json.parse(bytes, offset, length);
        } catch (IOException e) {
            parseError(e);
            return;
        } catch (RuntimeException e) {
            parseError(e);
            return;
        }
        dispatch(root, null);
    }

    /**
     * Answers a line the transport could not read (e.g. longer than its limit) with {@code -32600}; transports reach
     * it through {@link TransportAccess}.
     */
    void rejectLine(String reason) {
        sendFromDispatcher(errorMessage(NullNode.getInstance(), new BridgeException(ErrorCode.INVALID_MESSAGE, reason)));
    }

    /**
     * Calls a method in-process. The future completes with the result, or exceptionally with a
     * {@link BridgeException}, after every message the request caused was delivered to the sink.
     * Events name a private {@code local-<n>} request id.
     */
    public CompletableFuture<JsonNode> call(String method, @Nullable JsonNode params) {
        ObjectNode message = Json.object();
        message.put("jsonrpc", "2.0");
        message.put("id", "local-" + localIds.incrementAndGet());
        message.put("method", method);
        if (params != null) {
            message.set("params", params);
        }
        return callMessage(message).thenCompose(response -> {
            JsonNode error = response.get("error");
            if (error == null) {
                return CompletableFuture.completedFuture(response.get("result"));
            }
            ObjectNode data = error.path("data").isObject() ? (ObjectNode) error.get("data") : Json.object();
            return CompletableFuture.failedFuture(new BridgeException(error.path("code").asInt(),
                    data.path("code").asText("internal_error"), error.path("message").asText(), data));
        });
    }

    /**
     * Handles one request message whose response is delivered to the returned future instead of the
     * sink (its events and {@code tool/call}s still go to the sink first). {@code jsonrpc} and
     * {@code id} may be absent: without an id, events name a private {@code local-<n>} id. This is
     * what {@code oam_call_blocking} uses.
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
     * Cancels the queued or running work of every in-flight request with this id (it is then
     * answered {@code -32009}). Returns how many requests had work to cancel.
     */
    public int cancel(JsonNode id) {
        String key = Json.write(id);
        int count = 0;
        for (BridgeRequest request : inflightRequests()) {
            JsonNode requestId = request.id() != null ? request.id() : request.requestId();
            if (Json.write(requestId).equals(key) && request.cancel()) {
                count++;
            }
        }
        return count;
    }

    /** Waits until every request received so far has been answered, or the timeout passed. */
    public boolean awaitIdle(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!inflightRequests().isEmpty()) {
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            Thread.sleep(2);
        }
        return true;
    }

    /**
     * Shuts down as {@code shutdown} does (without a response) and stops the writer after delivering what is queued.
     * After a {@code shutdown} request it first lets that request finish, so its response is delivered too. The last
     * engine of its configuration to close then closes the backends the host gave it
     * ({@link BridgeConfiguration#ownedBackends()}). Idempotent.
     */
    @Override
    public void close() {
        if (!shutDown) {
            shutDown = true;
            cancelEverything();
            waitForInflight(null);
            finishShutdown(null);
        }
        Thread shutdown = shutdownThread;
        if (shutdown != null) {
            try {
                shutdown.join(); // bounded: it waits at most SHUTDOWN_WAIT_MILLIS for other requests
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        outbound.close(SHUTDOWN_WAIT_MILLIS);
        if (!backendsReleased.getAndSet(true)) {
            configuration.ownedBackends().release();
        }
    }

    public boolean isShutDown() {
        return shutDown;
    }

    /**
     * Creates the model for a {@code model} parameter value, with this engine's backends and defaults. Extension SPI:
     * for handlers of methods that take a {@code model} (the game methods, a host's own extension); errors name the
     * parameter at {@code path}.
     */
    public LanguageModel makeModel(@Nullable JsonNode spec, String path) throws BridgeException {
        return Models.create(configuration, spec, path).model();
    }

    /**
     * Sends a notification through the single writer. Extension SPI: for notifications an extension emits on its own
     * ({@code world/changed}); a handler's events about its own request go with that request instead.
     */
    public void sendNotification(String method, ObjectNode params) {
        outbound.send(notification(method, params));
    }

    static ObjectNode notification(String method, ObjectNode params) {
        ObjectNode message = Json.object();
        message.put("jsonrpc", "2.0");
        message.put("method", method);
        message.set("params", params);
        return message;
    }

    /**
     * Sends a message a worker produced about its own request (an event, a {@code tool/call}, the answer),
     * called with no lock held: a worker thread may deliver it itself when the writer is idle (see
     * {@link Outbound}); the dispatcher always hands it over, so it never waits for the client.
     */
    void sendFromWorker(ObjectNode message) {
        if (outbound.isReaderThread()) {
            outbound.sendFromReader(message);
        } else if (dispatchLock.isHeldByCurrentThread()) {
            outbound.send(message);
        } else {
            outbound.sendFromWorker(message);
        }
    }

    /** A message the dispatcher sends (an error for a line): the input thread may deliver it without blocking. */
    private void sendFromDispatcher(ObjectNode message) {
        if (outbound.isReaderThread()) {
            outbound.sendFromReader(message);
        } else {
            outbound.send(message);
        }
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

    Outbound outbound() {
        return outbound;
    }

    ClientCalls clientCalls() {
        return clientCalls;
    }

    Sessions sessions() {
        return sessions;
    }

    /**
     * Called by a request once its answer is queued. A request is in flight from the start of its handler until then:
     * while the handler runs it is in {@link #handling}, under the dispatch lock, and a request not answered when its
     * handler returns is put in {@link #inflight} before that lock is released; {@link #inflightRequests} reads both
     * under the lock. So
     * {@code shutdown}, {@link #awaitIdle} and {@link #cancel} see every request whose answer is not queued yet, also
     * one a worker is answering at this moment, and a request answered by its handler (a ping) costs no map entry.
     */
    void finished(BridgeRequest request) {
        request.markFinished(); // before the removal: see register()
        inflight.remove(request.sequence());
    }

    /**
     * The requests in flight, read under the dispatch lock: no other thread's handler is running then, so every request
     * received is answered, in the map, or (asked from within a handler) in {@link #handling}. Waits for a handler that
     * is running on another thread (handlers never wait for the client or for model work).
     */
    private List<BridgeRequest> inflightRequests() {
        dispatchLock.lock();
        try {
            if (handling.isEmpty()) {
                return List.copyOf(inflight.values());
            }
            List<BridgeRequest> all = new ArrayList<>(inflight.values());
            all.addAll(handling); // a handler asking from within (awaitIdle in a handler; a nested dispatch)
            return all;
        } finally {
            dispatchLock.unlock();
        }
    }

    /**
     * Called by the dispatcher when a handler returned: a request not answered yet stays in flight until its answer is
     * queued. A worker may answer it at the same moment: it marks it finished and then removes it, so either it removes
     * the entry put here or this sees the mark and removes it (both are volatile accesses).
     */
    private void register(BridgeRequest request) {
        if (!request.isFinished()) {
            inflight.put(request.sequence(), request);
            if (request.isFinished()) {
                inflight.remove(request.sequence(), request);
            }
        }
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
        if (!root.isObject()) {
            reject(local, null, new BridgeException(ErrorCode.INVALID_MESSAGE, root.isArray()
                    ? "Batches are not supported; send one JSON object per line."
                    : "A message must be a JSON object."));
            return;
        }
        boolean hasId = root.has("id");
        JsonNode id = null;
        if (hasId) {
            try {
                id = normalizeId(root.get("id"));
            } catch (BridgeException e) {
                if (!root.has("method")) {
                    Log.warning("ignored a response with an unusable id: " + e.getMessage());
                    return;
                }
                reject(local, null, e);
                return;
            }
        }
        JsonNode jsonrpc = root.get("jsonrpc");
        JsonNode methodNode = root.get("method");
        if (jsonrpc == null || !jsonrpc.isTextual() || !jsonrpc.textValue().equals("2.0")) {
            if (methodNode == null && !hasId) {
                Log.warning("ignored a message without \"jsonrpc\": \"2.0\"");
                return;
            }
            reject(local, id, new BridgeException(ErrorCode.INVALID_MESSAGE, "Every message needs \"jsonrpc\": \"2.0\"."));
            return;
        }
        if (methodNode == null) {
            if (hasId && (root.has("result") || root.has("error"))) {
                clientCalls.complete(id, root);
                return;
            }
            reject(local, id, new BridgeException(ErrorCode.INVALID_MESSAGE,
                    "A request needs a 'method' string; a response needs 'result' or 'error'."));
            return;
        }
        if (!methodNode.isTextual()) {
            reject(local, id, new BridgeException(ErrorCode.INVALID_MESSAGE, "'method' must be a string."));
            return;
        }
        String method = methodNode.textValue();
        boolean notification = !hasId && local == null;
        JsonNode paramsNode = root.get("params");
        ObjectNode params;
        if (paramsNode == null || paramsNode.isNull()) {
            params = Json.object();
        } else if (paramsNode.isObject()) {
            params = (ObjectNode) paramsNode;
        } else if (notification) {
            Log.warning("ignored notification '" + method + "': its params are not an object");
            return;
        } else {
            reject(local, id, BridgeException.invalidParams("Params must be an object (by name), not "
                    + (paramsNode.isArray() ? "an array" : "a " + paramsNode.getNodeType().name().toLowerCase(java.util.Locale.ROOT)) + "."));
            return;
        }
        long seq = ++sequence;
        JsonNode requestId = id != null ? id : TextNode.valueOf("local-" + localIds.incrementAndGet());
        BridgeRequest request = new BridgeRequest(this, seq, notification ? null : id, requestId, method,
                Params.of(params), local);
        if (shutDown) {
            request.fail(new BridgeException(ErrorCode.SHUT_DOWN, "The bridge has shut down."));
            return;
        }
        Handler handler = registry.handler(method);
        if (handler == null) {
            if (notification) {
                Log.debug("ignored notification for unknown method '" + method + "'");
                return;
            }
            request.fail(BridgeException.of(ErrorCode.METHOD_NOT_FOUND, "Unknown method '" + method + "'.",
                    "method", TextNode.valueOf(method)));
            return;
        }
        // In flight from here until its answer is queued (finished()): while the handler runs, as the dispatch lock is
        // held (inflightRequests() reads under it), and after it, through register(), unless it was answered by then.
        // A queued request may be answered by its worker at once; it counts as in flight until that answer is queued,
        // not merely claimed: otherwise the shutdown response could go first and the answer be dropped (the race
        // JsonRpcFuzzTest found when the request was registered after its handler and dropped when "answered").
        handling.add(request);
        try {
            Reply reply = handler.handle(request);
            switch (reply) {
                case Reply.Result result -> request.respond(result.value());
                case Reply.Deferred work -> runDeferred(request, work.work());
                case Reply.Pending pending -> {
                    // answered later by whoever took it; finished() removes it then
                }
            }
        } catch (Exception e) {
            request.fail(toBridgeException(e));
        } finally {
            register(request);
            handling.removeLast();
        }
    }

    private void runDeferred(BridgeRequest request, Reply.Work work) {
        CancellationToken token = CancellationToken.create();
        deferred.add(token);
        request.setCanceller(token::cancel);
        Thread.ofVirtual().name("oam-deferred-" + request.method()).start(() -> {
            try {
                JsonNode result = work.run(token);
                if (token.isCancelled()) {
                    request.failCancelled();
                } else {
                    request.respond(result);
                }
            } catch (Exception e) {
                request.fail(token.isCancelled() ? new BridgeException(ErrorCode.CANCELLED, "The request was cancelled.")
                        : toBridgeException(e));
            } catch (Throwable t) {
                Log.error("deferred work for '" + request.method() + "' failed", t);
                request.fail(new BridgeException(ErrorCode.INTERNAL_ERROR, "Internal error: " + t));
            } finally {
                deferred.remove(token);
            }
        });
    }

    static BridgeException toBridgeException(Throwable e) {
        if (e instanceof BridgeException bridge) {
            return bridge;
        }
        if (e instanceof AgentException agent) {
            return BridgeException.from(agent);
        }
        Log.error("internal error", e);
        return new BridgeException(ErrorCode.INTERNAL_ERROR, "Internal error (" + e.getClass().getSimpleName()
                + "); please report it. Details are in the bridge's log.");
    }

    private void reject(@Nullable Consumer<ObjectNode> local, @Nullable JsonNode id, BridgeException error) {
        ObjectNode message = errorMessage(id == null ? NullNode.getInstance() : id, error);
        if (local != null) {
            outbound.after(() -> local.accept(message));
            return;
        }
        sendFromDispatcher(message);
    }

    private void parseError(Exception e) {
        String detail = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        int cut = detail.indexOf('\n');
        if (cut > 0) {
            detail = detail.substring(0, cut);
        }
        if (detail.length() > 300) {
            detail = detail.substring(0, 300) + "…";
        }
        sendFromDispatcher(errorMessage(NullNode.getInstance(),
                new BridgeException(ErrorCode.PARSE_ERROR, "Parse error: the line is not valid JSON (" + detail + ").")));
    }

    static ObjectNode errorMessage(JsonNode id, BridgeException error) {
        ObjectNode message = Json.object();
        message.put("jsonrpc", "2.0");
        message.set("id", id);
        message.set("error", error.toJson());
        return message;
    }

    /** Ids are echoed exactly: strings as they are, integers as plain digits; unsafe numbers are rejected. */
    static JsonNode normalizeId(JsonNode id) throws BridgeException {
        if (id.isTextual()) {
            return id;
        }
        if (id.isNull()) {
            throw new BridgeException(ErrorCode.INVALID_MESSAGE, "'id' must not be null; use a string or a number.");
        }
        if (id.isInt() || id.isLong()) { // the usual id, without the BigDecimal detour below
            long value = id.longValue();
            if (value > MAX_SAFE_LONG || value < -MAX_SAFE_LONG) {
                throw unsafeId();
            }
            return LongNode.valueOf(value);
        }
        if (id.isNumber()) {
            if (id.isDouble() || id.isFloat()) {
                double value = id.doubleValue();
                if (!Double.isFinite(value)) {
                    throw unsafeId();
                }
            }
            BigDecimal value = id.decimalValue();
            if (value.abs().compareTo(MAX_SAFE_INTEGER) > 0) {
                throw unsafeId();
            }
            BigDecimal stripped = value.stripTrailingZeros();
            if (stripped.scale() <= 0) {
                return LongNode.valueOf(stripped.longValueExact());
            }
            return DoubleNode.valueOf(value.doubleValue());
        }
        throw new BridgeException(ErrorCode.INVALID_MESSAGE, "'id' must be a string or a number.");
    }

    private static BridgeException unsafeId() {
        return new BridgeException(ErrorCode.INVALID_MESSAGE, "Numeric ids must be finite and at most 2^53-1 "
                + "(9007199254740991) in magnitude to be echoed exactly; use a string id for larger values.");
    }

    private static boolean isBlank(byte[] bytes, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            byte b = bytes[i];
            if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
                return false;
            }
        }
        return true;
    }

    // --- shutdown -------------------------------------------------------------------------------

    /** The order-sensitive part of {@code shutdown}: from here on every request fails with -32023. */
    void beginShutdown(BridgeRequest request) {
        shutDown = true;
        cancelEverything();
        Thread thread = Thread.ofVirtual().name("oam-shutdown").unstarted(() -> {
            waitForInflight(request);
            finishShutdown(request);
            request.respond(Json.object());
            outbound.after(configuration.onShutdown());
        });
        shutdownThread = thread; // before it starts, so a close() right after this sees it
        thread.start();
    }

    private void cancelEverything() {
        sessions.cancelAll();
        for (CancellationToken token : deferred) {
            token.cancel();
        }
        clientCalls.abandonAll("The bridge is shutting down.");
    }

    private void waitForInflight(@Nullable BridgeRequest except) {
        long deadline = System.nanoTime() + SHUTDOWN_WAIT_MILLIS * 1_000_000L;
        while (System.nanoTime() - deadline < 0) {
            boolean others = inflightRequests().stream().anyMatch(r -> r != except);
            if (!others) {
                return;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private void finishShutdown(@Nullable BridgeRequest except) {
        for (BridgeRequest pending : inflightRequests()) {
            if (!pending.method().equals(Methods.SHUTDOWN)) {
                pending.fail(new BridgeException(ErrorCode.SHUT_DOWN, "The bridge shut down before this request finished."));
            }
        }
        // A request whose own answer won the race against the fail above is still in flight until that answer is
        // queued (BridgeRequest answers, then calls finished); wait for it, so the shutdown response cannot overtake
        // it (found by JsonRpcFuzzTest). Only such requests are left, so this takes microseconds.
        waitForInflight(except);
        for (BridgeExtension extension : extensions) {
            try {
                extension.shutdown();
            } catch (RuntimeException e) {
                Log.error("extension shutdown failed", e);
            }
        }
        sessions.clear();
    }

    // --- capabilities ---------------------------------------------------------------------------

    ObjectNode capabilities() {
        ObjectNode caps = Json.object();
        caps.set("methods", Json.strings(registry.methods()));
        caps.set("notifications", Json.strings(notificationMethods));
        caps.set("clientRequests", Json.strings(List.of(Methods.TOOL_CALL)));
        caps.put("streaming", true);
        caps.put("clientTools", true);
        caps.put("structuredOutput", registry.handler("schema/validate") != null);
        ArrayNode models = Json.array();
        models.add("system");
        if (configuration.allowsScriptedModels()) {
            models.add("scripted");
        }
        configuration.modelProviders().keySet().forEach(models::add);
        caps.set("models", models);
        caps.put("maxSessions", configuration.maxSessions());
        caps.put("batch", false);
        return caps;
    }

    private static String readVersion() {
        Properties properties = new Properties();
        try (var in = BridgeEngine.class.getResourceAsStream("version.properties")) {
            if (in != null) {
                properties.load(new java.io.InputStreamReader(in, StandardCharsets.UTF_8));
            }
        } catch (IOException e) {
            // fall through to the default
        }
        String version = properties.getProperty("version", "0.0.0");
        return version.endsWith("-SNAPSHOT") ? version.substring(0, version.length() - "-SNAPSHOT".length()) : version;
    }
}
