package dev.oam.testing.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.oam.core.json.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * An OpenAI-compatible Chat Completions server on 127.0.0.1 that plays a script of model outputs and behaves like the
 * real servers it stands for, quirks included: Ollama (ignores {@code tool_choice}, models without tool support),
 * llama-server (empty call ids, 500 on streaming with tools, rejects a tool without a description; b4748 ignoring
 * {@code response_format: json_schema}), 429 with {@code Retry-After}, SSE written in awkward byte pieces, a connection
 * dropped mid-stream, content filters, refusals, context-length errors and unknown models. Every request is recorded
 * for assertions.
 */
public final class FakeOpenAIServer implements AutoCloseable {
    public enum Quirk {
        /** Ollama: a forced step may be answered with text. Without it, text for a forced step is a script error. */
        IGNORES_TOOL_CHOICE,
        /** llama-server: tool calls come with {@code "id": ""}. */
        EMPTY_IDS,
        /** llama-server (some versions): 500 when a streamed request carries tools. */
        NO_STREAM_WITH_TOOLS,
        /** Ollama with a model without a tool template: 400 for any request with tools. */
        NO_TOOL_SUPPORT,
        /** SSE lines end in CRLF and carry keep-alive comments. */
        CRLF,
        /** Tool-call deltas carry no {@code index}. */
        NO_INDEX,
        /**
         * llama-server b4748: {@code response_format: {"type": "json_schema", …}} is answered with 200 and ignored (the
         * model writes {@link #UNCONSTRAINED}), while {@code {"type": "json_object", "schema": …}} and a top-level
         * {@code json_schema} are honoured (the script plays).
         */
        IGNORES_RESPONSE_FORMAT_SCHEMA,
        /**
         * A server that honours no schema at all, in whatever way it is sent: every constrained request gets
         * {@link #UNCONSTRAINED}.
         */
        IGNORES_SCHEMAS,
    }

    /** What the fake model writes for a request whose schema the server ignored (no script entry is used). */
    public static final String UNCONSTRAINED = "Well, let me think about that. I would say it depends.";

    /** What the fake model does for one chat request. */
    public sealed interface Reply {}

    public record Text(String text) implements Reply {}

    public record Calls(List<Call> calls) implements Reply {}

    public record Refusal(String text) implements Reply {}

    public record Filtered(String partial) implements Reply {}

    public record Error(int status, String body, Map<String, String> headers) implements Reply {}

    /** Streams {@code partial}, then breaks the connection. */
    public record Drop(String partial) implements Reply {}

    /** Streams {@code partial}, then keeps the connection open (with keep-alive comments) until the client leaves. */
    public record Hang(String partial) implements Reply {}

    /** Streams {@code partial}, then ends the response cleanly but without {@code finish_reason} or {@code [DONE]}. */
    public record Truncated(String partial) implements Reply {}

    /**
     * Streams {@code partial} (or, in a request with tools, {@code calls} whose arguments may be cut mid-way), then
     * ends with {@code finish_reason: "length"}, as a server does when {@code max_tokens} runs out. In a request
     * without tools but with a schema (emulation), the first call is written as {@code {"name", "arguments": partial}}
     * JSON.
     */
    public record Cut(String partial, List<Call> calls) implements Reply {}

    public record Call(String name, String arguments) {}

    public record Recorded(String method, String path, Map<String, List<String>> headers, JsonNode body) {
        public String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue().get(0);
                }
            }
            return null;
        }

        public boolean streamed() {
            return body.path("stream").asBoolean(false);
        }

        public boolean hasTools() {
            return body.path("tools").isArray() && !body.path("tools").isEmpty();
        }

        public List<String> toolNames() {
            List<String> names = new ArrayList<>();
            body.path("tools")
                    .forEach(t -> names.add(t.path("function").path("name").asText()));
            return names;
        }

        public JsonNode messages() {
            return body.path("messages");
        }
    }

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final Set<Quirk> quirks;
    private final ConcurrentLinkedQueue<Reply> script = new ConcurrentLinkedQueue<>();
    private final List<Recorded> requests = new CopyOnWriteArrayList<>();
    private final List<String> problems = new CopyOnWriteArrayList<>();
    private volatile List<String> models = List.of("fake-model");
    private volatile String ownedBy = "fake";
    private volatile int modelsStatus = 200;
    private volatile String requiredKey;
    private volatile Function<Recorded, Reply> responder;
    private final OpenAIWire wire;
    private final Object requestsLock = new Object();
    public final CountDownLatch clientLeft = new CountDownLatch(1);
    public final CountDownLatch hanging = new CountDownLatch(1);

    private FakeOpenAIServer(Set<Quirk> quirks, int port) throws IOException {
        this.quirks = quirks;
        this.wire = new OpenAIWire(quirks, () -> chats().size());
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 0);
        server.setExecutor(executor);
        server.createContext("/v1/", this::handle);
        // llama-server's readiness check, for the fake llama-server binaries of the supervised backend's tests
        server.createContext(
                "/health",
                exchange -> OpenAIWire.send(exchange, 200, Json.object().put("status", "ok"), Map.of()));
        server.start();
    }

    public static FakeOpenAIServer start(Quirk... quirks) throws IOException {
        return startOn(0, quirks);
    }

    /** The same on a given loopback port (0 for a free one). */
    public static FakeOpenAIServer startOn(int port, Quirk... quirks) throws IOException {
        return new FakeOpenAIServer(
                quirks.length == 0 ? EnumSet.noneOf(Quirk.class) : EnumSet.copyOf(List.of(quirks)), port);
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
    }

    /** The model spec of a session using this server. */
    public String spec(String extra) {
        return "{\"type\":\"openai\",\"baseUrl\":\"" + baseUrl() + "\",\"model\":\"fake-model\""
                + (extra.isEmpty() ? "" : "," + extra) + "}";
    }

    public FakeOpenAIServer then(Reply... replies) {
        script.addAll(List.of(replies));
        return this;
    }

    /**
     * What to answer once the script is used up, decided per request (for clients whose order of requests is not fixed,
     * such as a whole test suite in another language); without it such a request is a script error.
     */
    public FakeOpenAIServer otherwise(Function<Recorded, Reply> replies) {
        this.responder = replies;
        return this;
    }

    public FakeOpenAIServer models(String ownedBy, String... ids) {
        this.models = List.of(ids);
        this.ownedBy = ownedBy;
        return this;
    }

    public FakeOpenAIServer modelsStatus(int status) {
        this.modelsStatus = status;
        return this;
    }

    public FakeOpenAIServer requireKey(String key) {
        this.requiredKey = key;
        return this;
    }

    public FakeOpenAIServer pieces(int... sizes) {
        wire.pieces(sizes);
        return this;
    }

    public FakeOpenAIServer usage(int prompt, int cached) {
        wire.usage(prompt, cached);
        return this;
    }

    public static Text text(String text) {
        return new Text(text);
    }

    public static Calls call(String name, String arguments) {
        return new Calls(List.of(new Call(name, arguments)));
    }

    public static Calls calls(Call... calls) {
        return new Calls(List.of(calls));
    }

    /** Text cut by {@code max_tokens}. */
    public static Cut cut(String partial) {
        return new Cut(partial, List.of());
    }

    /** A call whose {@code partialArguments} were cut by {@code max_tokens}. */
    public static Cut cutCall(String name, String partialArguments) {
        return new Cut("", List.of(new Call(name, partialArguments)));
    }

    public static Error error(int status, String body, Map<String, String> headers) {
        return new Error(status, body, headers);
    }

    /** Chat requests so far, in arrival order. */
    public List<Recorded> chats() {
        return requests.stream()
                .filter(r -> r.path().endsWith("/chat/completions"))
                .toList();
    }

    public List<Recorded> requests() {
        return List.copyOf(requests);
    }

    /** Waits until {@code count} chat requests have arrived. */
    public Recorded chat(int index) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        synchronized (requestsLock) {
            while (chats().size() <= index) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("chat request " + index + " never arrived; got " + chats().size());
                }
                requestsLock.wait(Math.max(1, left / 1_000_000));
            }
        }
        return chats().get(index);
    }

    /** Script errors the fake noticed (a test bug when not empty). */
    public List<String> problems() {
        return problems;
    }

    public int remaining() {
        return script.size();
    }

    private void handle(HttpExchange exchange) throws IOException {
        JsonNode body;
        byte[] raw = exchange.getRequestBody().readAllBytes();
        try {
            body = raw.length == 0 ? Json.object() : Json.parse(new String(raw, StandardCharsets.UTF_8));
        } catch (IOException e) {
            OpenAIWire.send(exchange, 400, OpenAIWire.error("invalid_request_error", "body is not JSON"), Map.of());
            return;
        }
        Recorded request = new Recorded(
                exchange.getRequestMethod(),
                exchange.getRequestURI().getPath(),
                Map.copyOf(exchange.getRequestHeaders()),
                body);
        requests.add(request);
        synchronized (requestsLock) {
            requestsLock.notifyAll();
        }
        if (requiredKey != null) {
            String auth = request.header("Authorization");
            if (auth == null || !auth.equals("Bearer " + requiredKey)) {
                // Like OpenAI, echo (part of) the key that was rejected.
                OpenAIWire.send(
                        exchange,
                        401,
                        OpenAIWire.error(
                                "invalid_api_key",
                                "Incorrect API key provided: "
                                        + (auth == null ? "none" : auth.substring(Math.min(7, auth.length())))),
                        Map.of());
                return;
            }
        }
        String path = request.path();
        if (path.equals("/v1/models") && request.method().equals("GET")) {
            if (modelsStatus != 200) {
                OpenAIWire.send(exchange, modelsStatus, OpenAIWire.error("not_found", "no such endpoint"), Map.of());
                return;
            }
            ObjectNode list = Json.object();
            list.put("object", "list");
            ArrayNode data = list.putArray("data");
            for (String id : models) {
                data.addObject().put("id", id).put("object", "model").put("owned_by", ownedBy);
            }
            OpenAIWire.send(exchange, 200, list, Map.of());
            return;
        }
        if (!path.equals("/v1/chat/completions") || !request.method().equals("POST")) {
            OpenAIWire.send(exchange, 404, OpenAIWire.error("not_found", "unknown url " + path), Map.of());
            return;
        }
        chat(exchange, request);
    }

    private void chat(HttpExchange exchange, Recorded request) throws IOException {
        JsonNode body = request.body();
        String model = body.path("model").asText("");
        if (!models.contains(model) && !ownedBy.equals("llamacpp")) {
            OpenAIWire.send(
                    exchange,
                    404,
                    OpenAIWire.error("model_not_found", "model \"" + model + "\" not found, try pulling it first"),
                    Map.of());
            return;
        }
        if (quirks.contains(Quirk.NO_TOOL_SUPPORT) && request.hasTools()) {
            OpenAIWire.send(
                    exchange,
                    400,
                    OpenAIWire.error(
                            "invalid_request_error", "registry.ollama.ai/library/" + model + " does not support tools"),
                    Map.of());
            return;
        }
        if (quirks.contains(Quirk.NO_STREAM_WITH_TOOLS) && request.streamed() && request.hasTools()) {
            ObjectNode error = Json.object();
            error.putObject("error")
                    .put("code", 500)
                    .put("message", "Cannot use tools with stream")
                    .put("type", "server_error");
            OpenAIWire.send(exchange, 500, error, Map.of());
            return;
        }
        for (JsonNode tool : body.path("tools")) {
            if (!tool.path("function").path("description").isTextual()) {
                OpenAIWire.send(
                        exchange, 400, OpenAIWire.error("invalid_request_error", "tool has no description"), Map.of());
                return;
            }
        }
        if (ignoredSchema(body)) {
            wire.answer(exchange, request, UNCONSTRAINED, List.of(), "stop", null);
            return;
        }
        Reply reply = script.poll();
        if (reply == null && responder != null) {
            reply = responder.apply(request);
        }
        if (reply == null) {
            problems.add("script exhausted at request " + chats().size());
            OpenAIWire.send(exchange, 500, OpenAIWire.error("server_error", "fake: the script is exhausted"), Map.of());
            return;
        }
        JsonNode choice = body.get("tool_choice");
        boolean forced = choice != null && (choice.isObject() || "required".equals(choice.asText()));
        if (reply instanceof Text && forced && !quirks.contains(Quirk.IGNORES_TOOL_CHOICE)) {
            problems.add("text scripted for a forced step");
            OpenAIWire.send(
                    exchange, 500, OpenAIWire.error("server_error", "fake: text scripted for a forced step"), Map.of());
            return;
        }
        switch (reply) {
            case Error e -> {
                exchange.getResponseHeaders().add("Content-Type", "application/json");
                e.headers().forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
                byte[] bytes = e.body().getBytes(StandardCharsets.UTF_8);
                exchange.sendResponseHeaders(e.status(), bytes.length);
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(bytes);
                }
            }
            case Text t -> wire.answer(exchange, request, t.text(), List.of(), "stop", null);
            case Refusal r -> wire.answer(exchange, request, "", List.of(), "stop", r.text());
            case Filtered f -> wire.answer(exchange, request, f.partial(), List.of(), "content_filter", null);
            case Cut cut -> {
                if (request.hasTools() || cut.calls().isEmpty()) {
                    wire.answer(
                            exchange,
                            request,
                            cut.partial(),
                            request.hasTools() ? cut.calls() : List.of(),
                            "length",
                            null);
                } else {
                    Call first = cut.calls().get(0);
                    wire.answer(
                            exchange,
                            request,
                            "{\"name\": \"" + first.name() + "\", \"arguments\": " + first.arguments(),
                            List.of(),
                            "length",
                            null);
                }
            }
            case Calls c -> {
                if (request.hasTools()) {
                    wire.answer(exchange, request, "", c.calls(), "tool_calls", null);
                } else if (schemaOf(body) != null
                        && c.calls().size() > 1
                        && Json.write(schemaOf(body)).contains("\"calls\"")) {
                    // emulation that allows several calls at once
                    List<String> items = c.calls().stream()
                            .map(call -> "{\"name\": \"" + call.name() + "\", \"arguments\": " + call.arguments() + "}")
                            .toList();
                    wire.answer(
                            exchange,
                            request,
                            "{\"calls\": [" + String.join(", ", items) + "]}",
                            List.of(),
                            "stop",
                            null);
                } else if (schemaOf(body) != null) {
                    Call first = c.calls().get(0);
                    wire.answer(
                            exchange,
                            request,
                            "{\"name\": \"" + first.name() + "\", \"arguments\": " + first.arguments() + "}",
                            List.of(),
                            "stop",
                            null);
                } else {
                    problems.add("calls scripted but no tools offered");
                    OpenAIWire.send(
                            exchange,
                            500,
                            OpenAIWire.error("server_error", "fake: calls scripted but no tools offered"),
                            Map.of());
                }
            }
            case Drop d -> {
                OpenAIWire.startStream(exchange);
                OutputStream out = exchange.getResponseBody();
                wire.write(out, OpenAIWire.textChunks(d.partial()));
                throw new IOException("fake: connection dropped"); // the server closes the socket mid-body
            }
            case Truncated t -> {
                OpenAIWire.startStream(exchange);
                try (OutputStream out = exchange.getResponseBody()) {
                    wire.write(out, OpenAIWire.textChunks(t.partial()));
                }
            }
            case Hang h -> {
                OpenAIWire.startStream(exchange);
                OutputStream out = exchange.getResponseBody();
                wire.write(out, OpenAIWire.textChunks(h.partial()));
                hanging.countDown();
                long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
                try {
                    while (System.nanoTime() < deadline) {
                        out.write(": keep-alive\n\n".getBytes(StandardCharsets.UTF_8));
                        out.flush();
                        if (clientLeft.await(5, TimeUnit.MILLISECONDS)) {
                            break;
                        }
                    }
                } catch (IOException e) {
                    clientLeft.countDown();
                    throw e;
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                out.close();
            }
        }
    }

    /**
     * The schema a request constrains its answer with, in whichever of the known ways it is sent ({@code null}: none).
     */
    public static JsonNode schemaOf(JsonNode body) {
        JsonNode format = body.path("response_format");
        if (format.path("type").asText().equals("json_schema")
                && format.path("json_schema").has("schema")) {
            return format.path("json_schema").get("schema");
        }
        if (format.path("type").asText().equals("json_object") && format.has("schema")) {
            return format.get("schema");
        }
        for (String member : List.of("json_schema", "guided_json", "format")) {
            if (body.path(member).isObject()) {
                return body.get(member);
            }
        }
        return null;
    }

    private boolean ignoredSchema(JsonNode body) {
        if (schemaOf(body) == null) {
            return false;
        }
        if (quirks.contains(Quirk.IGNORES_SCHEMAS)) {
            return true;
        }
        if (!quirks.contains(Quirk.IGNORES_RESPONSE_FORMAT_SCHEMA)) {
            return false;
        }
        JsonNode format = body.path("response_format");
        boolean honoured = (format.path("type").asText().equals("json_object") && format.has("schema"))
                || body.path("json_schema").isObject();
        return !honoured;
    }

    /** Splits by code points so a piece never cuts a surrogate pair (the byte writer cuts characters instead). */
    public static List<String> split(String text, int size) {
        return OpenAIWire.split(text, size);
    }

    @Override
    public void close() {
        clientLeft.countDown();
        server.stop(0);
        executor.shutdownNow();
    }
}
