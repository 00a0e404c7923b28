package dev.oam.bridge.game;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeRequest;
import dev.oam.bridge.spi.Coding;
import dev.oam.bridge.spi.ExtensionContext;
import dev.oam.bridge.spi.MethodRegistry;
import dev.oam.bridge.spi.Options;
import dev.oam.bridge.spi.Params;
import dev.oam.bridge.spi.Reply;
import dev.oam.bridge.spi.ToolDefinitions;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.game.decision.Decision;
import dev.oam.game.decision.DecisionOption;
import dev.oam.game.decision.DecisionRequest;
import dev.oam.game.decision.Decisions;
import dev.oam.game.npc.Persona;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.jspecify.annotations.Nullable;

/**
 * {@code decision/decide} and {@code decision/decideMany} (docs/GAMES.md, "Decisions"). Every parameter is checked on
 * the dispatcher, before any model runs; the decisions themselves run as deferred work.
 */
final class DecisionMethods {
    static final String DECIDE = "decision/decide";
    static final String DECIDE_MANY = "decision/decideMany";
    static final int DEFAULT_MAX_CONCURRENCY = 2;

    private DecisionMethods() {}

    static void register(MethodRegistry.Builder registry, GameExtension game) {
        registry.register(DECIDE, request -> decide(request, game));
        registry.register(DECIDE_MANY, request -> decideMany(request, game));
    }

    private static Reply decide(BridgeRequest request, GameExtension game) throws Exception {
        Parsed parsed = read(request.params(), null, game, request.context());
        if (parsed.decision().options().size() == 1) {
            // Nothing to ask the model: answered at once, in arrival order.
            return Reply.result(encode(
                    Decisions.decide(parsed.decision(), parsed.model(), ToolChannel.NONE, CancellationToken.create()),
                    parsed.warnings()));
        }
        ToolChannel channel = request.toolChannel(Json.object());
        return Reply.deferred(token ->
                encode(Decisions.decide(parsed.decision(), parsed.model(), channel, token), parsed.warnings()));
    }

    private static Reply decideMany(BridgeRequest request, GameExtension game) throws BridgeException {
        Params params = request.params();
        JsonNode requests = params.require("requests");
        if (!requests.isArray()) {
            throw params.mistyped("requests", "an array of decision requests");
        }
        Integer concurrency = params.optionalInt("maxConcurrency", 1);
        int maxConcurrency = concurrency == null ? DEFAULT_MAX_CONCURRENCY : concurrency;
        // One model for the whole request, so a script's steps are consumed in order across its decisions.
        Settings shared = Settings.read(params, null, request.context());
        List<Item> items = new ArrayList<>();
        for (int i = 0; i < requests.size(); i++) {
            JsonNode node = requests.get(i);
            String path = params.path("requests") + "[" + i + "]";
            if (!node.isObject()) {
                items.add(Item.failed(
                        BridgeException.invalidParams("Parameter '" + path + "' must be a decision request object.")));
                continue;
            }
            try {
                items.add(Item.valid(read(Params.of((ObjectNode) node, path), shared, game, request.context())));
            } catch (BridgeException e) {
                items.add(Item.failed(e));
            }
        }
        List<String> warnings = params.unknownWarnings();
        return Reply.deferred(token -> {
            ObjectNode result = Json.object();
            ArrayNode results = result.putArray("results");
            run(items, maxConcurrency, request, token).forEach(results::add);
            if (!warnings.isEmpty()) {
                result.set("warnings", Json.strings(warnings));
            }
            return result;
        });
    }

    /**
     * Runs the valid items, at most {@code maxConcurrency} at a time, started in request order (so with 1 they run one
     * after another); returns one result per item in request order. A failure stays in its item.
     */
    private static List<ObjectNode> run(
            List<Item> items, int maxConcurrency, BridgeRequest request, CancellationToken token)
            throws InterruptedException {
        List<@Nullable Future<ObjectNode>> futures = new ArrayList<>();
        long valid = items.stream().filter(item -> item.parsed() != null).count();
        int threads = (int) Math.max(1, Math.min(maxConcurrency, valid));
        try (ExecutorService pool = Executors.newFixedThreadPool(
                threads, Thread.ofVirtual().name("oam-decision-", 0).factory())) {
            for (int i = 0; i < items.size(); i++) {
                Parsed parsed = items.get(i).parsed();
                if (parsed == null) {
                    futures.add(null);
                    continue;
                }
                ObjectNode context = Json.object();
                context.put("index", i);
                ToolChannel channel = request.toolChannel(context);
                futures.add(pool.submit(() -> runOne(parsed, channel, token)));
            }
        } // close() waits for every started decision
        List<ObjectNode> results = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            Future<ObjectNode> future = futures.get(i);
            if (future == null) {
                results.add(failure(items.get(i).error()));
                continue;
            }
            try {
                results.add(future.get());
            } catch (ExecutionException e) {
                results.add(failure(internalError(e.getCause())));
            }
        }
        return results;
    }

    private static ObjectNode runOne(Parsed parsed, ToolChannel channel, CancellationToken token) {
        try {
            return encode(Decisions.decide(parsed.decision(), parsed.model(), channel, token), parsed.warnings());
        } catch (AgentException e) {
            return failure(BridgeException.from(e));
        } catch (RuntimeException e) {
            return failure(internalError(e));
        }
    }

    private static BridgeException internalError(Throwable e) {
        Log.error("a decision of decision/decideMany failed", e);
        return new BridgeException(
                ErrorCode.INTERNAL_ERROR,
                "Internal error (" + e.getClass().getSimpleName()
                        + "); please report it. Details are in the bridge's log.");
    }

    private static ObjectNode failure(@Nullable BridgeException error) {
        ObjectNode item = Json.object();
        item.set(
                "error",
                error == null
                        ? internalError(new IllegalStateException("no error")).toJson()
                        : error.toJson());
        return item;
    }

    /**
     * The result in its fixed key order (docs/COMPATIBILITY.md, "Result shapes"): optionID, reasoning, confidence,
     * toolCalls, usage, isFallback[, warnings].
     */
    static ObjectNode encode(Decision decision, List<String> warnings) {
        ObjectNode result = Json.object();
        result.put("optionID", decision.optionID());
        result.put("reasoning", decision.reasoning());
        result.put("confidence", decision.confidence());
        result.set("toolCalls", Coding.records(decision.toolCalls()));
        result.set("usage", Coding.usage(decision.usage()));
        result.put("isFallback", decision.isFallback());
        if (!warnings.isEmpty()) {
            result.set("warnings", Json.strings(warnings));
        }
        return result;
    }

    /** A checked decision with the model it runs on and its warnings. */
    private record Parsed(DecisionRequest decision, LanguageModel model, List<String> warnings) {}

    /** One item of {@code decideMany}: checked, or failed already. */
    private record Item(@Nullable Parsed parsed, @Nullable BridgeException error) {
        static Item valid(Parsed parsed) {
            return new Item(parsed, null);
        }

        static Item failed(BridgeException error) {
            return new Item(null, error);
        }
    }

    /**
     * The engine settings of a decision. {@code decideMany} reads them once for all its decisions, and a decision may
     * override each of them (its own {@code model} then gets a model of its own).
     */
    private record Settings(
            @Nullable String instructions,
            @Nullable Double temperature,
            int maxToolRounds,
            Duration toolTimeout,
            LanguageModel model) {

        static Settings read(Params params, @Nullable Settings shared, ExtensionContext context)
                throws BridgeException {
            String instructions = params.optionalString("instructions");
            Double temperature = params.optionalNumber("temperature", 0);
            Integer rounds = params.optionalInt("maxToolRounds", 0);
            Duration timeout = params.optionalSeconds("toolTimeoutSeconds");
            JsonNode spec = params.get("model");
            LanguageModel model =
                    spec != null || shared == null ? context.makeModel(spec, params.path("model")) : shared.model();
            if (shared == null) {
                return new Settings(
                        instructions,
                        temperature,
                        rounds != null ? rounds : Decisions.DEFAULT_MAX_TOOL_ROUNDS,
                        timeout != null ? timeout : context.defaultToolTimeout(),
                        model);
            }
            return new Settings(
                    instructions != null ? instructions : shared.instructions(),
                    temperature != null ? temperature : shared.temperature(),
                    rounds != null ? rounds : shared.maxToolRounds(),
                    timeout != null ? timeout : shared.toolTimeout(),
                    model);
        }
    }

    /** Reads and checks one decision's params; every error names its parameter. */
    private static Parsed read(Params params, @Nullable Settings shared, GameExtension game, ExtensionContext bridge)
            throws BridgeException {
        JsonNode situationNode = params.require("situation");
        String situation = situationNode.isTextual() ? situationNode.textValue() : Json.write(situationNode);
        List<String> optionWarnings = new ArrayList<>();
        List<DecisionOption> options = options(params, optionWarnings);
        List<String> ids = options.stream().map(DecisionOption::id).toList();
        String fallback = params.optionalString("fallbackOptionID");
        if (fallback != null) {
            fallback = fallback.strip();
            if (!ids.contains(fallback)) {
                throw BridgeException.invalidParams("Parameter '" + params.path("fallbackOptionID")
                        + "' must be one of the option ids (" + String.join(", ", ids) + "), not '" + fallback + "'.");
            }
        }
        Persona actor = actor(params, game);
        JsonNode context = params.get("context");
        ToolDefinitions.Parsed parsedTools = ToolDefinitions.parseCounted(params.get("tools"), params.path("tools"));
        List<ToolDefinition> tools = parsedTools.tools();
        List<String> toolWarnings = new ArrayList<>(parsedTools.warnings());
        ToolChoice choice = Options.toolChoice(params, "toolChoice");
        if (choice instanceof ToolChoice.Named named
                && tools.stream().noneMatch(t -> t.name().equals(named.tool()))) {
            throw BridgeException.invalidParams("Parameter '" + params.path("toolChoice") + "' names the tool '"
                    + named.tool() + "', which is not one of the decision's tools.");
        }
        Settings settings = Settings.read(params, shared, bridge);
        List<String> warnings = new ArrayList<>(params.unknownWarnings());
        warnings.addAll(optionWarnings);
        warnings.addAll(toolWarnings);
        DecisionRequest decision = new DecisionRequest(
                situation,
                options,
                actor,
                context,
                tools,
                choice != null ? choice : ToolChoice.AUTO,
                fallback,
                settings.instructions(),
                settings.temperature(),
                settings.maxToolRounds(),
                settings.toolTimeout());
        return new Parsed(decision, settings.model(), warnings);
    }

    /** Options as {@code {"id", "description"}} objects or id strings; ids stripped, non-empty and unique. */
    private static List<DecisionOption> options(Params params, List<String> warnings) throws BridgeException {
        JsonNode node = params.require("options");
        String path = params.path("options");
        if (!node.isArray() || node.isEmpty()) {
            throw BridgeException.invalidParams("Parameter '" + path
                    + "' must be a non-empty array of options: {\"id\", \"description\"} objects or id strings.");
        }
        List<DecisionOption> options = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < node.size(); i++) {
            JsonNode item = node.get(i);
            String at = path + "[" + i + "]";
            String id;
            String idPath;
            String description = "";
            if (item.isTextual()) {
                id = item.textValue();
                idPath = at;
            } else if (item.isObject()) {
                Params option = Params.of((ObjectNode) item, at);
                id = option.string("id");
                idPath = option.path("id");
                String text = option.optionalString("description");
                if (text != null) {
                    description = text;
                }
                warnings.addAll(option.unknownWarnings());
            } else {
                throw BridgeException.invalidParams("Parameter '" + at
                        + "' must be an option: an {\"id\", \"description\"} object or an id string.");
            }
            id = id.strip();
            if (id.isEmpty()) {
                throw BridgeException.invalidParams("Parameter '" + idPath + "' must not be empty.");
            }
            Integer earlier = seen.putIfAbsent(id, i);
            if (earlier != null) {
                throw BridgeException.invalidParams("Parameter '" + idPath + "' repeats the option id '" + id + "' of '"
                        + path + "[" + earlier + "]'; option ids must be unique.");
            }
            options.add(new DecisionOption(id, description));
        }
        return options;
    }

    /** A persona object, or the id of an NPC to decide as ({@code -32050 npc_not_found} when there is none). */
    private static @Nullable Persona actor(Params params, GameExtension game) throws BridgeException {
        JsonNode actor = params.get("actor");
        if (actor == null) {
            return null;
        }
        if (actor.isTextual()) {
            String id = actor.textValue();
            Persona persona = game.npcs.persona(id);
            if (persona == null) {
                throw BridgeException.of(ErrorCode.NPC_NOT_FOUND, "No NPC '" + id + "'.", "npc", TextNode.valueOf(id));
            }
            return persona;
        }
        if (actor.isObject()) {
            return PersonaParams.read(params.object("actor"));
        }
        throw params.mistyped("actor", "a persona object or an NPC id");
    }
}
