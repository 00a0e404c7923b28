package dev.oam.bridge.game;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.BridgeRequest;
import dev.oam.bridge.Coding;
import dev.oam.bridge.Operation;
import dev.oam.bridge.OperationQueue;
import dev.oam.core.ErrorCode;
import dev.oam.core.agent.Agent;
import dev.oam.core.agent.AgentException;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.CancellationToken;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.agent.TurnContext;
import dev.oam.core.agent.TurnEvent;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.agent.TurnRequest;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.agent.Usage;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.game.npc.Emotion;
import dev.oam.game.npc.LineTracker;
import dev.oam.game.npc.Memory;
import dev.oam.game.npc.MemoryTools;
import dev.oam.game.npc.NpcOptions;
import dev.oam.game.npc.NpcPrompts;
import dev.oam.game.npc.Persona;
import dev.oam.game.npc.Replies;
import dev.oam.game.npc.ReplyFormat;
import dev.oam.game.world.WorldState;
import dev.oam.game.world.WorldTools;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * One NPC: persona, options, memory, client tools, an optional world, and a conversation. Mutated
 * only by operations on its own queue (one at a time); the volatile fields are read by immediate
 * methods such as {@code npc/list}.
 */
final class Npc {
    final String id;
    final OperationQueue queue;
    final Instant createdAt = Instant.now();
    final LanguageModel model;
    final String modelDescription;
    final Agent agent;
    volatile Persona persona;
    volatile NpcOptions options;
    volatile Memory memory;
    volatile List<ToolDefinition> clientTools;
    volatile @Nullable String worldId;
    volatile @Nullable WorldState world;
    volatile int turnCount;
    private final AtomicInteger fallbacks = new AtomicInteger();

    Npc(String id, Persona persona, NpcOptions options, Memory memory, List<ToolDefinition> clientTools, @Nullable String worldId,
            @Nullable WorldState world, LanguageModel model, String modelDescription, List<TranscriptEntry> history) {
        this.id = id;
        this.queue = new OperationQueue("npc-" + id);
        this.persona = persona;
        this.options = options;
        this.memory = memory;
        this.clientTools = List.copyOf(clientTools);
        this.worldId = worldId;
        this.world = world;
        this.model = model;
        this.modelDescription = modelDescription;
        this.agent = new Agent(model, null, List.of(), AgentOptions.defaults(options.toolTimeout()), history);
        this.turnCount = (int) history.stream().filter(e -> e instanceof TranscriptEntry.Prompt).count();
    }

    /** Every tool the model sees: client tools, then world tools, then memory tools. */
    List<ToolDefinition> allTools() {
        List<ToolDefinition> all = new ArrayList<>(clientTools);
        WorldState w = world;
        if (w != null) {
            all.addAll(worldTools(w).definitions());
        }
        all.addAll(memoryTools(memory).definitions());
        return all;
    }

    private WorldTools worldTools(WorldState w) {
        return new WorldTools(w, options.worldReadable(), options.worldWritable());
    }

    private MemoryTools memoryTools(Memory base) {
        NpcOptions o = options;
        return new MemoryTools(o.rememberFact(), o.changeRelationship(), o.maxRelationshipChange(), o.maxFacts(), base);
    }

    private AgentOptions agentOptions(NpcOptions o, @Nullable Integer maxTokens) {
        return AgentOptions.defaults(o.toolTimeout()).toBuilder()
                .maxToolRounds(o.maxToolRounds())
                .maxToolCalls(o.maxToolCalls())
                .temperature(o.temperature())
                .maxResponseTokens(maxTokens)
                .sampling(o.sampling())
                .build();
    }

    private String worldSummary() {
        WorldState w = world;
        if (w == null || options.worldContextPaths().isEmpty()) {
            return null;
        }
        return w.summary(options.worldContextPaths(), 30);
    }

    // ------------------------------------------------------------------------------------ talk

    /** One dialogue turn (GAME-LAYER.md §3.7). Runs on the NPC's queue. */
    ObjectNode talk(Operation operation, BridgeRequest request, String line, @Nullable JsonNode context, boolean stream,
            @Nullable ToolChoice override, GameExtension game) throws Exception {
        NpcOptions o = options;
        Persona p = persona;
        Memory before = memory;
        MemoryTools memoryTools = memoryTools(before);
        WorldState w = world;
        WorldTools worldTools = w == null ? null : worldTools(w);
        List<ToolDefinition> tools = new ArrayList<>(clientTools);
        if (worldTools != null) {
            tools.addAll(worldTools.definitions());
        }
        tools.addAll(memoryTools.definitions());
        boolean factTools = tools.stream().anyMatch(t -> !t.name().equals(MemoryTools.REMEMBER_FACT)
                && !t.name().equals(MemoryTools.CHANGE_RELATIONSHIP));
        ToolChoice choice = override != null ? override
                : o.groundingTool() != null ? new ToolChoice.Named(o.groundingTool()) : o.toolChoice();
        if (tools.isEmpty()) {
            choice = ToolChoice.NONE;
        }
        if (choice instanceof ToolChoice.Named named && tools.stream().noneMatch(t -> t.name().equals(named.tool()))) {
            throw new AgentException(ErrorCode.INVALID_REQUEST, "The NPC '" + id + "' has no tool '" + named.tool() + "'.");
        }
        boolean textMode = o.replyFormat() == ReplyFormat.TEXT;
        NpcPrompts.SecretVisibility secrets = NpcPrompts.secrets(p, o, before.relationship());
        agent.setInstructions(NpcPrompts.instructions(p, o, factTools, secrets, memoryTools.handles(MemoryTools.REMEMBER_FACT),
                memoryTools.handles(MemoryTools.CHANGE_RELATIONSHIP), textMode));
        agent.setContextNote(NpcPrompts.memoryNote(before, o.changeRelationship()));
        agent.setTools(tools);
        agent.setOptions(agentOptions(o, o.maximumResponseTokens()));
        String prompt = NpcPrompts.prompt(worldSummary(), NpcPrompts.situation(context), line);

        ObjectNode eventContext = Json.object().put("npc", id);
        TurnListener events = stream ? request.events(eventContext, GameExtension.NPC_EVENT) : TurnListener.NONE;
        LineTracker tracker = new LineTracker(p, event -> events.onEvent(new NpcEvent(event)));
        List<ToolRecord> records = new ArrayList<>();
        TurnListener listener = event -> {
            switch (event) {
                case TurnEvent.ToolCallStarted started -> events.onEvent(started);
                case TurnEvent.ToolCallCompleted completed -> {
                    records.add(completed.record());
                    events.onEvent(completed);
                }
                case TurnEvent.Partial partial -> tracker.partial(partial.value());
                case TurnEvent.Text text -> tracker.text(text.text());
                case TurnEvent.ModelStep step -> { }
                case TurnEvent.External external -> events.onEvent(external);
            }
        };
        ToolChannel channel = new NpcChannel(request.toolChannel(eventContext), worldTools, memoryTools);
        TurnContext turnContext = new TurnContext(operation.token(), listener, channel, operation::commit);
        TurnResult result;
        Replies.Reply reply;
        Usage earlier = Usage.ZERO; // the blocked first attempt's, once the turn retries as text
        try {
            try {
                // The model is held to the exact reply schema; any JSON object is accepted and read leniently.
                result = agent.respond(new TurnRequest(prompt, textMode ? null : NpcPrompts.replySchema(p, o), choice,
                        o.maxToolRounds(), o.maxToolCalls(), null, textMode ? null : Replies.acceptedSchema()), turnContext);
                reply = textMode ? Replies.text(result.text(), p) : Replies.structured(result.structured(), p, o);
            } catch (AgentException first) {
                if (!(isBlock(first) && o.replyFormat() == ReplyFormat.AUTOMATIC && !operation.token().isCancelled())) {
                    throw first;
                }
                earlier = first.usage();
                List<String> facts = new ArrayList<>();
                for (ToolRecord record : records) {
                    if (!record.isError()) {
                        String output = record.reply().modelText();
                        facts.add(record.call().name() + " " + Json.write(record.call().arguments()) + " → "
                                + (output.length() > 400 ? output.substring(0, 400) : output));
                    }
                }
                agent.setInstructions(NpcPrompts.instructions(p, o, factTools, secrets,
                        memoryTools.handles(MemoryTools.REMEMBER_FACT), memoryTools.handles(MemoryTools.CHANGE_RELATIONSHIP), true));
                result = agent.respond(new TurnRequest(NpcPrompts.retryPrompt(prompt, facts), null, ToolChoice.NONE,
                        o.maxToolRounds(), o.maxToolCalls(), null), turnContext);
                reply = Replies.text(result.text(), p);
            }
        } catch (AgentException failure) {
            memoryTools.discard();
            if (isBlock(failure) && o.fallbackOnGuardrail()) {
                operation.commit();
                String fallback = nextFallback();
                tracker.finish(p.defaultEmotion(), fallback);
                return turnResult(fallback, p.defaultEmotion(), List.of(), false, records, memory.relationship(), true,
                        earlier.plus(failure.usage()));
            }
            throw failure;
        }
        Memory after = memoryTools.committed();
        memory = after;
        turnCount++;
        boolean isFallback = reply.line().isEmpty();
        String spoken = isFallback ? nextFallback() : reply.line();
        tracker.finish(reply.emotion(), spoken);
        scheduleCompaction(game);
        return turnResult(spoken, reply.emotion(), reply.playerOptions(), reply.endsConversation(), records,
                after.relationship(), isFallback, earlier.plus(result.usage()));
    }

    private static boolean isBlock(AgentException e) {
        return e.code() == ErrorCode.GUARDRAIL_VIOLATION || e.code() == ErrorCode.REFUSAL;
    }

    private String nextFallback() {
        List<String> pool = options.fallbackPool();
        return pool.get(Math.floorMod(fallbacks.getAndIncrement(), pool.size()));
    }

    private ObjectNode turnResult(String line, Emotion emotion, List<String> playerOptions, boolean ends, List<ToolRecord> records,
            int relationship, boolean isFallback, Usage usage) {
        ObjectNode out = Json.object();
        out.put("npc", id);
        out.put("line", line);
        out.put("emotion", emotion.wireName());
        out.set("playerOptions", Json.strings(playerOptions));
        out.put("endsConversation", ends);
        out.set("toolCalls", Coding.records(records));
        out.put("relationship", relationship);
        out.put("isFallback", isFallback);
        out.set("usage", Coding.usage(usage));
        return out;
    }

    /** An {@code npc/event} built from a line-tracker event (the turn listener passes it through). */
    record NpcEvent(LineTracker.Event event) implements TurnEvent.External {
        @Override
        public ObjectNode json() {
            ObjectNode node = Json.object();
            switch (event) {
                case LineTracker.Event.EmotionChanged e -> node.put("type", "emotion").put("emotion", e.emotion().wireName());
                case LineTracker.Event.LineDelta e -> node.put("type", "lineDelta").put("delta", e.delta());
                case LineTracker.Event.LineReset e -> node.put("type", "lineReset").put("line", e.line());
            }
            return node;
        }
    }

    // ------------------------------------------------------------------------------------ compaction

    private void scheduleCompaction(GameExtension game) {
        NpcOptions o = options;
        if (o.compactAfterTurns() <= 0) {
            return;
        }
        int verbatim = Agent.splitTurns(agent.history()).size();
        if (verbatim >= Math.max(o.compactAfterTurns(), o.keepRecentTurns() + 1)) {
            queue.submitBackground(this::compact);
        }
    }

    /** Folds the turns before the most recent {@code keepRecentTurns} into the memory summary (GAME-LAYER.md §3.9). */
    void compact(Operation operation) throws Exception {
        NpcOptions o = options;
        List<List<TranscriptEntry>> turns = Agent.splitTurns(agent.history());
        if (turns.size() <= o.keepRecentTurns()) {
            return;
        }
        Persona p = persona;
        StringBuilder lines = new StringBuilder();
        for (List<TranscriptEntry> turn : turns.subList(0, turns.size() - o.keepRecentTurns())) {
            for (TranscriptEntry entry : turn) {
                switch (entry) {
                    case TranscriptEntry.Prompt prompt -> {
                        String text = prompt.text();
                        int at = text.lastIndexOf("Player: ");
                        lines.append(at >= 0 ? text.substring(at) : "Player: " + text).append('\n');
                    }
                    case TranscriptEntry.ToolCalls calls -> calls.calls().forEach(call -> lines.append('[').append(p.name())
                            .append(" used ").append(call.name()).append(' ').append(Json.write(call.arguments())).append("]\n"));
                    case TranscriptEntry.ToolOutput output -> lines.append('[').append(output.toolName()).append(" result: ")
                            .append(output.text()).append("]\n");
                    case TranscriptEntry.Response response -> {
                        String spoken = response.structured() != null ? response.structured().path("line").asText(response.text())
                                : response.text();
                        lines.append(p.name()).append(": ").append(spoken).append('\n');
                    }
                }
            }
        }
        Memory current = memory;
        String prompt = (current.summary() == null ? "" : "Summary so far: " + current.summary().strip() + "\n\n")
                + "Conversation to fold into the summary:\n" + lines.toString().strip();
        String instructions = "You keep " + p.name() + "'s memory of talking with the player in a video game. Merge the "
                + "conversation into the summary. If " + p.name() + "'s turns are JSON, only \"line\" was said aloud. Keep names, "
                + "promises, deals, items, prices, facts learned and feelings. Write at most 100 words, in the third person.";
        Agent summarizer = new Agent(model, instructions, List.of(), agentOptions(o, null), List.of());
        TurnResult summary = summarizer.respond(new TurnRequest(prompt, null, ToolChoice.NONE, 0, 0, null),
                new TurnContext(operation.token(), TurnListener.NONE, ToolChannel.NONE, TurnContext.CommitPoint.NONE));
        operation.commit();
        List<TranscriptEntry> kept = new ArrayList<>();
        for (List<TranscriptEntry> turn : turns.subList(turns.size() - o.keepRecentTurns(), turns.size())) {
            kept.addAll(turn);
        }
        memory = memory.withSummary(summary.text().strip());
        agent.replaceHistory(kept);
    }

    // ------------------------------------------------------------------------------------ bark

    /** A one-off ambient line: no history, memory or tools. */
    String bark(@Nullable JsonNode situation, CancellationToken token) throws AgentException {
        Persona p = persona;
        NpcOptions o = options;
        Persona oneSentence = p.toBuilder().maxSentences(1).build();
        String instructions = NpcPrompts.instructions(oneSentence, o, false, NpcPrompts.SecretVisibility.HIDDEN, false, false, false);
        String text = NpcPrompts.situation(situation);
        String prompt = NpcPrompts.prompt(worldSummary(), text == null || text.isBlank() ? "An ordinary moment." : text, "");
        Agent oneOff = new Agent(model, instructions, List.of(), agentOptions(o, o.barkMaximumTokens()), List.of());
        TurnResult result = oneOff.respond(new TurnRequest(prompt, null, ToolChoice.NONE, 0, 0, null),
                new TurnContext(token, TurnListener.NONE, ToolChannel.NONE, TurnContext.CommitPoint.NONE));
        String line = Replies.bark(result.text(), p.name());
        if (line.isEmpty()) {
            throw new AgentException(ErrorCode.GENERATION_FAILED, "The bark came back empty.");
        }
        return line;
    }

    // ------------------------------------------------------------------------------------ channel

    /** World and memory tools run here ("local"); client tools go to the engine through {@code tool/call}. */
    private static final class NpcChannel implements ToolChannel {
        private final ToolChannel client;
        private final @Nullable WorldTools world;
        private final MemoryTools memory;

        NpcChannel(ToolChannel client, @Nullable WorldTools world, MemoryTools memory) {
            this.client = client;
            this.world = world;
            this.memory = memory;
        }

        @Override
        public PendingCall send(ToolCall call) {
            if (memory.handles(call.name())) {
                return done(memory.execute(call));
            }
            if (world != null && world.handles(call.name())) {
                return done(world.execute(call));
            }
            return client.send(call);
        }

        @Override
        public String execution(String toolName) {
            return memory.handles(toolName) || (world != null && world.handles(toolName)) ? "local" : "client";
        }

        private static PendingCall done(ToolReply reply) {
            CompletableFuture<ToolReply> future = CompletableFuture.completedFuture(reply);
            return new PendingCall() {
                @Override
                public CompletableFuture<ToolReply> reply() {
                    return future;
                }

                @Override
                public void abandon(String reason) {}
            };
        }
    }
}
