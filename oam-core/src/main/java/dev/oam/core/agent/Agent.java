package dev.oam.core.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.transcript.TranscriptCodec;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * An agent: instructions, tools, options and a conversation, driven one turn at a time.
 *
 * <p>This class holds the conversation state and runs the turn loop; each step is planned by {@code StepPlanner} (which
 * tools, which calling mode), fitted into the model's context by {@code ContextWindow}, generated through
 * {@code RetryPolicy} (which streams through a {@code StreamAccumulator}), and a step's tool calls run in a
 * {@code ToolRound}. {@link #compact} summarises older turns with a {@link Compactor}.
 *
 * <p>Concurrency: mutators and {@link #respond} must be called by one thread at a time (the session's queue guarantees
 * it); the getters may be called from any thread and see immutable snapshots.
 */
public final class Agent {
    private final LanguageModel model;
    private volatile @Nullable String instructions;
    private volatile @Nullable String contextNote;
    private volatile List<ToolDefinition> tools;
    private volatile AgentOptions options;
    private volatile List<TranscriptEntry> history;
    private volatile List<TranscriptEntry> inProgress = List.of();
    private volatile String instructionsEntryId = TranscriptEntry.newId();
    private final ContextWindow window;
    private final RetryPolicy retries;
    private volatile long historySize; // TranscriptCodec.size(history)
    private volatile @Nullable HistoryLimits limits;

    public Agent(
            LanguageModel model,
            @Nullable String instructions,
            List<ToolDefinition> tools,
            AgentOptions options,
            List<TranscriptEntry> history) {
        this.model = model;
        this.window = new ContextWindow(model);
        this.retries = new RetryPolicy(model);
        this.instructions = instructions;
        this.tools = List.copyOf(tools);
        this.options = options;
        this.history = List.copyOf(history);
        this.historySize = TranscriptCodec.size(this.history);
    }

    public LanguageModel model() {
        return model;
    }

    public @Nullable String instructions() {
        return instructions;
    }

    public @Nullable String contextNote() {
        return contextNote;
    }

    public List<ToolDefinition> tools() {
        return tools;
    }

    public AgentOptions options() {
        return options;
    }

    /** The committed conversation (entries after the instructions). */
    public List<TranscriptEntry> history() {
        return history;
    }

    /** The committed conversation plus the running turn's entries so far. */
    public List<TranscriptEntry> historyWithTurnInProgress() {
        List<TranscriptEntry> turn = inProgress;
        if (turn.isEmpty()) {
            return history;
        }
        List<TranscriptEntry> all = new ArrayList<>(history);
        all.addAll(turn);
        return List.copyOf(all);
    }

    /** The id of the transcript's instructions entry (kept across a save and restore). */
    public String instructionsEntryId() {
        return instructionsEntryId;
    }

    public void setInstructionsEntryId(String id) {
        this.instructionsEntryId = id;
    }

    public void setInstructions(@Nullable String instructions) {
        this.instructions = instructions;
    }

    public void setContextNote(@Nullable String note) {
        this.contextNote = note;
    }

    public void setTools(List<ToolDefinition> tools) {
        this.tools = List.copyOf(tools);
    }

    public void setOptions(AgentOptions options) {
        this.options = options;
    }

    public void replaceHistory(List<TranscriptEntry> entries) {
        this.history = List.copyOf(entries);
        this.historySize = TranscriptCodec.size(history);
        window.historyReplaced();
    }

    /** The size of the committed history's transcript JSON ({@link TranscriptCodec#size(List)}), kept up to date. */
    public long historySize() {
        return historySize;
    }

    /** Holds this agent's turns to {@code limits} ({@link HistoryLimits#attach} calls it); {@code null}: no caps. */
    void useLimits(@Nullable HistoryLimits limits) {
        this.limits = limits;
    }

    /** Clears the conversation and the context note; keeps instructions and tools. */
    public void reset() {
        this.history = List.of();
        this.historySize = 0;
        window.historyReplaced();
        this.contextNote = null;
    }

    /** The session's options with this turn's sampling, when it has one. */
    private AgentOptions turnOptions(TurnRequest request) {
        AgentOptions session = options;
        return request.sampling() == null
                ? session
                : session.toBuilder()
                        .sampling(request.samplingOver(session.sampling()))
                        .build();
    }

    /**
     * Runs one turn. On success the prompt, the tool rounds and the answer are appended to the history (after
     * {@code context.commit()}); on failure or cancellation nothing changes.
     */
    public TurnResult respond(TurnRequest request, TurnContext context) throws AgentException {
        AgentOptions opts = turnOptions(request);
        List<ToolDefinition> toolSet = tools;
        TurnPolicy policy = StepPlanner.policy(request, opts, toolSet);
        GenerationSchema schema = generationSchema(request);
        GenerationSchema accept = request.acceptSchema() == null ? schema : convert(request.acceptSchema());
        List<TranscriptEntry> turn = new ArrayList<>();
        turn.add(TranscriptEntry.Prompt.of(request.prompt(), request.schema()));
        return start(new TurnSetup(request, schema, accept, context, opts, toolSet, policy, 0, 0), turn);
    }

    /**
     * Continues a turn that stopped after a tool round whose outputs were supplied later (the command line's exit-10
     * loop): {@code turnSoFar} begins with the turn's prompt and ends with that round's outputs, and {@code roundsUsed}
     * and {@code callsUsed} count what the turn had spent, so the budgets keep their rest. The request's prompt is not
     * used; its tool choice forces the first step of the continuation. Like {@link #respond}, the whole turn is
     * appended to the history on success only.
     */
    public TurnResult resume(
            TurnRequest request, List<TranscriptEntry> turnSoFar, int roundsUsed, int callsUsed, TurnContext context)
            throws AgentException {
        if (turnSoFar.isEmpty() || !(turnSoFar.get(0) instanceof TranscriptEntry.Prompt)) {
            throw new IllegalArgumentException("a resumed turn starts with its prompt");
        }
        AgentOptions opts = turnOptions(request);
        List<ToolDefinition> toolSet = tools;
        TurnPolicy policy = StepPlanner.policy(request, opts, toolSet);
        GenerationSchema schema = generationSchema(request);
        return start(
                new TurnSetup(request, schema, schema, context, opts, toolSet, policy, roundsUsed, callsUsed),
                new ArrayList<>(turnSoFar));
    }

    /** The turn's schema as the model is held to it: the caller's conversion when it made one, else converted here. */
    private static @Nullable GenerationSchema generationSchema(TurnRequest request) throws AgentException {
        JsonNode schema = request.schema();
        if (schema == null) {
            return null;
        }
        GenerationSchema converted = request.generationSchema();
        return converted != null ? converted : convert(schema);
    }

    private static GenerationSchema convert(JsonNode schema) throws AgentException {
        try {
            return GenerationSchema.convert(schema, "Response");
        } catch (SchemaException e) {
            throw new AgentException(
                    ErrorCode.INVALID_SCHEMA, "Invalid schema at " + e.schemaPath() + ": " + e.getMessage());
        }
    }

    /**
     * What one turn runs with, fixed when it starts: the request, its schema as generated and as accepted, the options,
     * tools and policy of that moment (a later change applies to the next turn), and what a resumed turn had spent
     * already.
     */
    private record TurnSetup(
            TurnRequest request,
            @Nullable GenerationSchema schema,
            @Nullable GenerationSchema accept,
            TurnContext context,
            AgentOptions opts,
            List<ToolDefinition> toolSet,
            TurnPolicy policy,
            int roundsUsed,
            int callsUsed) {}

    private TurnResult start(TurnSetup setup, List<TranscriptEntry> turn) throws AgentException {
        List<TranscriptEntry> base = history;
        inProgress = List.copyOf(turn);
        try {
            return runTurn(setup, base, turn);
        } finally {
            inProgress = List.of();
        }
    }

    private TurnResult runTurn(TurnSetup setup, List<TranscriptEntry> base, List<TranscriptEntry> turn)
            throws AgentException {
        GenerationSchema schema = setup.schema();
        TurnContext context = setup.context();
        AgentOptions opts = setup.opts();
        List<ToolDefinition> toolSet = setup.toolSet();
        TurnPolicy policy = setup.policy();
        int roundsUsed = setup.roundsUsed();
        CancellationToken token = context.token();
        List<Step> steps = new ArrayList<>();
        List<ToolRecord> records = new ArrayList<>();
        Usage usage = Usage.ZERO;
        int rounds = roundsUsed;
        int callCount = setup.callsUsed();
        boolean respondedDirectly = false;
        try {
            for (int index = 0; ; index++) {
                token.check();
                HistoryLimits caps = limits;
                if (caps != null) {
                    caps.check(this, historySize + TranscriptCodec.size(turn));
                }
                StepPlanner.StepOffer offer = StepPlanner.offer(
                        policy, toolSet, index, rounds - roundsUsed, rounds, callCount, respondedDirectly);
                ContextWindow.Fitted fitted = window.fit(instructions, contextNote, base, turn, offer, schema, opts);
                Step step = new Step(
                        index,
                        rounds,
                        offer.mode(),
                        offer.tools().stream().map(ToolDefinition::name).toList(),
                        fitted.trimmedEntries());
                steps.add(step);
                context.listener().onEvent(new TurnEvent.ModelStep(step));
                ModelResponse response = retries.generate(
                        fitted.request(),
                        token,
                        context.listener(),
                        opts.maxAttempts(),
                        !records.isEmpty(),
                        schema,
                        setup.accept());
                usage = usage.plus(response.usage());
                switch (response) {
                    case ModelResponse.Answer answer -> {
                        String text = answer.text();
                        JsonNode structured = null;
                        TranscriptEntry.Response entry;
                        if (schema != null) {
                            structured = schema.reorder(structuredValue(answer));
                            text = Json.write(structured);
                            entry = TranscriptEntry.Response.structured(text, structured, "Response");
                        } else {
                            entry = TranscriptEntry.Response.text(text);
                        }
                        turn.add(entry);
                        context.commit().commit();
                        List<TranscriptEntry> committed = new ArrayList<>(history);
                        committed.addAll(turn);
                        history = List.copyOf(committed);
                        historySize += TranscriptCodec.size(turn);
                        window.committed(history);
                        return new TurnResult(text, structured, records, usage, steps);
                    }
                    case ModelResponse.ToolCalls calls -> {
                        if (offer.mode() == ToolCallingMode.DISALLOWED) {
                            throw new AgentException(
                                    ErrorCode.GENERATION_FAILED,
                                    "The model called a tool in a step where tools are disabled (step " + index + ").");
                        }
                        List<ToolCall> real = new ArrayList<>();
                        for (ToolCall call : calls.calls()) {
                            if (!(offer.offerRespondDirectly()
                                    && call.name().equals(ToolDefinition.RESPOND_DIRECTLY))) {
                                real.add(call);
                            }
                        }
                        if (real.isEmpty()) {
                            respondedDirectly = true;
                            continue;
                        }
                        List<ToolRecord> round =
                                ToolRound.run(real, offer.tools(), callCount, policy.maxToolCalls(), opts, context);
                        turn.add(TranscriptEntry.ToolCalls.of(real));
                        for (ToolRecord record : round) {
                            turn.add(TranscriptEntry.ToolOutput.of(
                                    record.call().name(),
                                    record.call().id(),
                                    record.reply().modelText()));
                        }
                        inProgress = List.copyOf(turn);
                        records.addAll(round);
                        rounds++;
                        callCount += real.size();
                    }
                }
            }
        } catch (AgentException e) {
            throw e.withUsage(usage); // what the steps before the failure consumed
        }
    }

    /** The JSON value of a structured answer (validated already by the {@code RetryPolicy}). */
    private static JsonNode structuredValue(ModelResponse.Answer answer) {
        if (answer.structured() != null) {
            return answer.structured();
        }
        try {
            return Json.parse(answer.text().strip());
        } catch (Exception e) {
            throw new IllegalStateException("a validated answer must be JSON", e);
        }
    }

    /** Instructions for the summary when the caller gives none ({@link Compactor#DEFAULT_INSTRUCTIONS}). */
    public static final String DEFAULT_SUMMARY_INSTRUCTIONS = Compactor.DEFAULT_INSTRUCTIONS;

    /**
     * Summarizes all but the {@code keepRecentTurns} most recent turns with one model call ({@link Compactor},
     * {@linkplain Compactor#transcript transcript format}), appends the summary to the context note and drops those
     * turns. Returns {@code null} (and calls no model) when there is nothing to compact. Nothing changes unless the
     * commit point is passed.
     */
    public @Nullable String compact(int keepRecentTurns, @Nullable String summaryInstructions, TurnContext context)
            throws AgentException {
        Compactor.Split split = Compactor.split(history, keepRecentTurns);
        if (split == null) {
            return null;
        }
        String note = contextNote;
        String summary = new Compactor(model, options)
                .summarize(split.older(), null, Compactor.transcript(summaryInstructions), context.token());
        context.commit().commit();
        contextNote = note == null || note.isBlank() ? summary : note.strip() + "\n\n" + summary;
        history = split.kept();
        historySize = TranscriptCodec.size(history);
        window.historyReplaced();
        return summary;
    }
}
