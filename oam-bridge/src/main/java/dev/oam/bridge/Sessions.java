package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeRequest;
import dev.oam.bridge.spi.Coding;
import dev.oam.bridge.spi.MethodRegistry;
import dev.oam.bridge.spi.Methods;
import dev.oam.bridge.spi.OperationQueue;
import dev.oam.bridge.spi.Options;
import dev.oam.bridge.spi.Params;
import dev.oam.bridge.spi.Reply;
import dev.oam.bridge.spi.ToolDefinitions;
import dev.oam.core.ErrorCode;
import dev.oam.core.agent.Agent;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.TurnContext;
import dev.oam.core.agent.TurnEvent;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.agent.TurnRequest;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptCodec;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/** The {@code session/*} methods and the sessions they manage. */
final class Sessions {
    private final BridgeEngine engine;
    private final Map<String, BridgeSession> sessions = new LinkedHashMap<>(); // guarded by this
    private final AtomicLong generatedIds = new AtomicLong();

    Sessions(BridgeEngine engine) {
        this.engine = engine;
    }

    void register(MethodRegistry.Builder registry) {
        registry.register(Methods.SESSION_CREATE, this::create);
        registry.register(Methods.SESSION_RESPOND, this::respond);
        registry.register(Methods.SESSION_CANCEL, this::cancel);
        registry.register(Methods.SESSION_RESET, this::reset);
        registry.register(Methods.SESSION_DELETE, this::delete);
        registry.register(Methods.SESSION_LIST, this::list);
        registry.register(Methods.SESSION_SET_INSTRUCTIONS, this::setInstructions);
        registry.register(Methods.SESSION_SET_CONTEXT_NOTE, this::setContextNote);
        registry.register(Methods.SESSION_SET_TOOLS, this::setTools);
        registry.register(Methods.SESSION_TRANSCRIPT, this::transcript);
        registry.register(Methods.SESSION_COMPACT, this::compact);
    }

    synchronized void cancelAll() {
        for (BridgeSession session : sessions.values()) {
            session.queue.cancelAll();
        }
    }

    synchronized void clear() {
        for (BridgeSession session : sessions.values()) {
            engine.historyLimits().detach(session.agent);
        }
        sessions.clear();
    }

    synchronized int count() {
        return sessions.size();
    }

    private synchronized BridgeSession find(Params params) throws BridgeException {
        String id = params.string("session");
        BridgeSession session = sessions.get(id);
        if (session == null) {
            throw BridgeException.of(
                    ErrorCode.SESSION_NOT_FOUND, "No session '" + id + "'.", "session", TextNode.valueOf(id));
        }
        return session;
    }

    private Reply create(BridgeRequest request) throws BridgeException {
        Params params = request.params();
        List<String> warnings = new ArrayList<>();
        String requested = params.optionalString("session");
        if (requested != null) {
            Params.checkId(requested, "session");
        }
        TranscriptCodec.Restored restored = null;
        JsonNode history = params.get("history");
        if (history != null) {
            try {
                restored = TranscriptCodec.read(history, "history");
            } catch (IllegalArgumentException e) {
                throw BridgeException.invalidParams(e.getMessage());
            }
        }
        String instructions = params.containsKey("instructions") || restored == null
                ? params.optionalString("instructions")
                : restored.instructions();
        List<ToolDefinition> tools = List.of();
        JsonNode toolsNode = params.containsKey("tools") || restored == null ? params.get("tools") : restored.tools();
        String toolsPath = params.containsKey("tools") || restored == null ? "tools" : "history (saved tools)";
        if (toolsNode != null) {
            ToolDefinitions.Parsed parsed = ToolDefinitions.parse(toolsNode, toolsPath);
            tools = parsed.tools();
            warnings.addAll(parsed.warnings());
        }
        ToolDefinitions.countWarning(tools.size()).ifPresent(warnings::add);
        Params optionsParams = params.object("options");
        AgentOptions options =
                Options.agentOptions(optionsParams, engine.configuration().defaultToolTimeout());
        warnEnabledTools(options.enabledTools(), tools, "options.enabledTools", warnings);
        Models.Created model = Models.create(engine.configuration(), params.get("model"), "model");
        warnings.addAll(model.model().warnings());
        if (model.description().equals("system")) {
            ModelAvailability availability = engine.systemAvailability();
            if (!availability.available()) {
                warnings.add("The system model is unavailable (" + availability.reason() + ")"
                        + (availability.message() != null ? ": " + availability.message() : ".")
                        + (availability.isLoading()
                                ? " Turns wait until it is loaded."
                                : " Turns fail with model_unavailable until it is ready."));
            }
        }
        List<String> unknown = params.unknownWarnings();
        warnings.addAll(0, unknown);
        String id;
        synchronized (this) {
            if (requested != null && sessions.containsKey(requested)) {
                throw BridgeException.of(
                        ErrorCode.SESSION_EXISTS,
                        "A session '" + requested + "' already exists.",
                        "session",
                        TextNode.valueOf(requested));
            }
            int limit = engine.configuration().maxSessions();
            if (sessions.size() >= limit) {
                throw BridgeException.of(
                        ErrorCode.SESSION_LIMIT,
                        "Too many sessions (the limit is " + limit + "); delete one first.",
                        "limit",
                        IntNode.valueOf(limit));
            }
            id = requested;
            while (id == null || sessions.containsKey(id)) {
                id = "s" + generatedIds.incrementAndGet();
            }
            Agent agent = new Agent(
                    model.model(), instructions, tools, options, restored == null ? List.of() : restored.entries());
            if (restored != null && restored.hasInstructionsEntry()) {
                agent.setInstructionsEntryId(restored.instructionsEntryId());
            }
            try {
                engine.historyLimits().check(null, agent.historySize());
            } catch (AgentException e) {
                throw BridgeException.from(e);
            }
            engine.historyLimits().attach(agent);
            sessions.put(id, new BridgeSession(id, agent, model.description()));
        }
        ObjectNode result = Json.object();
        result.put("session", id);
        result.set("warnings", Json.strings(warnings));
        return Reply.result(result);
    }

    private static void warnEnabledTools(
            List<String> enabled, List<ToolDefinition> tools, String path, List<String> warnings) {
        if (enabled == null) {
            return;
        }
        for (String name : enabled) {
            if (tools.stream().noneMatch(t -> t.name().equals(name))) {
                warnings.add("Parameter '" + path + "' names '" + name + "', which is not one of the session's tools.");
            }
        }
    }

    private Reply respond(BridgeRequest request) throws BridgeException {
        Params params = request.params();
        BridgeSession session = find(params);
        String prompt = params.string("prompt");
        JsonNode schema = params.get("schema");
        List<String> schemaWarnings = List.of();
        GenerationSchema converted = null; // once, here: a bad schema fails before the turn is queued, which uses it
        if (schema != null) {
            if (!schema.isObject()) {
                throw params.mistyped("schema", "a JSON Schema object");
            }
            try {
                converted = GenerationSchema.convert(schema, "Response");
                schemaWarnings = converted.warnings();
            } catch (SchemaException e) {
                throw ToolDefinitions.invalidSchema(e, "schema");
            }
        }
        boolean stream = params.bool("stream", false);
        TurnRequest plain = TurnRequest.of(prompt)
                .withToolChoice(Options.toolChoice(params, "toolChoice"))
                .withMaxToolRounds(params.optionalInt("maxToolRounds", 0))
                .withMaxToolCalls(params.optionalInt("maxToolCalls", 0))
                .withEnabledTools(params.optionalStringList("enabledTools"))
                .withSampling(Options.sampling(params));
        TurnRequest turn = converted == null ? plain : plain.withSchema(schema, converted);
        List<String> warnings = new ArrayList<>(params.unknownWarnings());
        warnings.addAll(schemaWarnings);
        ObjectNode context = Json.object();
        context.put("session", session.id);
        session.queue.submit(request, operation -> {
            TurnListener listener = stream ? request.events(context, Methods.SESSION_EVENT) : TurnListener.NONE;
            ToolChannel channel = engine.clientCalls().channel(context, request.requestId());
            TurnResult result = session.agent.respond(
                    turn, new TurnContext(operation.token(), listener, channel, operation::commit));
            ObjectNode out = Json.object();
            out.put("session", session.id);
            Coding.turnResult(out, result);
            if (!warnings.isEmpty()) {
                out.set("warnings", Json.strings(warnings));
            }
            return out;
        });
        return Reply.pending();
    }

    /**
     * Sends {@code method} notifications ({@code session/event} or another namespace's) for a streaming request. It
     * accepts the thread completing a tool reply: the client's replies complete on the input thread, whose sends never
     * wait for the client, and this listener only serializes and sends. It tells {@code calls} of each completed call
     * it announces, so that the engine's delivery listener learns which thread announced each client reply
     * ({@link ClientCalls#announced}).
     */
    static TurnListener eventSender(BridgeRequest request, ObjectNode context, String method, ClientCalls calls) {
        return new TurnListener() {
            @Override
            public void onEvent(TurnEvent event) {
                ObjectNode params = context.deepCopy();
                params.set("requestId", request.requestId());
                params.set("event", Coding.event(event));
                request.notify(method, params);
                if (event instanceof TurnEvent.ToolCallCompleted) {
                    calls.announced();
                }
            }

            @Override
            public boolean acceptsReplyThread() {
                return true;
            }
        };
    }

    private Reply cancel(BridgeRequest request) throws BridgeException {
        BridgeSession session = find(request.params());
        int count = session.queue.cancelAll();
        ObjectNode result = Json.object();
        result.put("session", session.id);
        result.put("cancelled", count);
        return Reply.result(result);
    }

    private Reply delete(BridgeRequest request) throws BridgeException {
        BridgeSession session = find(request.params());
        synchronized (this) {
            sessions.remove(session.id);
        }
        engine.historyLimits().detach(session.agent);
        session.queue.cancelAll();
        ObjectNode result = Json.object();
        result.put("session", session.id);
        result.put("deleted", true);
        return Reply.result(result);
    }

    private Reply list(BridgeRequest request) {
        List<BridgeSession> snapshot;
        synchronized (this) {
            snapshot = List.copyOf(sessions.values());
        }
        ArrayNode array = Json.array();
        for (BridgeSession session : snapshot) {
            ObjectNode item = array.addObject();
            item.put("session", session.id);
            item.put("model", session.modelDescription);
            if (session.agent.instructions() != null) {
                item.put("instructions", session.agent.instructions());
            }
            item.set(
                    "tools",
                    Json.strings(session.agent.tools().stream()
                            .map(ToolDefinition::name)
                            .toList()));
            OperationQueue.Load load = session.queue.load();
            item.put("busy", load.busy());
            item.put("pendingOperations", load.pending());
            item.put("entries", session.agent.history().size());
            item.put(
                    "createdAt",
                    DateTimeFormatter.ISO_INSTANT.format(session.createdAt.truncatedTo(ChronoUnit.MILLIS)));
        }
        ObjectNode result = Json.object();
        result.set("sessions", array);
        return Reply.result(result);
    }

    private Reply reset(BridgeRequest request) throws BridgeException {
        BridgeSession session = find(request.params());
        return applyInOrder(request, session, () -> session.agent.reset());
    }

    private Reply setInstructions(BridgeRequest request) throws BridgeException {
        BridgeSession session = find(request.params());
        String instructions = request.params().optionalString("instructions");
        return applyInOrder(request, session, () -> session.agent.setInstructions(instructions));
    }

    private Reply setContextNote(BridgeRequest request) throws BridgeException {
        BridgeSession session = find(request.params());
        String note = request.params().optionalString("note");
        return applyInOrder(request, session, () -> session.agent.setContextNote(note));
    }

    /** Queues a setting change behind the session's earlier operations; it answers {@code {session}} once applied. */
    private static Reply applyInOrder(BridgeRequest request, BridgeSession session, Runnable change) {
        session.queue.submit(request, operation -> {
            operation.commit();
            change.run();
            return sessionResult(session);
        });
        return Reply.pending();
    }

    private Reply setTools(BridgeRequest request) throws BridgeException {
        Params params = request.params();
        BridgeSession session = find(params);
        ToolDefinitions.Parsed parsed = ToolDefinitions.parseCounted(params.require("tools"), "tools");
        List<String> warnings = parsed.warnings();
        session.queue.submit(request, operation -> {
            operation.commit();
            session.agent.setTools(parsed.tools());
            ObjectNode result = sessionResult(session);
            result.set("warnings", Json.strings(warnings));
            return result;
        });
        return Reply.pending();
    }

    private Reply transcript(BridgeRequest request) throws BridgeException {
        BridgeSession session = find(request.params());
        Agent agent = session.agent;
        ObjectNode result = sessionResult(session);
        result.set(
                "transcript",
                TranscriptCodec.write(
                        agent.instructionsEntryId(),
                        agent.instructions(),
                        agent.tools(),
                        agent.historyWithTurnInProgress()));
        return Reply.result(result);
    }

    private Reply compact(BridgeRequest request) throws BridgeException {
        Params params = request.params();
        BridgeSession session = find(params);
        Integer keepNode = params.optionalInt("keepRecentTurns", 0);
        int keep = keepNode == null ? 2 : keepNode;
        String summaryInstructions = params.optionalString("summaryInstructions");
        ObjectNode context = Json.object();
        context.put("session", session.id);
        session.queue.submit(request, operation -> {
            String summary = session.agent.compact(
                    keep,
                    summaryInstructions,
                    new TurnContext(
                            operation.token(),
                            TurnListener.NONE,
                            engine.clientCalls().channel(context, request.requestId()),
                            operation::commit));
            ObjectNode result = sessionResult(session);
            if (summary == null) {
                result.putNull("summary");
            } else {
                result.put("summary", summary);
            }
            return result;
        });
        return Reply.pending();
    }

    private static ObjectNode sessionResult(BridgeSession session) {
        ObjectNode result = Json.object();
        result.put("session", session.id);
        return result;
    }
}
