package dev.oam.game.npc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.agent.Agent;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.Compactor;
import dev.oam.core.agent.HistoryLimits;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.agent.TurnContext;
import dev.oam.core.agent.TurnEvent;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.agent.TurnRequest;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.DialogueForm;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelState;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.game.internal.LenientModel;
import dev.oam.game.world.WorldState;
import dev.oam.game.world.WorldTools;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * One NPC (docs/GAMES.md, "Turn building"): persona, options, memory, client tools, an optional world, and a
 * conversation with its model. {@link #talk} runs a dialogue turn (tool assembly, instructions, the guardrail retry,
 * fallbacks, the memory commit), {@link #compact} folds old turns into the memory summary and {@link #bark} makes an
 * ambient line.
 *
 * <p>Not thread-safe for changes: {@code talk}, {@code compact}, {@code update} and {@code reset} must run one at a
 * time (the bridge runs them on the NPC's own queue). The accessors and {@link #bark} may be called from any thread;
 * they see the state of the last finished change.
 */
public final class Npc {
    private final String id;
    private final LanguageModel model;
    private final Agent agent;
    /** The model as the talk agent asks it: it remembers the last step, whose lane a model-state save writes. */
    private final LenientModel talkModel;

    private final @Nullable WorldState world;
    private final AtomicInteger fallbacks = new AtomicInteger();
    private volatile Persona persona;
    private volatile NpcOptions options;
    private volatile Memory memory;
    private volatile List<ToolDefinition> clientTools;
    private volatile int turnCount;
    private volatile boolean compactionDue;

    /**
     * An NPC in {@code state}, talking to {@code model}.
     *
     * @param id how messages name the NPC (e.g. "The NPC 'gorm' has no tool …")
     * @param world the world its world tools read and write, or {@code null}
     */
    public Npc(String id, NpcState state, @Nullable WorldState world, LanguageModel model) {
        this.id = Objects.requireNonNull(id, "id");
        this.model = Objects.requireNonNull(model, "model");
        this.world = world;
        this.persona = state.persona();
        this.options = state.options();
        this.memory = state.memory();
        this.clientTools = state.tools();
        this.talkModel = LenientModel.withRules(model, Npc::floors, this::talkStep);
        this.agent = new Agent(
                talkModel,
                null,
                List.of(),
                AgentOptions.defaults(state.options().toolTimeout()),
                state.transcript());
        String entryId = state.instructionsEntryId();
        if (entryId != null) {
            agent.setInstructionsEntryId(entryId);
        }
        this.turnCount = (int) state.transcript().stream()
                .filter(e -> e instanceof TranscriptEntry.Prompt)
                .count();
    }

    public String id() {
        return id;
    }

    public Persona persona() {
        return persona;
    }

    public NpcOptions options() {
        return options;
    }

    public Memory memory() {
        return memory;
    }

    public List<ToolDefinition> clientTools() {
        return clientTools;
    }

    public @Nullable WorldState world() {
        return world;
    }

    /** How many turns the kept conversation holds (compaction does not lower it; {@link #reset} does). */
    public int turnCount() {
        return turnCount;
    }

    /** The NPC as a value, for saving: {@link #Npc(String, NpcState, WorldState, LanguageModel)} restores it. */
    public NpcState state() {
        return new NpcState(persona, options, memory, clientTools, agent.history(), agent.instructionsEntryId());
    }

    /**
     * Writes the model's state of this NPC's conversation to {@code file} (docs/GAMES.md, "Saving the model's state"):
     * the state after its last turn, on a model that keeps one. The caller runs it between turns (on the NPC's queue).
     */
    public ModelState.Saved saveModelState(Path file) {
        return model.saveState(talkModel.lastAsked(), file);
    }

    /** Loads a state {@link #saveModelState} wrote, so the next turn reads only what follows it (checked first). */
    public ModelState.Restored restoreModelState(JsonNode reference, Path file) {
        return model.restoreState(reference, file);
    }

    /** Every tool the model sees: client tools, then world tools, then memory tools. */
    public List<ToolDefinition> tools() {
        List<ToolDefinition> all = new ArrayList<>(clientTools);
        WorldState w = world;
        if (w != null) {
            all.addAll(worldTools(w, options).definitions());
        }
        all.addAll(memoryTools(options, memory).definitions());
        return all;
    }

    /** Replaces persona, options, memory and client tools at once (the caller validated them together). */
    public void update(Persona newPersona, NpcOptions newOptions, Memory newMemory, List<ToolDefinition> newTools) {
        persona = Objects.requireNonNull(newPersona, "persona");
        options = Objects.requireNonNull(newOptions, "options");
        memory = Objects.requireNonNull(newMemory, "memory");
        clientTools = List.copyOf(newTools);
    }

    /** Forgets the conversation, and with {@code clearMemory} the memory too. */
    public void reset(boolean clearMemory) {
        agent.replaceHistory(List.of());
        turnCount = 0;
        if (clearMemory) {
            memory = Memory.EMPTY;
        }
    }

    /** Counts the conversation against {@code limits} (and checks that it fits first). */
    public void attachTo(HistoryLimits limits) throws AgentException {
        limits.check(null, agent.historySize());
        limits.attach(agent);
    }

    public void detachFrom(HistoryLimits limits) {
        limits.detach(agent);
    }

    private WorldTools worldTools(WorldState w, NpcOptions o) {
        return new WorldTools(w, o.worldReadable(), o.worldWritable());
    }

    private static MemoryTools memoryTools(NpcOptions o, Memory base) {
        return new MemoryTools(o.rememberFact(), o.changeRelationship(), o.maxRelationshipChange(), o.maxFacts(), base);
    }

    private static AgentOptions agentOptions(NpcOptions o, @Nullable Integer maxTokens) {
        return AgentOptions.defaults(o.toolTimeout()).toBuilder()
                .maxToolRounds(o.maxToolRounds())
                .maxToolCalls(o.maxToolCalls())
                .temperature(o.temperature())
                .maxResponseTokens(maxTokens)
                .sampling(o.sampling())
                .build();
    }

    private @Nullable String worldSummary() {
        WorldState w = world;
        if (w == null || options.worldContextPaths().isEmpty()) {
            return null;
        }
        return w.summary(options.worldContextPaths(), 30);
    }

    // ------------------------------------------------------------------------------------ talk

    /**
     * One dialogue turn (docs/GAMES.md, "Retry and fallback lines"). World and memory tools run here; every other tool
     * call goes to {@code clientTools}. A guardrail block or refusal retries once as plain text (reply format
     * {@code auto}) and then, with {@code fallbackOnGuardrail}, answers a fallback line; memory changes are kept only
     * when the turn succeeds.
     *
     * @param commit called right before the turn changes the NPC; throws when the turn was cancelled
     * @throws AgentException the turn failed ({@code code()} is the wire error); the NPC is unchanged
     */
    public NpcReply talk(
            NpcTalk talk,
            ToolChannel clientTools,
            NpcEvent.Listener events,
            CancellationToken token,
            TurnContext.CommitPoint commit)
            throws AgentException {
        compactionDue = false;
        NpcOptions o = options;
        Persona p = persona;
        Memory before = memory;
        MemoryTools memoryTools = memoryTools(o, before);
        WorldState w = world;
        WorldTools worldTools = w == null ? null : worldTools(w, o);
        List<ToolDefinition> tools = new ArrayList<>(this.clientTools);
        if (worldTools != null) {
            tools.addAll(worldTools.definitions());
        }
        tools.addAll(memoryTools.definitions());
        boolean factTools = tools.stream()
                .anyMatch(t -> !t.name().equals(MemoryTools.REMEMBER_FACT)
                        && !t.name().equals(MemoryTools.CHANGE_RELATIONSHIP));
        ToolChoice override = talk.toolChoice();
        ToolChoice choice = override != null
                ? override
                : o.groundingTool() != null ? new ToolChoice.Named(o.groundingTool()) : o.toolChoice();
        if (tools.isEmpty()) {
            choice = ToolChoice.NONE;
        }
        if (choice instanceof ToolChoice.Named named
                && tools.stream().noneMatch(t -> t.name().equals(named.tool()))) {
            throw new AgentException(
                    ErrorCode.INVALID_REQUEST, "The NPC '" + id + "' has no tool '" + named.tool() + "'.");
        }
        boolean textMode = o.replyFormat() == ReplyFormat.TEXT;
        NpcPrompts.SecretVisibility secrets = NpcPrompts.secrets(p, o, before.relationship());
        agent.setInstructions(NpcPrompts.instructions(
                p,
                o,
                factTools,
                secrets,
                memoryTools.handles(MemoryTools.REMEMBER_FACT),
                memoryTools.handles(MemoryTools.CHANGE_RELATIONSHIP),
                textMode));
        agent.setContextNote(NpcPrompts.memoryNote(before, o.changeRelationship()));
        agent.setTools(tools);
        agent.setOptions(agentOptions(o, o.maximumResponseTokens()));
        String prompt = NpcPrompts.prompt(worldSummary(), NpcPrompts.situation(talk.context()), talk.line());

        LineTracker tracker = new LineTracker(p, change -> events.onEvent(new NpcEvent.Line(change)));
        List<ToolRecord> records = new ArrayList<>();
        TurnListener listener = new TurnListener() {
            @Override
            public void onEvent(TurnEvent event) {
                switch (event) {
                    case TurnEvent.ToolCallStarted started ->
                        events.onEvent(new NpcEvent.ToolCallStarted(started.call(), started.execution()));
                    case TurnEvent.ToolCallCompleted completed -> {
                        records.add(completed.record()); // under the tool round's lock on whichever thread
                        events.onEvent(new NpcEvent.ToolCallCompleted(completed.record()));
                    }
                    case TurnEvent.Partial partial -> tracker.partial(partial.value());
                    case TurnEvent.Text text -> tracker.text(text.text());
                    case TurnEvent.ModelStep step -> {}
                }
            }

            @Override
            public boolean acceptsReplyThread() {
                return events.acceptsReplyThread(); // a reply's thread only ever brings ToolCallCompleted
            }
        };
        ToolChannel channel = new NpcChannel(clientTools, worldTools, memoryTools);
        TurnContext turnContext = new TurnContext(token, listener, channel, commit);
        TurnResult result;
        Replies.Reply reply;
        Usage earlier = Usage.ZERO; // the blocked first attempt's, once the turn retries as text
        try {
            try {
                // The model is held to the exact reply schema; any JSON object is accepted and read leniently.
                TurnRequest turn = TurnRequest.of(prompt)
                        .withToolChoice(choice)
                        .withMaxToolRounds(o.maxToolRounds())
                        .withMaxToolCalls(o.maxToolCalls());
                if (!textMode) {
                    turn = turn.withSchema(NpcPrompts.replySchema(p, o)).withAcceptSchema(Replies.acceptedSchema());
                }
                result = agent.respond(turn, turnContext);
                if (Log.enabled(Log.Level.DEBUG)) {
                    Log.debug("npc " + p.name() + " reply as the model wrote it: "
                            + (textMode ? result.text() : Json.write(result.structured())));
                }
                reply = textMode ? Replies.text(result.text(), p) : Replies.structured(result.structured(), p, o);
            } catch (AgentException first) {
                if (!(isBlock(first) && o.replyFormat() == ReplyFormat.AUTOMATIC && !token.isCancelled())) {
                    throw first;
                }
                earlier = first.usage();
                List<String> facts = new ArrayList<>();
                for (ToolRecord record : records) {
                    if (!record.isError()) {
                        String output = record.reply().modelText();
                        facts.add(record.call().name() + " "
                                + Json.write(record.call().arguments()) + " → "
                                + (output.length() > 400 ? output.substring(0, 400) : output));
                    }
                }
                agent.setInstructions(NpcPrompts.instructions(
                        p,
                        o,
                        factTools,
                        secrets,
                        memoryTools.handles(MemoryTools.REMEMBER_FACT),
                        memoryTools.handles(MemoryTools.CHANGE_RELATIONSHIP),
                        true));
                result = agent.respond(
                        TurnRequest.of(NpcPrompts.retryPrompt(prompt, facts))
                                .withToolChoice(ToolChoice.NONE)
                                .withMaxToolRounds(o.maxToolRounds())
                                .withMaxToolCalls(o.maxToolCalls()),
                        turnContext);
                reply = Replies.text(result.text(), p);
            }
        } catch (AgentException failure) {
            memoryTools.discard();
            boolean blocked = isBlock(failure) && o.fallbackOnGuardrail();
            boolean unreadable = failure.code() == ErrorCode.GENERATION_FAILED && !token.isCancelled();
            if (blocked || unreadable) {
                commit.commit();
                String fallback = nextFallback();
                tracker.finish(p.defaultEmotion(), fallback);
                return new NpcReply(
                        fallback,
                        p.defaultEmotion(),
                        List.of(),
                        false,
                        records,
                        memory.relationship(),
                        true,
                        earlier.plus(failure.usage()),
                        unreadable ? List.of(UNREADABLE + failure.getMessage()) : List.of());
            }
            throw failure;
        }
        Memory after = memoryTools.committed();
        memory = after;
        turnCount++;
        reply = Replies.withoutPlayerLine(reply, talk.line(), p.name());
        boolean isFallback = reply.line().isBlank();
        String spoken = isFallback ? nextFallback() : reply.line();
        tracker.finish(reply.emotion(), spoken);
        compactionDue = o.compactAfterTurns() > 0
                && Compactor.splitTurns(agent.history()).size()
                        >= Math.max(o.compactAfterTurns(), o.keepRecentTurns() + 1);
        return new NpcReply(
                spoken,
                reply.emotion(),
                reply.playerOptions(),
                reply.endsConversation(),
                records,
                after.relationship(),
                isFallback,
                earlier.plus(result.usage()),
                isFallback ? List.of(NO_LINE) : List.of());
    }

    /** The warning of a turn whose reply could not be read after the retries; the model's error follows. */
    static final String UNREADABLE = "The NPC spoke a fallback line: the model's reply could not be read. ";

    /** The warning of a turn whose reply had no line to speak. */
    static final String NO_LINE = "The NPC spoke a fallback line: the model's reply had no line to speak.";

    /** The fewest characters of a player option the model is held to: more than any mood word of the reply's list. */
    static final int OPTION_FLOOR = 12;

    /**
     * The reply schema with a floor on player options: a small model otherwise writes the reply's own mood words as
     * what the player could say ("happy", "sad", "angry").
     */
    private static ObjectNode floors(ObjectNode schema) {
        return LenientModel.minLength(schema, "player_options", OPTION_FLOOR);
    }

    /** The NPC's line as dialogue ({@link DialogueForm}): how a local engine has the model write it. */
    private static ModelRequest spoken(ModelRequest request, Persona persona, int sentences) {
        return request.withOptions(
                request.options().withDialogue(new DialogueForm(persona.name(), "Player", sentences)));
    }

    /**
     * A step after the grounding tool answered may call the NPC's other tools, not the grounding tool again: it has
     * looked up what the player asked, and a small model otherwise calls it a second time (SmolLM2-135M and Gemma 3
     * 270M did in most turns of {@code bench/run npc}, a whole step more before the line), with the same question.
     */
    private ModelRequest talkStep(ModelRequest request) {
        Persona p = persona;
        ModelRequest step = options.replyFormat() == ReplyFormat.TEXT ? request : spoken(request, p, p.maxSentences());
        String grounding = options.groundingTool();
        if (grounding == null
                || step.mode() == ToolCallingMode.DISALLOWED
                || !step.turnToolNames().contains(grounding)) {
            return step;
        }
        return step.withCallable(
                step.tools().stream().filter(t -> !t.name().equals(grounding)).toList());
    }

    private static boolean isBlock(AgentException e) {
        return e.code() == ErrorCode.GUARDRAIL_VIOLATION || e.code() == ErrorCode.REFUSAL;
    }

    private String nextFallback() {
        List<String> pool = options.fallbackPool();
        return pool.get(Math.floorMod(fallbacks.getAndIncrement(), pool.size()));
    }

    // ------------------------------------------------------------------------------------ compaction

    /**
     * Whether the last {@link #talk} answered by the model left the conversation long enough to {@link #compact}
     * (docs/GAMES.md, "Compaction"); a turn that failed or fell back after a guardrail block never asks for it.
     */
    public boolean compactionDue() {
        return compactionDue;
    }

    /**
     * Folds the turns before the most recent {@code keepRecentTurns} into the memory summary (docs/GAMES.md,
     * "Compaction"). Does nothing when there are no older turns.
     *
     * @param commit called once the summary is made, right before the NPC changes
     */
    public void compact(CancellationToken token, TurnContext.CommitPoint commit) throws AgentException {
        NpcOptions o = options;
        Compactor.Split split = Compactor.split(agent.history(), o.keepRecentTurns());
        if (split == null) {
            return;
        }
        String summary = new Compactor(model, agentOptions(o, null))
                .summarize(split.older(), memory.summary(), NpcPrompts.memoryFormat(persona), token);
        commit.commit();
        memory = memory.withSummary(summary);
        agent.replaceHistory(split.kept());
    }

    // ------------------------------------------------------------------------------------ bark

    /** A one-off ambient line: no history, memory or tools; {@code situation} as {@link NpcTalk#context()}. */
    public NpcBark bark(@Nullable JsonNode situation, CancellationToken token) throws AgentException {
        Persona p = persona;
        NpcOptions o = options;
        Persona oneSentence = p.toBuilder().maxSentences(1).build();
        String instructions =
                NpcPrompts.instructions(oneSentence, o, false, NpcPrompts.SecretVisibility.HIDDEN, false, false, false);
        String text = NpcPrompts.situation(situation);
        String prompt = NpcPrompts.barkPrompt(
                worldSummary(), text == null || text.isBlank() ? "An ordinary moment." : text, p.name());
        // One sentence, written as the NPC's line: a base model otherwise continues its prompt (Gemma 3 270M barked
        // "Rules:" and ran to the token limit), and the line ends where the sentence does.
        Agent oneOff = new Agent(
                LenientModel.withRules(model, UnaryOperator.identity(), r -> spoken(r, oneSentence, 1)),
                instructions,
                List.of(),
                agentOptions(o, o.barkMaximumTokens()),
                List.of());
        TurnResult result = oneOff.respond(
                TurnRequest.of(prompt)
                        .withToolChoice(ToolChoice.NONE)
                        .withMaxToolRounds(0)
                        .withMaxToolCalls(0),
                new TurnContext(token, TurnListener.NONE, ToolChannel.NONE, TurnContext.CommitPoint.NONE));
        String line = Replies.bark(result.text(), p.name());
        if (line.isEmpty()) {
            throw new AgentException(ErrorCode.GENERATION_FAILED, "The bark came back empty.");
        }
        return new NpcBark(line, result.usage());
    }

    // ------------------------------------------------------------------------------------ channel

    /** World and memory tools run here ("local"); client tools go to the caller's channel. */
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
        public PendingCall send(ToolCall call, Consumer<? super PendingCall> beforeSending) {
            if (memory.handles(call.name()) || (world != null && world.handles(call.name()))) {
                return ToolChannel.super.send(call, beforeSending); // run here: nothing to send
            }
            return client.send(call, beforeSending);
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
