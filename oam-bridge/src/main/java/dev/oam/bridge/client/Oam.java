package dev.oam.bridge.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.game.GameCoding;
import dev.oam.bridge.game.GameExtension;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import dev.oam.game.decision.Decision;
import dev.oam.game.decision.DecisionOption;
import dev.oam.game.npc.Memory;
import dev.oam.game.npc.NpcOptions;
import dev.oam.game.npc.Persona;
import dev.oam.game.world.WorldState;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * An engine for a JVM host (a game server, a Minecraft mod), used through Java objects instead of JSON-RPC lines:
 *
 * <pre>{@code
 * try (Oam oam = Oam.create(BridgeConfiguration.builder().systemModel(spec).build())) {
 *     OamSession guard = oam.sessions().create("You guard the gate.", ClientTool.of("open_gate", "Opens the gate.",
 *             call -> gate.open() ? "opened" : "stuck"));
 *     guard.respond("Let me in!").thenAccept(reply -> show(reply.text()));
 *     OamNpc gorm = oam.npcs().create(Persona.builder("Gorm").role("the blacksmith").build());
 *     NpcReply line = gorm.talk("Any axes?").join();
 * }
 * }</pre>
 *
 * <p>Every call is a JSON-RPC request to the engine in this JVM ({@link BridgeEngine#callMessage}), so ids, queues,
 * limits, events and errors are exactly the wire's; an error response completes the future with (or throws) an
 * {@link OamException} carrying its code. Methods returning a future run on the engine's own threads and never block;
 * the others are answered at once by the engine and return their value. Listeners and subscription callbacks are called
 * on the engine's writer thread, one at a time, in the order of the wire: they must not block, nor call the blocking
 * methods of this API. Tool handlers run on virtual threads of their own and may block.
 *
 * <p>Thread-safe. {@link #engine()} is the same engine for JSON-RPC use alongside: the lines of requests sent there
 * (their events, {@code tool/call}s and world changes) go to the sink given to {@link #create(BridgeConfiguration,
 * Consumer)}, which answers tool calls with {@code engine().receive(…)} as a wire host does.
 */
public final class Oam implements AutoCloseable {
    /** What the engine's messages about one request of this class are delivered to. */
    private record Unclaimed(WorldChanged change, String line) {}

    record Route(Map<String, ClientTool> tools, @Nullable Consumer<JsonNode> events) {
        static final Route NONE = new Route(Map.of(), null);
    }

    private final AtomicLong requestIds = new AtomicLong();
    private final Map<String, Route> routes = new ConcurrentHashMap<>();
    private final Map<String, Consumer<WorldChanged>> subscriptions = new ConcurrentHashMap<>();
    /**
     * Changes of subscriptions not yet known while a subscribe is in flight, with their lines; guarded by
     * subscriptions.
     */
    private final Map<String, List<Unclaimed>> unclaimed = new LinkedHashMap<>();

    private final AtomicLong subscribing = new AtomicLong();
    private final BridgeEngine engine;
    private final Consumer<String> otherLines;
    private final Sessions sessions = new Sessions();
    private final Npcs npcs = new Npcs();
    private final Worlds worlds = new Worlds();

    private Oam(BridgeConfiguration configuration, Consumer<String> otherLines) {
        this.otherLines = otherLines;
        this.engine = new BridgeEngine(configuration, this::deliver);
    }

    /** An engine built from {@code configuration} (its system model serves every session, NPC and decision). */
    public static Oam create(BridgeConfiguration configuration) {
        return create(configuration, line -> Log.debug("oam: a line for no request of this API: " + line));
    }

    /**
     * An engine whose lines about requests sent to {@link #engine()} directly go to {@code otherLines} (called on the
     * writer thread, one line at a time, as {@link BridgeEngine}'s sink is; a {@code world/changed} of such a request
     * that arrives while a {@link OamWorld#subscribe} is in flight is passed on after it, from the subscribing thread).
     */
    public static Oam create(BridgeConfiguration configuration, Consumer<String> otherLines) {
        return new Oam(
                Objects.requireNonNull(configuration, "configuration"),
                Objects.requireNonNull(otherLines, "otherLines"));
    }

    public Sessions sessions() {
        return sessions;
    }

    public Npcs npcs() {
        return npcs;
    }

    public Worlds worlds() {
        return worlds;
    }

    /** The engine underneath, for JSON-RPC requests this API does not cover. */
    public BridgeEngine engine() {
        return engine;
    }

    /**
     * {@code decision/decide}: picks one of {@code options} for {@code situation}. A single option is answered at once.
     */
    public CompletableFuture<Decision> decide(String situation, List<DecisionOption> options) {
        return decide(situation, options, null, null);
    }

    /**
     * {@code decision/decide} deciding as {@code actor} (its persona), with {@code fallbackOptionID} the answer when
     * the model is blocked by a guardrail or refuses.
     */
    public CompletableFuture<Decision> decide(
            String situation, List<DecisionOption> options, @Nullable String fallbackOptionID, @Nullable OamNpc actor) {
        ObjectNode params = Json.object();
        params.put("situation", situation);
        ArrayNode list = params.putArray("options");
        for (DecisionOption option : options) {
            list.addObject().put("id", option.id()).put("description", option.description());
        }
        if (fallbackOptionID != null) {
            params.put("fallbackOptionID", fallbackOptionID);
        }
        if (actor != null) {
            params.put("actor", actor.id());
        }
        return call("decision/decide", params, Route.NONE).thenApply(Decoding::decision);
    }

    /** Shuts the engine down: running work is cancelled and answered, then the writer stops. */
    @Override
    public void close() {
        engine.close();
    }

    // ------------------------------------------------------------------------------------ sessions

    /** {@code session/*}. */
    public final class Sessions {
        private Sessions() {}

        /** A session with no instructions and no tools. */
        public OamSession create() {
            return create(null, null, List.of());
        }

        public OamSession create(@Nullable String instructions, ClientTool... tools) {
            return create(null, instructions, List.of(tools));
        }

        /**
         * {@code session/create}.
         *
         * @param id the session's id, or {@code null} for a generated one ({@code s1}, …)
         * @throws OamException as {@code session/create} answers (an id in use, too many sessions, a bad tool)
         */
        public OamSession create(@Nullable String id, @Nullable String instructions, List<ClientTool> tools) {
            ObjectNode params = Json.object();
            if (id != null) {
                params.put("session", id);
            }
            if (instructions != null) {
                params.put("instructions", instructions);
            }
            params.set("tools", toolDefinitions(tools));
            JsonNode result = await(call("session/create", params, Route.NONE));
            return new OamSession(Oam.this, result.path("session").asText(), tools, strings(result.path("warnings")));
        }
    }

    // ------------------------------------------------------------------------------------ NPCs

    /** {@code npc/*}. */
    public final class Npcs {
        private Npcs() {}

        /** An NPC with default options, no tools and no world. */
        public OamNpc create(Persona persona) {
            return builder(persona).create();
        }

        public OamNpc create(Persona persona, NpcOptions options, ClientTool... tools) {
            return builder(persona).options(options).tools(tools).create();
        }

        /** An NPC with more than a persona: {@code builder(persona).id("gorm").world(village).memory(m).create()}. */
        public Builder builder(Persona persona) {
            return new Builder(Objects.requireNonNull(persona, "persona"));
        }

        /** The parameters of one {@code npc/create}; not thread-safe, used once. */
        public final class Builder {
            private final Persona persona;
            private @Nullable String id;
            private @Nullable NpcOptions options;
            private List<ClientTool> tools = List.of();
            private @Nullable OamWorld world;
            private @Nullable Memory memory;

            private Builder(Persona persona) {
                this.persona = persona;
            }

            /** The NPC's id; unset: a generated one ({@code npc1}, …). */
            public Builder id(String id) {
                this.id = Objects.requireNonNull(id, "id");
                return this;
            }

            /** Unset: the defaults (with the engine's tool timeout). */
            public Builder options(NpcOptions options) {
                this.options = Objects.requireNonNull(options, "options");
                return this;
            }

            public Builder tools(ClientTool... tools) {
                this.tools = List.of(tools);
                return this;
            }

            /** The world its world tools read and write. */
            public Builder world(OamWorld world) {
                this.world = Objects.requireNonNull(world, "world");
                return this;
            }

            /** What it remembers from the start; unset: nothing. */
            public Builder memory(Memory memory) {
                this.memory = Objects.requireNonNull(memory, "memory");
                return this;
            }

            /**
             * {@code npc/create}.
             *
             * @throws OamException as {@code npc/create} answers (the id in use, too many NPCs, a bad tool or option)
             */
            public OamNpc create() {
                ObjectNode params = Json.object();
                if (id != null) {
                    params.put("npc", id);
                }
                params.set("persona", GameCoding.persona(persona));
                if (options != null) {
                    params.set("options", GameCoding.options(options));
                }
                params.set("tools", toolDefinitions(tools));
                if (world != null) {
                    params.put("world", world.id());
                }
                if (memory != null) {
                    params.set("memory", GameCoding.memory(memory));
                }
                JsonNode result = await(call("npc/create", params, Route.NONE));
                return new OamNpc(
                        Oam.this,
                        result.path("npc").asText(),
                        tools,
                        strings(result.path("tools")),
                        strings(result.path("warnings")));
            }
        }

        /**
         * {@code npc/restore}: the NPC {@link OamNpc#save} saved, under its saved id, with {@code tools} answering its
         * saved client tools (a saved world that no longer exists is dropped with a warning).
         *
         * @throws IllegalArgumentException {@code saved} is not a text {@code save} returned
         * @throws OamException as {@code npc/restore} answers (the id in use, a state it cannot read)
         */
        public OamNpc restore(String saved, ClientTool... tools) {
            ObjectNode params = Json.object();
            try {
                params.set("state", Json.parse(saved));
            } catch (JsonProcessingException e) {
                throw new IllegalArgumentException("Not an NPC save: " + e.getOriginalMessage(), e);
            }
            JsonNode result = await(call("npc/restore", params, Route.NONE));
            return new OamNpc(
                    Oam.this,
                    result.path("npc").asText(),
                    List.of(tools),
                    strings(result.path("tools")),
                    strings(result.path("warnings")));
        }
    }

    // ------------------------------------------------------------------------------------ worlds

    /** {@code world/*}. */
    public final class Worlds {
        private Worlds() {}

        /** {@code world/create} with an empty state; {@code id} {@code null} for a generated one ({@code w1}, …). */
        public OamWorld create(@Nullable String id) {
            return create(id, Map.of());
        }

        /** {@code world/create} with {@code state} (Java values: maps, lists, strings, numbers, booleans, null). */
        public OamWorld create(@Nullable String id, Map<String, ?> state) {
            ObjectNode params = Json.object();
            if (id != null) {
                params.put("world", id);
            }
            params.set("state", Json.mapper().valueToTree(state));
            JsonNode result = await(call("world/create", params, Route.NONE));
            return new OamWorld(Oam.this, result.path("world").asText());
        }

        /** Shares a world the host owns under {@code id}; NPCs, requests and subscriptions then use it. */
        public OamWorld share(WorldState world, String id) {
            GameExtension game = engine.extension(GameExtension.class)
                    .orElseThrow(() -> new IllegalStateException("The engine has no game extension."));
            try {
                game.addWorld(world, id);
            } catch (BridgeException e) {
                throw exception(e);
            }
            return new OamWorld(Oam.this, id);
        }
    }

    // ------------------------------------------------------------------------------------ the wire path

    /** Sends one request; the future completes with its result, or with an {@link OamException}. */
    CompletableFuture<JsonNode> call(String method, ObjectNode params, Route route) {
        String id = "oam-" + requestIds.incrementAndGet();
        ObjectNode message = Json.object();
        message.put("jsonrpc", "2.0");
        message.put("id", id);
        message.put("method", method);
        message.set("params", params);
        if (route != Route.NONE) {
            routes.put(id, route);
        }
        return engine.callMessage(message).thenCompose(response -> {
            routes.remove(id);
            JsonNode error = response.get("error");
            if (error == null) {
                return CompletableFuture.completedFuture(response.path("result"));
            }
            return CompletableFuture.failedFuture(new OamException(
                    error.path("code").asInt(),
                    error.path("data").path("code").asText("internal_error"),
                    error.path("message").asText()));
        });
    }

    /** The result of a request answered at once; its error as the {@link OamException} itself. */
    static <T> T await(CompletableFuture<T> future) {
        try {
            return future.get();
        } catch (ExecutionException e) {
            throw unwrap(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OamException(-32009, "cancelled", "Interrupted while waiting for the engine.");
        }
    }

    private static RuntimeException unwrap(@Nullable Throwable cause) {
        if (cause instanceof CompletionException c && c.getCause() != null) {
            cause = c.getCause();
        }
        if (cause instanceof RuntimeException r) {
            return r;
        }
        return new OamException(-32603, "internal_error", String.valueOf(cause));
    }

    static OamException exception(BridgeException e) {
        return new OamException(e.code(), e.dataCode(), e.getMessage());
    }

    /** Subscribes through {@code world/subscribe}, delivering every change of the subscription from the first on. */
    Subscription subscribe(OamWorld world, @Nullable String path, Consumer<WorldChanged> callback) {
        ObjectNode params = Json.object();
        params.put("world", world.id());
        if (path != null) {
            params.put("path", path);
        }
        subscribing.incrementAndGet();
        try {
            JsonNode result = await(call("world/subscribe", params, Route.NONE));
            String id = result.path("subscription").asText();
            List<Unclaimed> early;
            synchronized (subscriptions) {
                subscriptions.put(id, callback);
                early = unclaimed.remove(id);
            }
            if (early != null) {
                early.forEach(e -> callback.accept(e.change())); // delivered between the response and the line above
            }
            return new Subscription(
                    this, id, result.path("world").asText(), result.path("path").asText());
        } finally {
            List<Unclaimed> others = new ArrayList<>();
            synchronized (subscriptions) {
                if (subscribing.decrementAndGet() == 0) {
                    unclaimed.values().forEach(others::addAll);
                    unclaimed.clear();
                }
            }
            others.forEach(e -> otherLines.accept(e.line())); // another host's subscriptions (made through engine())
        }
    }

    void unsubscribe(String subscription) {
        ObjectNode params = Json.object().put("subscription", subscription);
        try {
            await(call("world/unsubscribe", params, Route.NONE));
        } finally {
            subscriptions.remove(subscription);
        }
    }

    static ArrayNode toolDefinitions(List<ClientTool> tools) {
        ArrayNode array = Json.array();
        for (ClientTool tool : tools) {
            ObjectNode node = array.addObject();
            node.put("name", tool.name());
            if (tool.description() != null) {
                node.put("description", tool.description());
            }
            try {
                node.set("parameters", Json.parse(tool.parametersSchema()));
            } catch (JsonProcessingException e) {
                throw new IllegalArgumentException(
                        "The parameters of the tool '" + tool.name() + "' are not JSON: " + e.getOriginalMessage(), e);
            }
            if (tool.timeout() != null) {
                node.put("timeoutSeconds", tool.timeout().toMillis() / 1000.0);
            }
        }
        return array;
    }

    static Map<String, ClientTool> byName(List<ClientTool> tools) {
        Map<String, ClientTool> map = new LinkedHashMap<>();
        tools.forEach(t -> map.put(t.name(), t));
        return Map.copyOf(map);
    }

    static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return List.copyOf(out);
    }

    /** Every line the engine writes: answers tool calls, and hands events and world changes to their listeners. */
    private void deliver(String line) {
        JsonNode message;
        try {
            message = Json.parse(line);
        } catch (JsonProcessingException e) {
            Log.warning("oam: an engine line that is not JSON: " + e.getOriginalMessage());
            return;
        }
        JsonNode params = message.path("params");
        JsonNode requestId = params.path("requestId");
        Route route = requestId.isTextual() ? routes.get(requestId.textValue()) : null;
        switch (message.path("method").asText("")) {
            case "tool/call" -> {
                if (route != null) {
                    JsonNode id = message.path("id");
                    JsonNode call = params.path("call");
                    Thread.ofVirtual()
                            .name("oam-tool-" + call.path("name").asText())
                            .start(() -> answer(id, route, call));
                    return;
                }
            }
            case "session/event", "npc/event" -> {
                if (route != null) {
                    if (route.events() != null) {
                        route.events().accept(params.path("event"));
                    }
                    return;
                }
            }
            case "tool/cancel" -> {
                if (route != null) {
                    return; // the handler keeps running; its answer is ignored
                }
            }
            case GameExtension.WORLD_CHANGED -> {
                WorldChanged change = Decoding.worldChange(params);
                Consumer<WorldChanged> callback;
                synchronized (subscriptions) {
                    callback = subscriptions.get(change.subscription());
                    if (callback == null && subscribing.get() > 0) {
                        unclaimed
                                .computeIfAbsent(change.subscription(), k -> new ArrayList<>())
                                .add(new Unclaimed(change, line));
                        return;
                    }
                }
                if (callback != null) {
                    callback.accept(change);
                    return;
                }
            }
            default -> {}
        }
        otherLines.accept(line);
    }

    /**
     * Runs a client tool and answers its {@code tool/call} when the handler's stage completes (at once for a
     * synchronous tool; from the completing thread for an asynchronous one); a thrown exception or a stage completed
     * exceptionally is an error output.
     */
    private void answer(JsonNode id, Route route, JsonNode call) {
        String name = call.path("name").asText();
        ClientTool tool = route.tools().get(name);
        if (tool == null) {
            sendToolResult(id, "No handler for the tool '" + name + "' in this host.", true);
            return;
        }
        CompletionStage<String> stage;
        try {
            Map<String, @Nullable Object> arguments = Decoding.javaMap(call.path("arguments"));
            stage = tool.handler().call(new ToolInvocation(name, arguments));
        } catch (Exception e) {
            sendToolResult(id, message(e), true);
            return;
        }
        if (stage == null) {
            sendToolResult(id, "The tool '" + name + "' returned no CompletionStage.", true);
            return;
        }
        stage.whenComplete((output, error) -> {
            if (error != null) {
                Throwable cause =
                        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
                sendToolResult(id, message(cause), true);
            } else {
                sendToolResult(id, output, false);
            }
        });
    }

    private static String message(Throwable e) {
        return e.getMessage() == null ? e.toString() : e.getMessage();
    }

    private void sendToolResult(JsonNode id, @Nullable String output, boolean isError) {
        ObjectNode result = Json.object();
        result.put("output", output);
        if (isError) {
            result.put("isError", true);
        }
        ObjectNode response = Json.object();
        response.put("jsonrpc", "2.0");
        response.set("id", id);
        response.set("result", result);
        engine.receive(Json.write(response));
    }
}
