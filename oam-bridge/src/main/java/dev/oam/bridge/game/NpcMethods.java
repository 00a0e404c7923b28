package dev.oam.bridge.game;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeRequest;
import dev.oam.bridge.spi.Coding;
import dev.oam.bridge.spi.MethodRegistry;
import dev.oam.bridge.spi.OperationQueue;
import dev.oam.bridge.spi.Options;
import dev.oam.bridge.spi.Params;
import dev.oam.bridge.spi.Reply;
import dev.oam.bridge.spi.ToolDefinitions;
import dev.oam.core.ErrorCode;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.agent.TurnEvent;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelState;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptCodec;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.game.npc.LineTracker;
import dev.oam.game.npc.Memory;
import dev.oam.game.npc.MemoryTools;
import dev.oam.game.npc.Npc;
import dev.oam.game.npc.NpcBark;
import dev.oam.game.npc.NpcEvent;
import dev.oam.game.npc.NpcOptions;
import dev.oam.game.npc.NpcReply;
import dev.oam.game.npc.NpcState;
import dev.oam.game.npc.NpcTalk;
import dev.oam.game.npc.Persona;
import dev.oam.game.world.WorldState;
import dev.oam.game.world.WorldTools;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** {@code npc/*} (docs/GAMES.md, "NPCs"). */
final class NpcMethods {
    private NpcMethods() {}

    static void register(MethodRegistry.Builder registry, GameExtension game) {
        registry.register("npc/create", request -> create(request, game));
        registry.register("npc/restore", request -> restore(request, game));
        registry.register("npc/talk", request -> talk(request, game));
        registry.register("npc/bark", request -> bark(request, game));
        registry.register("npc/state", request -> state(request, game));
        registry.register("npc/update", request -> update(request, game));
        registry.register("npc/reset", request -> reset(request, game));
        registry.register("npc/cancel", request -> cancel(request, game));
        registry.register("npc/delete", request -> delete(request, game));
        registry.register("npc/list", request -> list(game));
    }

    /**
     * What create and restore read, before anything changes: the NPC's id ({@code null}: a generated one), what it is
     * made of, the world it sees (with the id it was asked for), the warnings so far, and the model's state a save
     * names ({@code state.modelState}, restore only).
     */
    private record Spec(
            @Nullable String id,
            Persona persona,
            NpcOptions options,
            Memory memory,
            List<ToolDefinition> tools,
            @Nullable String worldId,
            @Nullable WorldState world,
            List<TranscriptEntry> history,
            List<String> warnings,
            @Nullable JsonNode modelState) {}

    /** {@code npc/create}: a new NPC from its params. */
    private static Reply create(BridgeRequest request, GameExtension game) throws BridgeException {
        Params params = request.params();
        List<String> warnings = new ArrayList<>();
        String id = params.has("npc") ? Params.checkId(params.string("npc"), "npc") : null;
        Params personaParams = params.object("persona");
        params.require("persona");
        Persona persona = PersonaParams.read(personaParams);
        NpcOptions options = NpcOptionsParams.read(
                params.object("options"), request.context().defaultToolTimeout());
        Memory memory = memory(params.get("memory"), "memory");
        List<ToolDefinition> tools = tools(params.get("tools"), "tools", warnings);
        String worldId = params.optionalString("world");
        WorldState world = worldId == null ? null : requireWorld(game, worldId);
        return add(
                request,
                game,
                new Spec(id, persona, options, memory, tools, worldId, world, List.of(), warnings, null));
    }

    /**
     * {@code npc/restore}: an NPC from a save of {@code npc/state} ({@code state}, or the whole {@code npc/state}
     * result). {@code npc}, {@code options}, {@code tools} and {@code world} win over the saved ones when present, even
     * as {@code null}; a saved world that no longer exists is left out with a warning.
     */
    private static Reply restore(BridgeRequest request, GameExtension game) throws BridgeException {
        Params params = request.params();
        List<String> warnings = new ArrayList<>();
        JsonNode saved = params.require("state");
        if (saved.isObject() && saved.has("state") && saved.get("state").isObject() && !saved.has("persona")) {
            saved = saved.get("state");
        }
        if (!saved.isObject() || !saved.path("persona").isObject()) {
            throw BridgeException.invalidParams("Parameter 'state' must be an NPC save state from npc/state.");
        }
        String id;
        if (params.has("npc")) {
            id = params.string("npc");
        } else if (!params.containsKey("npc") && saved.path("npc").isTextual()) {
            id = saved.get("npc").textValue();
        } else {
            id = null;
        }
        if (id != null) {
            Params.checkId(id, "npc");
        }
        Persona persona = PersonaParams.read(Params.of((ObjectNode) saved.get("persona"), "state.persona"));
        Params optionsParams = params.containsKey("options")
                ? params.object("options")
                : Params.of(
                        saved.path("options").isObject() ? (ObjectNode) saved.get("options") : Json.object(),
                        "state.options");
        NpcOptions options =
                NpcOptionsParams.read(optionsParams, request.context().defaultToolTimeout());
        Memory memory = memory(saved.get("memory"), "state.memory");
        List<ToolDefinition> tools = params.containsKey("tools")
                ? tools(params.get("tools"), "tools", warnings)
                : tools(saved.get("tools"), "state.tools", warnings);
        String worldId;
        WorldState world;
        if (params.containsKey("world")) {
            worldId = params.optionalString("world");
            world = worldId == null ? null : requireWorld(game, worldId);
        } else {
            worldId = saved.path("world").isTextual() ? saved.get("world").textValue() : null;
            world = worldId == null ? null : game.worlds.find(worldId);
            if (worldId != null && world == null) {
                warnings.add("The saved world '" + worldId + "' no longer exists; the NPC was restored without it.");
                worldId = null;
            }
        }
        List<TranscriptEntry> history = List.of();
        if (saved.has("transcript") && !saved.get("transcript").isNull()) {
            try {
                history = TranscriptCodec.read(saved.get("transcript"), "state.transcript")
                        .entries();
            } catch (IllegalArgumentException e) {
                throw BridgeException.invalidParams(e.getMessage());
            }
        }
        return add(
                request,
                game,
                new Spec(
                        id,
                        persona,
                        options,
                        memory,
                        tools,
                        worldId,
                        world,
                        history,
                        warnings,
                        saved.get("modelState")));
    }

    /** Makes the NPC of {@code spec} with the request's {@code model} and answers {@code {npc, tools, warnings}}. */
    private static Reply add(BridgeRequest request, GameExtension game, Spec spec) throws BridgeException {
        Params params = request.params();
        List<String> warnings = new ArrayList<>(spec.warnings());
        LanguageModel model = request.context().makeModel(params.get("model"), "model");
        warnings.addAll(model.warnings());
        String modelDescription = modelDescription(params.get("model"));
        List<String> toolNames = validateTools(spec.tools(), spec.world() != null, spec.options());
        ToolDefinitions.countWarning(toolNames.size()).ifPresent(warnings::add);
        warnings.addAll(0, params.unknownWarnings());
        String id = spec.id();
        if (id == null) {
            game.npcs.checkFree(null);
            id = game.npcs.newId();
        }
        NpcState state =
                new NpcState(spec.persona(), spec.options(), spec.memory(), spec.tools(), spec.history(), null);
        Npc npc = new Npc(id, state, spec.world(), model);
        NpcEntry entry = new NpcEntry(npc, modelDescription, spec.worldId());
        game.npcs.add(entry);
        ObjectNode result = Json.object();
        result.put("npc", id);
        result.set(
                "tools",
                Json.strings(npc.tools().stream().map(ToolDefinition::name).toList()));
        result.set("warnings", Json.strings(warnings));
        JsonNode modelState = spec.modelState();
        if (modelState == null || modelState.isNull()) {
            return Reply.result(result);
        }
        // The model's state goes first on the NPC's queue: a talk sent right after the restore finds it loaded
        entry.queue.submit(request, operation -> {
            operation.commit();
            warnings.addAll(restoreModelState(npc, modelState, game.saveFolder));
            result.set("warnings", Json.strings(warnings));
            return result;
        });
        return Reply.pending();
    }

    /**
     * Loads the model's state a save names ({@code state.modelState}, docs/GAMES.md "Saving the model's state"): the
     * warnings of a state that was refused (the next turn then reads the whole conversation).
     */
    private static List<String> restoreModelState(Npc npc, JsonNode reference, java.nio.file.@Nullable Path folder) {
        if (!reference.isObject() || !reference.path("file").isTextual()) {
            return List.of("The model's state was not restored: 'state.modelState' must be the object npc/state wrote"
                    + " (with its 'file'); the conversation is read again.");
        }
        SaveFolder.Resolved file =
                SaveFolder.resolve(folder, reference.get("file").textValue());
        if (file instanceof SaveFolder.Refused refused) {
            return List.of(
                    "The model's state was not restored: " + refused.why() + "; the conversation is read again.");
        }
        return npc.restoreModelState(reference, ((SaveFolder.File) file).path()).warnings();
    }

    /** The memory at {@code path}: absent or {@code null} is none. */
    private static Memory memory(@Nullable JsonNode node, String path) throws BridgeException {
        return node == null || node.isNull() ? Memory.EMPTY : readMemory(node, path);
    }

    /** The client tools at {@code path}, their warnings added to {@code warnings}: absent or {@code null} is none. */
    private static List<ToolDefinition> tools(@Nullable JsonNode node, String path, List<String> warnings)
            throws BridgeException {
        if (node == null || node.isNull()) {
            return List.of();
        }
        ToolDefinitions.Parsed parsed = ToolDefinitions.parse(node, path);
        warnings.addAll(parsed.warnings());
        return parsed.tools();
    }

    private static WorldState requireWorld(GameExtension game, String worldId) throws BridgeException {
        WorldState world = game.worlds.find(worldId);
        if (world == null) {
            throw BridgeException.of(
                    ErrorCode.WORLD_NOT_FOUND, "No world '" + worldId + "'.", "world", TextNode.valueOf(worldId));
        }
        return world;
    }

    private static String modelDescription(@Nullable JsonNode model) {
        if (model == null || model.isNull()) {
            return "system";
        }
        return model.isTextual() ? model.textValue() : model.path("type").asText("system");
    }

    /**
     * Client tool names must not clash with the built-in ones; the grounding tool must exist. Returns every tool name.
     */
    private static List<String> validateTools(List<ToolDefinition> tools, boolean hasWorld, NpcOptions options)
            throws BridgeException {
        List<String> names = new ArrayList<>();
        tools.forEach(t -> names.add(t.name()));
        Set<String> builtIn = new HashSet<>();
        if (hasWorld) {
            if (!options.worldReadable().isEmpty()) {
                builtIn.add(WorldTools.READ);
            }
            if (!options.worldWritable().isEmpty()) {
                builtIn.add(WorldTools.UPDATE);
            }
        }
        if (options.rememberFact()) {
            builtIn.add(MemoryTools.REMEMBER_FACT);
        }
        if (options.changeRelationship()) {
            builtIn.add(MemoryTools.CHANGE_RELATIONSHIP);
        }
        for (String name : names) {
            if (builtIn.contains(name)
                    || name.equals(WorldTools.READ)
                    || name.equals(WorldTools.UPDATE)
                    || name.equals(MemoryTools.REMEMBER_FACT)
                    || name.equals(MemoryTools.CHANGE_RELATIONSHIP)) {
                throw BridgeException.invalidParams(
                        "Parameter 'tools': the name '" + name + "' belongs to a built-in NPC tool.");
            }
        }
        for (String n : List.of(
                WorldTools.READ, WorldTools.UPDATE, MemoryTools.REMEMBER_FACT, MemoryTools.CHANGE_RELATIONSHIP)) {
            if (builtIn.contains(n)) {
                names.add(n);
            }
        }
        if (options.groundingTool() != null && !names.contains(options.groundingTool())) {
            throw BridgeException.invalidParams("Parameter 'options.groundingTool' names '" + options.groundingTool()
                    + "', which is not one of the NPC's tools (" + String.join(", ", names) + ").");
        }
        if (options.toolChoice() instanceof ToolChoice.Named named && !names.contains(named.tool())) {
            throw BridgeException.invalidParams("Parameter 'options.toolChoice' names '" + named.tool()
                    + "', which is not one of the NPC's tools.");
        }
        return names;
    }

    static Memory readMemory(JsonNode node, String path) throws BridgeException {
        if (!node.isObject()) {
            throw BridgeException.invalidParams(
                    "Parameter '" + path + "' must be an object {facts, relationship, summary}.");
        }
        Params memory = Params.of((ObjectNode) node);
        List<String> facts = memory.optionalStringList("facts");
        JsonNode relationship = memory.get("relationship");
        int value = 0;
        if (relationship != null) {
            if (!relationship.isNumber()
                    || relationship.decimalValue().abs().compareTo(java.math.BigDecimal.valueOf(100)) > 0) {
                throw BridgeException.invalidParams(
                        "Parameter '" + path + ".relationship' must be a number from -100 to 100.");
            }
            value = relationship
                    .decimalValue()
                    .setScale(0, java.math.RoundingMode.HALF_UP)
                    .intValue();
        }
        String summary = memory.optionalString("summary");
        return new Memory(facts == null ? List.of() : facts, value, summary);
    }

    static ObjectNode writeMemory(Memory memory) {
        ObjectNode node = Json.object();
        node.set("facts", Json.strings(memory.facts()));
        node.put("relationship", memory.relationship());
        if (memory.summary() != null) {
            node.put("summary", memory.summary());
        }
        return node;
    }

    private static Reply talk(BridgeRequest request, GameExtension game) throws BridgeException {
        Params params = request.params();
        NpcEntry entry = game.npcs.require(params.string("npc"));
        NpcTalk talk =
                new NpcTalk(params.string("line"), params.get("context"), Options.toolChoice(params, "toolChoice"));
        boolean stream = params.bool("stream", false);
        entry.queue.submit(request, operation -> {
            ObjectNode eventContext = Json.object().put("npc", entry.id);
            NpcEvent.Listener events = stream ? eventSender(request, eventContext) : NpcEvent.Listener.NONE;
            NpcReply reply = entry.npc.talk(
                    talk, request.toolChannel(eventContext), events, operation.token(), operation::commit);
            if (entry.npc.compactionDue()) {
                entry.queue.submitBackground(compaction -> entry.npc.compact(compaction.token(), compaction::commit));
            }
            return talkResult(entry.id, reply);
        });
        return Reply.pending();
    }

    /** {@code npc/talk}'s result (docs/COMPATIBILITY.md, "Result shapes", for its key order). */
    static ObjectNode talkResult(String id, NpcReply reply) {
        ObjectNode out = Json.object();
        out.put("npc", id);
        out.put("line", reply.line());
        out.put("emotion", reply.emotion().wireName());
        out.set("playerOptions", Json.strings(reply.playerOptions()));
        out.put("endsConversation", reply.endsConversation());
        out.set("toolCalls", Coding.records(reply.toolCalls()));
        out.put("relationship", reply.relationship());
        out.put("isFallback", reply.isFallback());
        out.set("usage", Coding.usage(reply.usage()));
        if (!reply.warnings().isEmpty()) {
            out.set("warnings", Json.strings(reply.warnings()));
        }
        return out;
    }

    /**
     * Sends an NPC's events as {@code npc/event} with {@code {npc, requestId, event}} (tool events as sessions write
     * them). Called on the talking thread, or on the input thread for a tool reply's {@code toolCallCompleted}, which
     * it accepts: it only sends.
     */
    private static NpcEvent.Listener eventSender(BridgeRequest request, ObjectNode context) {
        return new NpcEvent.Listener() {
            @Override
            public void onEvent(NpcEvent event) {
                ObjectNode params = context.deepCopy();
                params.set("requestId", request.requestId());
                params.set("event", eventJson(event));
                request.notify(GameExtension.NPC_EVENT, params);
            }

            @Override
            public boolean acceptsReplyThread() {
                return true;
            }
        };
    }

    /**
     * An NPC's event in its wire form ({@code toolCallStarted}, {@code toolCallCompleted}, {@code emotion},
     * {@code lineDelta}, {@code lineReset}).
     */
    static ObjectNode eventJson(NpcEvent event) {
        return switch (event) {
            case NpcEvent.ToolCallStarted e -> Coding.event(new TurnEvent.ToolCallStarted(e.call(), e.execution()));
            case NpcEvent.ToolCallCompleted e -> Coding.event(new TurnEvent.ToolCallCompleted(e.record()));
            case NpcEvent.Line line -> {
                ObjectNode node = Json.object();
                switch (line.change()) {
                    case LineTracker.Event.EmotionChanged e ->
                        node.put("type", "emotion").put("emotion", e.emotion().wireName());
                    case LineTracker.Event.LineDelta e ->
                        node.put("type", "lineDelta").put("delta", e.delta());
                    case LineTracker.Event.LineReset e ->
                        node.put("type", "lineReset").put("line", e.line());
                }
                yield node;
            }
        };
    }

    private static Reply bark(BridgeRequest request, GameExtension game) throws BridgeException {
        Params params = request.params();
        NpcEntry entry = game.npcs.require(params.string("npc"));
        JsonNode situation = params.get("situation");
        return Reply.deferred(token -> {
            NpcBark bark = entry.npc.bark(situation, token);
            ObjectNode result = Json.object();
            result.put("npc", entry.id);
            result.put("line", bark.line());
            return result;
        });
    }

    static ObjectNode saveState(NpcEntry entry) {
        NpcState saved = entry.npc.state();
        ObjectNode state = Json.object();
        state.put("version", 1);
        state.set("persona", PersonaParams.write(saved.persona()));
        state.set("memory", writeMemory(saved.memory()));
        state.set(
                "transcript",
                TranscriptCodec.write(
                        java.util.Objects.requireNonNull(saved.instructionsEntryId()),
                        null,
                        List.of(),
                        saved.transcript()));
        state.put("npc", entry.id);
        state.set("options", NpcOptionsParams.write(saved.options()));
        ArrayNode tools = state.putArray("tools");
        for (ToolDefinition tool : saved.tools()) {
            ObjectNode t = tools.addObject();
            t.put("name", tool.name());
            if (tool.description() != null) {
                t.put("description", tool.description());
            }
            t.set("parameters", tool.parameters());
            if (tool.timeout() != null) {
                t.put("timeoutSeconds", dev.oam.core.json.Durations.secondsValue(tool.timeout()));
            }
        }
        if (entry.worldId != null) {
            state.put("world", entry.worldId);
        } else {
            state.putNull("world");
        }
        return state;
    }

    private static Reply state(BridgeRequest request, GameExtension game) throws BridgeException {
        Params params = request.params();
        NpcEntry npc = game.npcs.require(params.string("npc"));
        boolean settle = params.bool("settle", true);
        String stateFile = modelStateFile(params, npc.id);
        if (!settle && stateFile == null) {
            return Reply.result(stateResult(npc));
        }
        java.nio.file.Path folder = game.saveFolder;
        npc.queue.submit(request, operation -> {
            operation.commit();
            ObjectNode result = stateResult(npc);
            if (stateFile != null) {
                saveModelState(npc, stateFile, folder, result);
            }
            return result;
        });
        return Reply.pending();
    }

    /**
     * The file {@code modelState} names: {@code true} is {@code NPC.state}, a string a file in the save folder;
     * {@code null} when absent or {@code false}.
     */
    private static @Nullable String modelStateFile(Params params, String npc) throws BridgeException {
        JsonNode value = params.get("modelState");
        if (value == null || value.isNull() || value.isBoolean() && !value.booleanValue()) {
            return null;
        }
        if (value.isBoolean()) {
            return npc + ".state";
        }
        if (value.isTextual() && !value.textValue().isBlank()) {
            return value.textValue();
        }
        throw params.mistyped("modelState", "true, false or a file name in the save folder");
    }

    /** Writes the model's state beside the save: {@code state.modelState}, or a warning saying why not. */
    private static void saveModelState(
            NpcEntry npc, String name, java.nio.file.@Nullable Path folder, ObjectNode result) {
        List<String> warnings = new ArrayList<>();
        SaveFolder.Resolved file = SaveFolder.resolve(folder, name);
        if (file instanceof SaveFolder.Refused refused) {
            warnings.add("The model's state was not saved: " + refused.why() + ".");
        } else {
            ModelState.Saved saved = npc.npc.saveModelState(((SaveFolder.File) file).path());
            if (saved.reference() != null) {
                ObjectNode reference = Json.object().put("file", name);
                reference.setAll(saved.reference());
                ((ObjectNode) result.get("state")).set("modelState", reference);
            }
            warnings.addAll(saved.warnings());
        }
        if (!warnings.isEmpty()) {
            result.set("warnings", Json.strings(warnings));
        }
    }

    private static ObjectNode stateResult(NpcEntry npc) {
        ObjectNode result = Json.object();
        result.put("npc", npc.id);
        result.set("state", saveState(npc));
        return result;
    }

    private static Reply update(BridgeRequest request, GameExtension game) throws BridgeException {
        Params params = request.params();
        NpcEntry entry = game.npcs.require(params.string("npc"));
        Npc npc = entry.npc;
        JsonNode personaPatch = params.get("persona");
        JsonNode optionsPatch = params.get("options");
        JsonNode memoryPatch = params.get("memory");
        JsonNode toolsNode = params.containsKey("tools") ? params.json().get("tools") : null;
        for (String[] p : new String[][] {{"persona", ""}, {"options", ""}, {"memory", ""}}) {
            JsonNode value = params.get(p[0]);
            if (value != null && !value.isObject()) {
                throw params.mistyped(p[0], "an object (a JSON merge patch)");
            }
        }
        List<String> warnings = new ArrayList<>(params.unknownWarnings());
        List<ToolDefinition> newTools = null;
        if (toolsNode != null && !toolsNode.isNull()) {
            ToolDefinitions.Parsed parsed = ToolDefinitions.parse(toolsNode, "tools");
            newTools = parsed.tools();
            warnings.addAll(parsed.warnings());
        }
        List<ToolDefinition> toolsForCheck = newTools;
        entry.queue.submit(request, operation -> {
            // All-or-nothing: compute everything first, validate, then apply.
            Persona persona = npc.persona();
            if (personaPatch != null) {
                JsonNode merged = NpcOptionsParams.mergePatch(PersonaParams.write(persona), personaPatch);
                persona = PersonaParams.read(Params.of((ObjectNode) merged, "persona"));
            }
            NpcOptions options = npc.options();
            if (optionsPatch != null) {
                JsonNode merged = NpcOptionsParams.mergePatch(NpcOptionsParams.write(options), optionsPatch);
                options = NpcOptionsParams.read(
                        Params.of((ObjectNode) merged, "options"),
                        request.context().defaultToolTimeout());
            }
            Memory memory = npc.memory();
            if (memoryPatch != null) {
                JsonNode merged = NpcOptionsParams.mergePatch(writeMemory(memory), memoryPatch);
                memory = readMemory(merged, "memory");
            }
            List<ToolDefinition> tools = toolsForCheck != null ? toolsForCheck : npc.clientTools();
            List<String> names = validateTools(tools, npc.world() != null, options);
            List<String> all = new ArrayList<>(warnings);
            ToolDefinitions.countWarning(names.size()).ifPresent(all::add);
            operation.commit();
            npc.update(persona, options, memory, tools);
            ObjectNode result = Json.object();
            result.put("npc", entry.id);
            result.set("warnings", Json.strings(all));
            return result;
        });
        return Reply.pending();
    }

    private static Reply reset(BridgeRequest request, GameExtension game) throws BridgeException {
        Params params = request.params();
        NpcEntry npc = game.npcs.require(params.string("npc"));
        boolean clearMemory = params.bool("clearMemory", false);
        npc.queue.submit(request, operation -> {
            operation.commit();
            npc.npc.reset(clearMemory);
            return Json.object().put("npc", npc.id);
        });
        return Reply.pending();
    }

    private static Reply cancel(BridgeRequest request, GameExtension game) throws BridgeException {
        NpcEntry npc = game.npcs.require(request.params().string("npc"));
        int count = npc.queue.cancelAll();
        ObjectNode result = Json.object();
        result.put("npc", npc.id);
        result.put("cancelled", count);
        return Reply.result(result);
    }

    private static Reply delete(BridgeRequest request, GameExtension game) throws BridgeException {
        NpcEntry npc = game.npcs.require(request.params().string("npc"));
        game.npcs.remove(npc.id);
        npc.queue.cancelAll();
        ObjectNode result = Json.object();
        result.put("npc", npc.id);
        result.put("deleted", true);
        return Reply.result(result);
    }

    private static Reply list(GameExtension game) {
        ArrayNode array = Json.array();
        for (NpcEntry npc : game.npcs.all()) {
            ObjectNode item = array.addObject();
            item.put("npc", npc.id);
            item.put("name", npc.npc.persona().name());
            item.put("role", npc.npc.persona().role());
            if (npc.worldId != null) {
                item.put("world", npc.worldId);
            } else {
                item.putNull("world");
            }
            item.put("model", npc.modelDescription);
            item.set(
                    "tools",
                    Json.strings(npc.npc.clientTools().stream()
                            .map(ToolDefinition::name)
                            .toList()));
            item.put("turnCount", npc.npc.turnCount());
            item.put("relationship", npc.npc.memory().relationship());
            OperationQueue.Load load = npc.queue.load();
            item.put("busy", load.busy());
            item.put("pendingOperations", load.pending());
            item.put("createdAt", DateTimeFormatter.ISO_INSTANT.format(npc.createdAt.truncatedTo(ChronoUnit.MILLIS)));
        }
        ObjectNode result = Json.object();
        result.set("npcs", array);
        return Reply.result(result);
    }
}
