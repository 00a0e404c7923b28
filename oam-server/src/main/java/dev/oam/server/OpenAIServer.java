package dev.oam.server;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpCompliance;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.LocalConnector;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.unixdomain.server.UnixDomainServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.VirtualThreadPool;
import org.jspecify.annotations.Nullable;

/**
 * The OpenAI-compatible HTTP server of {@code oam serve} (docs/SERVER.md): Chat Completions with real tool calls, the
 * model listing and a health check, on Jetty 12 with one virtual thread per request. HTTP/1.1 framing, header and body
 * limits, slow clients and request smuggling are Jetty's job; this class routes, authenticates, admits and answers.
 */
public final class OpenAIServer implements AutoCloseable {
    private static final String JSON = "application/json";
    private static final List<String> CHAT_PATHS = List.of("/v1/chat/completions", "/chat/completions");
    /** How much longer than the request timeout a connection may stay silent while its completion runs. */
    private static final long IDLE_GRACE_MS = 5_000;

    private final ServerOptions options;
    private final Server jetty;
    private final @Nullable ServerConnector tcp;
    private final LocalConnector local;
    private final Admission admission;
    private final ScheduledExecutorService timer;
    private final long created = System.currentTimeMillis() / 1000;
    private final byte @Nullable [] apiKeyDigest;

    private OpenAIServer(ServerOptions options) {
        this.options = options;
        this.admission = new Admission(options.maxConcurrent(), options.maxQueued());
        this.apiKeyDigest = options.apiKey() == null ? null : sha256(options.apiKey());
        this.timer = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().daemon().name("oam-serve-timer").factory());
        VirtualThreadPool threads = new VirtualThreadPool();
        threads.setName("oam-serve");
        this.jetty = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setRequestHeaderSize(options.maxHeaderBytes());
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
        // RFC 9110 without exceptions: CL with TE, whitespace before a colon, obs-fold, duplicate Host → 400.
        http.setHttpCompliance(HttpCompliance.RFC9110);
        http.setIdleTimeout(options.idleTimeout().toMillis());
        jetty.setErrorHandler(new EnvelopeErrorHandler());
        ServerConnector tcpConnector = null;
        if (options.host() != null) {
            tcpConnector = new ServerConnector(jetty, 1, 1, new HttpConnectionFactory(http));
            tcpConnector.setHost(options.host());
            tcpConnector.setPort(options.port());
            tcpConnector.setIdleTimeout(options.idleTimeout().toMillis());
            jetty.addConnector(tcpConnector);
        }
        this.tcp = tcpConnector;
        if (options.socket() != null) {
            UnixDomainServerConnector unix =
                    new UnixDomainServerConnector(jetty, 1, 1, new HttpConnectionFactory(http));
            unix.setUnixDomainPath(options.socket());
            unix.setIdleTimeout(options.idleTimeout().toMillis());
            jetty.addConnector(unix);
        }
        // handle(): the same server without a socket, for tests and other transports.
        this.local = new LocalConnector(jetty, new HttpConnectionFactory(http));
        local.setIdleTimeout(options.idleTimeout().toMillis());
        jetty.addConnector(local);
        jetty.setHandler(new Router());
        jetty.setStopTimeout(0);
    }

    /**
     * Starts listening.
     *
     * @throws IOException when the address is taken or the socket path holds something that is not a socket
     */
    public static OpenAIServer start(ServerOptions options) throws IOException {
        if (options.socket() != null) {
            prepareSocketPath(options.socket());
        }
        OpenAIServer server = new OpenAIServer(options);
        try {
            server.jetty.start();
        } catch (Exception e) {
            server.close();
            throw e instanceof IOException io ? io : new IOException(e.getMessage(), e);
        }
        if (options.socket() != null) {
            try {
                Files.setPosixFilePermissions(options.socket(), PosixFilePermissions.fromString("rw-------"));
            } catch (UnsupportedOperationException e) {
                Log.warning("cannot restrict " + options.socket() + " to its owner on this file system");
            }
        }
        return server;
    }

    /** A stale socket from an earlier run is removed; any other file there is left alone and refused. */
    private static void prepareSocketPath(Path path) throws IOException {
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        int mode;
        try {
            mode = (Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            throw new IOException(
                    path + " exists and cannot be checked for being a socket; remove it or pick another path");
        }
        if ((mode & 0170000) != 0140000) {
            throw new IOException(
                    path + " exists and is not a socket; it is left alone: remove it or pick another path");
        }
        Files.delete(path);
    }

    /** The TCP port listened on, or -1 without TCP. */
    public int port() {
        return tcp == null ? -1 : tcp.getLocalPort();
    }

    /** {@code http://host:port} of the TCP listener. */
    public URI uri() {
        if (tcp == null || options.host() == null) {
            throw new IllegalStateException("the server has no TCP listener");
        }
        String host = options.host().contains(":") ? "[" + options.host() + "]" : options.host();
        return URI.create("http://" + host + ":" + port());
    }

    public ServerOptions options() {
        return options;
    }

    @Override
    public void close() {
        try {
            jetty.stop();
        } catch (Exception e) {
            Log.warning("stopping the HTTP server: " + e);
        }
        timer.shutdownNow();
        if (options.socket() != null) {
            try {
                Files.deleteIfExists(options.socket());
            } catch (IOException e) {
                Log.debug("cannot remove " + options.socket() + ": " + e);
            }
        }
    }

    /**
     * Serves one raw HTTP/1.1 request (head and body, exactly as on the wire) without a socket and returns the raw
     * response; a streamed response is returned once complete.
     */
    public String handle(String rawRequest) throws Exception {
        String request = rawRequest.contains("Connection: close")
                ? rawRequest
                : rawRequest.replaceFirst("\r\n", "\r\nConnection: close\r\n");
        ByteBuffer response = local.getResponse(
                ByteBuffer.wrap(request.getBytes(StandardCharsets.UTF_8)),
                options.requestTimeout().toMillis() + 5_000,
                TimeUnit.MILLISECONDS);
        return response == null ? "" : StandardCharsets.UTF_8.decode(response).toString();
    }

    /** Blocks until the server stops. */
    public void join() throws InterruptedException {
        jetty.join();
    }

    private final class Router extends Handler.Abstract {
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            String origin = request.getHeaders().get(HttpHeader.ORIGIN);
            try {
                route(request, response, callback, origin);
            } catch (ApiError e) {
                sendError(request, response, callback, origin, e);
            } catch (Exception e) {
                Log.error(
                        "HTTP " + request.getMethod() + " "
                                + request.getHttpURI().getPath() + " failed",
                        e);
                sendError(
                        request,
                        response,
                        callback,
                        origin,
                        ApiError.internal("The server failed to handle the request."));
            }
            return true;
        }
    }

    private void route(Request request, Response response, Callback callback, @Nullable String origin)
            throws Exception {
        String method = request.getMethod();
        String path = request.getHttpURI().getPath();
        if (origin != null && !originAllowed(origin)) {
            throw new ApiError(
                    403,
                    ApiError.PERMISSION,
                    null,
                    "origin_not_allowed",
                    "Requests from the origin '" + origin + "' are not allowed; start the server with --allow-origin "
                            + origin + " to allow them.");
        }
        if (method.equals("OPTIONS")) {
            preflight(request, response, callback, origin);
            return;
        }
        String allow;
        if (path.equals("/health")) {
            allow = "GET, HEAD";
        } else if (path.equals("/v1/models")
                || (path.startsWith("/v1/models/") && path.length() > "/v1/models/".length())) {
            allow = "GET, HEAD";
        } else if (CHAT_PATHS.contains(path)) {
            allow = "POST";
        } else {
            throw new ApiError(
                    404,
                    ApiError.INVALID_REQUEST,
                    null,
                    "unknown_url",
                    "Unknown request URL: " + method + " " + path
                            + ". This server serves POST /v1/chat/completions, GET /v1/models, GET "
                            + "/v1/models/{id} and GET /health.");
        }
        if (!allow.contains(method)) {
            throw new ApiError(
                    405,
                    ApiError.INVALID_REQUEST,
                    null,
                    "method_not_allowed",
                    "Method " + method + " is not allowed on " + path + "; use " + allow + ".",
                    Map.of("Allow", allow + ", OPTIONS"));
        }
        if (path.equals("/health")) {
            health(response, callback, origin);
            return;
        }
        authenticate(request);
        if (path.equals("/v1/models")) {
            sendJson(response, callback, origin, 200, modelList());
        } else if (path.startsWith("/v1/models/")) {
            String id = java.net.URLDecoder.decode(path.substring("/v1/models/".length()), StandardCharsets.UTF_8);
            ObjectNode model = modelEntry(id);
            if (model == null) {
                throw ApiError.modelNotFound(id);
            }
            sendJson(response, callback, origin, 200, model);
        } else {
            chat(request, response, callback, origin);
        }
    }

    private boolean originAllowed(String origin) {
        return options.allowedOrigins().contains("*")
                || options.allowedOrigins().contains(origin);
    }

    private void preflight(Request request, Response response, Callback callback, @Nullable String origin) {
        HttpFields.Mutable headers = response.getHeaders();
        headers.put("Allow", "GET, HEAD, POST, OPTIONS");
        if (origin != null) {
            cors(headers, origin);
            headers.put("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
            String asked = request.getHeaders().get("Access-Control-Request-Headers");
            headers.put(
                    "Access-Control-Allow-Headers",
                    asked != null && !asked.isBlank() ? asked : "Authorization, Content-Type");
            headers.put("Access-Control-Max-Age", "600");
        }
        response.setStatus(204);
        callback.succeeded();
    }

    private void cors(HttpFields.Mutable headers, @Nullable String origin) {
        if (origin != null && originAllowed(origin)) {
            headers.put("Access-Control-Allow-Origin", options.allowedOrigins().contains("*") ? "*" : origin);
            headers.put("Vary", "Origin");
            headers.put("Access-Control-Expose-Headers", "Retry-After");
        }
    }

    /** Bearer token check in constant time (both sides hashed to equal length first). */
    private void authenticate(Request request) throws ApiError {
        if (apiKeyDigest == null) {
            return;
        }
        String header = request.getHeaders().get(HttpHeader.AUTHORIZATION);
        String token = header != null && header.regionMatches(true, 0, "Bearer ", 0, 7)
                ? header.substring(7).strip()
                : null;
        if (token == null || !MessageDigest.isEqual(apiKeyDigest, sha256(token))) {
            throw new ApiError(
                    401,
                    ApiError.INVALID_REQUEST,
                    null,
                    "invalid_api_key",
                    token == null
                            ? "Missing API key: send it as 'Authorization: Bearer <key>'."
                            : "Incorrect API key provided.",
                    Map.of("WWW-Authenticate", "Bearer"));
        }
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private ObjectNode modelList() {
        ObjectNode list = Json.object();
        list.put("object", "list");
        ArrayNode data = list.putArray("data");
        for (String id : options.models().keySet()) {
            data.add(modelEntry(id));
        }
        for (String alias : options.aliases().keySet()) {
            data.add(modelEntry(alias));
        }
        return list;
    }

    private @Nullable ObjectNode modelEntry(String id) {
        if (!options.models().containsKey(id) && !options.aliases().containsKey(id)) {
            return null;
        }
        ObjectNode model = Json.object();
        model.put("id", id);
        model.put("object", "model");
        model.put("created", created);
        model.put("owned_by", "oam");
        if (options.aliases().containsKey(id)) {
            model.put("parent", options.aliases().get(id));
        }
        return model;
    }

    private @Nullable LanguageModel model(String id) {
        String target = options.aliases().getOrDefault(id, id);
        return options.models().get(target);
    }

    private void health(Response response, Callback callback, @Nullable String origin) {
        ObjectNode body = Json.object();
        ArrayNode models = Json.array();
        boolean defaultAvailable = true;
        for (Map.Entry<String, LanguageModel> entry : options.models().entrySet()) {
            ModelAvailability availability = entry.getValue().availability();
            ObjectNode model = models.addObject();
            model.put("id", entry.getKey());
            model.put("available", availability.available());
            if (!availability.available()) {
                model.put("reason", availability.reason());
                if (availability.message() != null) {
                    model.put("message", availability.message());
                }
            }
            if (entry.getKey().equals(options.defaultModel())) {
                defaultAvailable = availability.available();
            }
        }
        body.put("status", defaultAvailable ? "ok" : "unavailable");
        body.set("models", models);
        body.put("active_requests", admission.active());
        body.put("queued_requests", admission.queued());
        sendJson(response, callback, origin, defaultAvailable ? 200 : 503, body);
    }

    private void chat(Request request, Response response, Callback callback, @Nullable String origin) throws Exception {
        long deadline = System.nanoTime() + options.requestTimeout().toNanos();
        String type = request.getHeaders().get(HttpHeader.CONTENT_TYPE);
        if (type == null || !type.toLowerCase(Locale.ROOT).strip().startsWith(JSON)) {
            throw new ApiError(
                    415,
                    ApiError.INVALID_REQUEST,
                    null,
                    "unsupported_media_type",
                    "The request body must be JSON sent with 'Content-Type: application/json'"
                            + (type == null ? "." : ", not '" + type + "'."));
        }
        JsonNode root = readJson(request);
        // The request is in. Until its answer is written the connection is silent while the model works (a
        // whole non-streamed answer, a slow first token on a busy machine): the idle timeout is there against
        // slow clients and must not cut that; the request timeout bounds it instead. Restored for the next request.
        EndPoint endPoint = request.getConnectionMetaData().getConnection().getEndPoint();
        long idle = endPoint.getIdleTimeout();
        endPoint.setIdleTimeout(Math.max(idle, options.requestTimeout().toMillis() + IDLE_GRACE_MS));
        try {
            complete(request, response, callback, origin, root, deadline);
        } finally {
            endPoint.setIdleTimeout(idle);
        }
    }

    @SuppressWarnings("try") // the admission ticket is held only for the call
    private void complete(
            Request request,
            Response response,
            Callback callback,
            @Nullable String origin,
            JsonNode root,
            long deadline)
            throws Exception {
        ChatRequest chat = ChatRequest.parse(root).withServerInstructions(options.instructions());
        LanguageModel model = model(chat.model());
        if (model == null) {
            throw ApiError.modelNotFound(chat.model());
        }
        ModelAvailability availability = model.availability();
        if (!availability.available() && !availability.isLoading()) {
            throw ApiError.unavailable("The model '" + chat.model() + "' is not available"
                    + (availability.message() != null ? ": " + availability.message() : "."));
        }
        CancellationToken token = CancellationToken.create();
        CompletionCall completion = new CompletionCall(chat, model, token);
        Runnable clientGone = () -> completion.interrupt(CompletionCall.Interruption.CLIENT_GONE);
        request.addFailureListener(failure -> clientGone.run());
        DisconnectProbe probe = DisconnectProbe.start(request, timer, clientGone);
        try (probe;
                Admission.Ticket ignored = admission.enter(deadline, probe::gone)) {
            long left = deadline - System.nanoTime();
            ScheduledFuture<?> alarm = timer.schedule(
                    () -> completion.interrupt(CompletionCall.Interruption.TIMEOUT),
                    Math.max(0, left),
                    TimeUnit.NANOSECONDS);
            try {
                String id = "chatcmpl-" + dev.oam.core.tool.ToolCall.newId().substring("call_".length());
                if (chat.stream()) {
                    new SseStream(response, callback, origin, chat, completion, id, created(), this::cors, probe).run();
                } else {
                    CompletionCall.Result result = completion.run(CompletionCall.Stream.NONE);
                    probe.close();
                    sendJson(response, callback, origin, 200, Chunks.completion(id, created(), chat.model(), result));
                }
            } finally {
                alarm.cancel(false);
            }
        } catch (CompletionCall.ClientGone e) {
            Log.debug("client went away; its completion was cancelled");
            callback.failed(new IOException("client gone"));
        }
    }

    private static long created() {
        return System.currentTimeMillis() / 1000;
    }

    /**
     * The body, at most {@code maxBodyBytes}: a larger Content-Length is refused before reading; a chunked body as it
     * passes the limit.
     */
    private JsonNode readJson(Request request) throws ApiError, IOException {
        long length = request.getLength();
        int limit = options.maxBodyBytes();
        if (length > limit) {
            throw tooLarge(limit);
        }
        byte[] body;
        try (InputStream in = Content.Source.asInputStream(request)) {
            body = in.readNBytes(limit + 1);
        }
        if (body.length > limit) {
            throw tooLarge(limit);
        }
        if (body.length == 0) {
            throw ApiError.invalid(null, "invalid_json", "The request body is empty; send a JSON object.");
        }
        try {
            return Json.parse(body, 0, body.length);
        } catch (JsonProcessingException e) {
            throw ApiError.invalid(
                    null,
                    "invalid_json",
                    "The request body is not valid JSON: " + e.getOriginalMessage() + " (line "
                            + e.getLocation().getLineNr() + ", column "
                            + e.getLocation().getColumnNr() + ").");
        }
    }

    private static ApiError tooLarge(int limit) {
        return new ApiError(
                413,
                ApiError.INVALID_REQUEST,
                null,
                "malformed_request",
                "The request body is larger than the server's limit of " + limit + " bytes.",
                Map.of("Connection", "close"));
    }

    void sendJson(Response response, Callback callback, @Nullable String origin, int status, JsonNode body) {
        response.setStatus(status);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, JSON);
        cors(response.getHeaders(), origin);
        response.write(true, ByteBuffer.wrap((Json.write(body) + "\n").getBytes(StandardCharsets.UTF_8)), callback);
    }

    private void sendError(
            Request request, Response response, Callback callback, @Nullable String origin, ApiError error) {
        if (response.isCommitted()) {
            callback.failed(error);
            return;
        }
        if (error.status() >= 500) {
            Log.warning("HTTP " + error.status() + " " + error.code() + ": " + error.getMessage());
        } else {
            Log.debug("HTTP " + error.status() + " " + error.code() + ": " + error.getMessage());
        }
        response.reset();
        for (Map.Entry<String, String> header : error.headers().entrySet()) {
            response.getHeaders().put(header.getKey(), header.getValue());
        }
        sendJson(response, callback, origin, error.status(), error.envelope());
    }

    /**
     * Errors Jetty answers itself (a malformed request line or header, a head over the limit, a bad chunk) get the same
     * JSON envelope as the server's own.
     */
    private static final class EnvelopeErrorHandler extends ErrorHandler {
        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            int status = response.getStatus();
            Object message = request.getAttribute(ERROR_MESSAGE);
            ObjectNode body = envelopeFor(status, message == null ? null : message.toString());
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, JSON);
            response.write(true, ByteBuffer.wrap((Json.write(body) + "\n").getBytes(StandardCharsets.UTF_8)), callback);
            return true;
        }

        private static ObjectNode envelopeFor(int status, @Nullable String reason) {
            String detail = reason == null || reason.isBlank() ? "" : ": " + reason;
            return switch (status) {
                case 431 ->
                    ApiError.envelope(
                            "The request head is larger than the server's limit" + detail + ".",
                            ApiError.INVALID_REQUEST,
                            null,
                            "malformed_request");
                case 413 ->
                    ApiError.envelope(
                            "The request body is larger than the server's limit" + detail + ".",
                            ApiError.INVALID_REQUEST,
                            null,
                            "malformed_request");
                case 408 ->
                    ApiError.envelope(
                            "The request was not received in time" + detail + ".",
                            ApiError.INVALID_REQUEST,
                            null,
                            "timeout");
                default ->
                    status >= 500
                            ? ApiError.envelope(
                                    "The server failed" + detail + ".", ApiError.SERVER, null, "internal_error")
                            : ApiError.envelope(
                                    "Malformed HTTP request" + detail + ".",
                                    ApiError.INVALID_REQUEST,
                                    null,
                                    "malformed_request");
            };
        }
    }

    /** Adds the CORS headers for an allowed origin (what {@link SseStream} calls when it commits). */
    interface CorsHeaders {
        void apply(HttpFields.Mutable headers, @Nullable String origin);
    }

    static OutputStream body(Response response) {
        return Content.Sink.asOutputStream(response);
    }
}
