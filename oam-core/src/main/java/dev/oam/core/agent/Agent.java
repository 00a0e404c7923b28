package dev.oam.core.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.PartialJson;
import dev.oam.core.schema.SchemaException;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptCodec;
import dev.oam.core.transcript.TranscriptEntry.Prompt;
import dev.oam.core.transcript.TranscriptEntry;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * An agent: instructions, tools, options and a conversation, driven one turn at a time.
 *
 * <p>Concurrency: mutators and {@link #respond} must be called by one thread at a time (the
 * session's queue guarantees it); the getters may be called from any thread and see immutable
 * snapshots.
 */
public final class Agent {
    private static final long FIRST_BACKOFF_MS = 300;

    private final LanguageModel model;
    private volatile @Nullable String instructions;
    private volatile @Nullable String contextNote;
    private volatile List<ToolDefinition> tools;
    private volatile AgentOptions options;
    private volatile List<TranscriptEntry> history;
    private volatile List<TranscriptEntry> inProgress = List.of();
    private volatile String instructionsEntryId = TranscriptEntry.newId();
    private final TokenCache tokens = new TokenCache();
    private volatile long historySize; // TranscriptCodec.size(history)
    private volatile @Nullable HistoryLimits limits;

    public Agent(LanguageModel model, @Nullable String instructions, List<ToolDefinition> tools, AgentOptions options,
            List<TranscriptEntry> history) {
        this.model = model;
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
        this.historyIndex = null;
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
        this.historyIndex = null;
        this.contextNote = null;
    }

    /**
     * Runs one turn. On success the prompt, the tool rounds and the answer are appended to the
     * history (after {@code context.commit()}); on failure or cancellation nothing changes.
     */
    public TurnResult respond(TurnRequest request, TurnContext context) throws AgentException {
        AgentOptions opts = options;
        List<ToolDefinition> toolSet = tools;
        TurnPolicy policy = policy(request, opts, toolSet);
        GenerationSchema schema = null;
        GenerationSchema accept = null;
        if (request.schema() != null) {
            try {
                schema = GenerationSchema.convert(request.schema(), "Response");
                accept = request.acceptSchema() == null ? schema : GenerationSchema.convert(request.acceptSchema(), "Response");
            } catch (SchemaException e) {
                throw new AgentException(ErrorCode.INVALID_SCHEMA, "Invalid schema at " + e.schemaPath() + ": " + e.getMessage());
            }
        }
        List<TranscriptEntry> turn = new ArrayList<>();
        turn.add(TranscriptEntry.Prompt.of(request.prompt(), request.schema()));
        return start(request, schema, accept, context, opts, toolSet, policy, turn, 0, 0);
    }

    /**
     * Continues a turn that stopped after a tool round whose outputs were supplied later (the command line's
     * exit-10 loop): {@code turnSoFar} begins with the turn's prompt and ends with that round's outputs, and
     * {@code roundsUsed} and {@code callsUsed} count what the turn had spent, so the budgets keep their rest.
     * The request's prompt is not used; its tool choice forces the first step of the continuation. Like
     * {@link #respond}, the whole turn is appended to the history on success only.
     */
    public TurnResult resume(TurnRequest request, List<TranscriptEntry> turnSoFar, int roundsUsed, int callsUsed,
            TurnContext context) throws AgentException {
        if (turnSoFar.isEmpty() || !(turnSoFar.get(0) instanceof TranscriptEntry.Prompt)) {
            throw new IllegalArgumentException("a resumed turn starts with its prompt");
        }
        AgentOptions opts = options;
        List<ToolDefinition> toolSet = tools;
        TurnPolicy policy = policy(request, opts, toolSet);
        GenerationSchema schema = null;
        if (request.schema() != null) {
            try {
                schema = GenerationSchema.convert(request.schema(), "Response");
            } catch (SchemaException e) {
                throw new AgentException(ErrorCode.INVALID_SCHEMA, "Invalid schema at " + e.schemaPath() + ": " + e.getMessage());
            }
        }
        return start(request, schema, schema, context, opts, toolSet, policy, new ArrayList<>(turnSoFar), roundsUsed, callsUsed);
    }

    private TurnResult start(TurnRequest request, @Nullable GenerationSchema schema, @Nullable GenerationSchema accept,
            TurnContext context, AgentOptions opts, List<ToolDefinition> toolSet, TurnPolicy policy, List<TranscriptEntry> turn,
            int roundsUsed, int callsUsed) throws AgentException {
        List<TranscriptEntry> base = history;
        inProgress = List.copyOf(turn);
        try {
            return runTurn(request, schema, accept, context, opts, toolSet, policy, base, turn, roundsUsed, callsUsed);
        } finally {
            inProgress = List.of();
        }
    }

    private TurnResult runTurn(TurnRequest request, @Nullable GenerationSchema schema, @Nullable GenerationSchema accept,
            TurnContext context, AgentOptions opts, List<ToolDefinition> toolSet, TurnPolicy policy, List<TranscriptEntry> base,
            List<TranscriptEntry> turn, int roundsUsed, int callsUsed) throws AgentException {
        CancellationToken token = context.token();
        List<Step> steps = new ArrayList<>();
        List<ToolRecord> records = new ArrayList<>();
        Usage usage = Usage.ZERO;
        int rounds = roundsUsed;
        int callCount = callsUsed;
        boolean respondedDirectly = false;
        try {
            for (int index = 0; ; index++) {
                token.check();
                HistoryLimits caps = limits;
                if (caps != null) {
                    caps.check(this, historySize + TranscriptCodec.size(turn));
                }
                StepPlan plan = plan(policy, toolSet, index, rounds - roundsUsed, rounds, callCount, respondedDirectly);
                Fitted fitted = fit(base, turn, plan, schema, opts);
                Step step = new Step(index, rounds, plan.mode(), plan.tools().stream().map(ToolDefinition::name).toList(),
                        fitted.trimmedEntries());
                steps.add(step);
                context.listener().onEvent(new TurnEvent.ModelStep(step));
                ModelResponse response = generate(fitted.request(), context, opts, !records.isEmpty(), schema, accept);
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
                        if (committed.size() % 64 < turn.size()) {
                            tokens.retainOnly(history);
                        }
                        return new TurnResult(text, structured, records, usage, steps);
                    }
                    case ModelResponse.ToolCalls calls -> {
                        if (plan.mode() == ToolCallingMode.DISALLOWED) {
                            throw new AgentException(ErrorCode.GENERATION_FAILED,
                                    "The model called a tool in a step where tools are disabled (step " + index + ").");
                        }
                        List<ToolCall> real = new ArrayList<>();
                        for (ToolCall call : calls.calls()) {
                            if (!(plan.offerRespondDirectly() && call.name().equals(ToolDefinition.RESPOND_DIRECTLY))) {
                                real.add(call);
                            }
                        }
                        if (real.isEmpty()) {
                            respondedDirectly = true;
                            continue;
                        }
                        List<ToolRecord> round = runToolRound(real, plan.tools(), callCount, policy.maxToolCalls(), opts, context);
                        turn.add(TranscriptEntry.ToolCalls.of(real));
                        for (ToolRecord record : round) {
                            turn.add(TranscriptEntry.ToolOutput.of(record.call().name(), record.call().id(), record.reply().modelText()));
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

    /** The JSON value of a structured answer (validated already by {@link #generate}). */
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

    /** Why a structured answer is unusable, or {@code null} when it fits the schema. */
    private static @Nullable String violation(ModelResponse response, @Nullable GenerationSchema schema) {
        if (schema == null || !(response instanceof ModelResponse.Answer answer)) {
            return null;
        }
        JsonNode value = answer.structured();
        if (value == null) {
            try {
                value = Json.parse(answer.text().strip());
            } catch (Exception e) {
                return "The model's answer is not JSON for the requested schema.";
            }
        }
        return schema.firstViolation(value).map(v -> "The model's answer does not match the schema: " + v).orElse(null);
    }

    record Fitted(ModelRequest request, int trimmedEntries) {}

    /**
     * Builds the step's request and, with {@code trimHistory}, hides the oldest complete turns of the
     * history until instructions, tools, the visible history and the reserved answer tokens fit the
     * model's context. The running turn is never hidden.
     */
    private Fitted fit(List<TranscriptEntry> base, List<TranscriptEntry> turn, StepPlan plan, @Nullable GenerationSchema schema,
            AgentOptions opts) throws AgentException {
        HistoryIndex index = index(base);
        int fixed = tokens.text(instructions) + tokens.text(contextNote);
        for (ToolDefinition tool : plan.tools()) {
            fixed += tokens.tool(tool);
        }
        if (schema != null) {
            fixed += tokens.schema(schema);
        }
        int total = fixed + index.total();
        for (TranscriptEntry entry : turn) {
            total += tokens.entry(entry);
        }
        int budget = model.contextSize() - opts.reservedResponseTokens();
        int hidden = 0;
        int turns = index.turnStarts().length;
        while (total > budget) {
            if (!opts.trimHistory() || hidden == turns) {
                throw new AgentException(ErrorCode.CONTEXT_SIZE_EXCEEDED, "The conversation needs " + total
                        + " tokens plus " + opts.reservedResponseTokens() + " reserved for the answer, but the context holds "
                        + model.contextSize() + (opts.trimHistory() ? " even with every earlier turn hidden" : " (trimHistory is off)")
                        + ". Shorten the prompt or instructions, use session/compact, or start a new session.");
            }
            total -= index.turnTokens()[hidden];
            hidden++;
        }
        int firstVisible = hidden == turns ? base.size() : index.turnStarts()[hidden];
        List<TranscriptEntry> visible = new ArrayList<>(base.size() - firstVisible + turn.size());
        visible.addAll(base.subList(firstVisible, base.size()));
        visible.addAll(turn);
        ModelRequest request = new ModelRequest(instructions, contextNote, visible, plan.tools(), plan.mode(),
                plan.offerRespondDirectly(), schema, GenerationOptions.of(opts), total);
        return new Fitted(request, firstVisible);
    }

    /**
     * Where each turn of a history starts and how many tokens it takes, kept for the current
     * history and extended when a turn is committed, so a step never walks the whole history.
     */
    private record HistoryIndex(List<TranscriptEntry> history, int[] turnStarts, int[] turnTokens, int total) {}

    private volatile @Nullable HistoryIndex historyIndex;

    private HistoryIndex index(List<TranscriptEntry> entries) {
        HistoryIndex current = historyIndex;
        if (current != null && current.history() == entries) {
            return current;
        }
        HistoryIndex built;
        if (current != null && entries.size() > current.history().size()
                && entries.get(current.history().size()) instanceof Prompt
                && (current.history().isEmpty() || entries.get(current.history().size() - 1) == current.history().get(current.history().size() - 1))) {
            built = extend(current, entries);
        } else {
            built = extend(new HistoryIndex(List.of(), new int[0], new int[0], 0), entries);
        }
        historyIndex = built;
        return built;
    }

    private HistoryIndex extend(HistoryIndex from, List<TranscriptEntry> entries) {
        int[] starts = from.turnStarts();
        int[] counts = from.turnTokens();
        int total = from.total();
        List<Integer> newStarts = new ArrayList<>();
        List<Integer> newCounts = new ArrayList<>();
        int current = -1;
        for (int i = from.history().size(); i < entries.size(); i++) {
            TranscriptEntry entry = entries.get(i);
            if (entry instanceof Prompt || (starts.length == 0 && newStarts.isEmpty())) {
                newStarts.add(i);
                newCounts.add(0);
                current = newCounts.size() - 1;
            }
            int count = tokens.entry(entry);
            if (current >= 0) {
                newCounts.set(current, newCounts.get(current) + count);
            } else {
                counts = counts.clone();
                counts[counts.length - 1] += count;
            }
            total += count;
        }
        int[] allStarts = java.util.Arrays.copyOf(starts, starts.length + newStarts.size());
        int[] allCounts = java.util.Arrays.copyOf(counts, counts.length + newCounts.size());
        for (int k = 0; k < newStarts.size(); k++) {
            allStarts[starts.length + k] = newStarts.get(k);
            allCounts[counts.length + k] = newCounts.get(k);
        }
        return new HistoryIndex(entries, allStarts, allCounts, total);
    }

    /**
     * Token counts by identity: history entries, tools and schemas are immutable and reused from step
     * to step, so each is counted once. Pruned to the live history at every commit.
     */
    private final class TokenCache {
        private final java.util.Map<Object, Integer> counts = new java.util.IdentityHashMap<>(); // guarded by this

        synchronized int entry(TranscriptEntry entry) {
            return counts.computeIfAbsent(entry, e -> model.countTokens((TranscriptEntry) e));
        }

        synchronized int tool(ToolDefinition tool) {
            return counts.computeIfAbsent(tool, t -> model.countTokens(tool.name() + " "
                    + (tool.description() == null ? "" : tool.description()) + " " + Json.write(tool.parameters())));
        }

        synchronized int schema(GenerationSchema schema) {
            return counts.computeIfAbsent(schema, s -> model.countTokens(Json.write(schema.json())));
        }

        synchronized int text(@Nullable String text) {
            if (text == null || text.isEmpty()) {
                return 0;
            }
            return counts.computeIfAbsent(text, t -> model.countTokens(text));
        }

        synchronized void retainOnly(List<TranscriptEntry> live) {
            java.util.Map<Object, Integer> kept = new java.util.IdentityHashMap<>();
            for (TranscriptEntry entry : live) {
                Integer count = counts.get(entry);
                if (count != null) {
                    kept.put(entry, count);
                }
            }
            counts.clear();
            counts.putAll(kept);
        }
    }

    /** Splits entries into turns, each starting at a prompt (entries before the first prompt form a turn of their own). */
    public static List<List<TranscriptEntry>> splitTurns(List<TranscriptEntry> entries) {
        List<List<TranscriptEntry>> turns = new ArrayList<>();
        List<TranscriptEntry> current = null;
        for (TranscriptEntry entry : entries) {
            if (current == null || entry instanceof Prompt) {
                current = new ArrayList<>();
                turns.add(current);
            }
            current.add(entry);
        }
        return turns;
    }

    /** Instructions for the summary when the caller gives none. */
    public static final String DEFAULT_SUMMARY_INSTRUCTIONS = "Summarize the conversation you are given in a few short "
            + "sentences: who said what, facts learned, promises made and anything still unresolved. Write only the summary.";

    /**
     * Summarizes all but the {@code keepRecentTurns} most recent turns with one model call, appends
     * the summary to the context note and drops those turns. Returns {@code null} (and calls no
     * model) when there is nothing to compact. Nothing changes unless the commit point is passed.
     */
    public @Nullable String compact(int keepRecentTurns, @Nullable String summaryInstructions, TurnContext context)
            throws AgentException {
        if (keepRecentTurns < 0) {
            throw new IllegalArgumentException("keepRecentTurns must not be negative");
        }
        List<List<TranscriptEntry>> turns = splitTurns(history);
        if (turns.size() <= keepRecentTurns) {
            return null;
        }
        List<List<TranscriptEntry>> older = turns.subList(0, turns.size() - keepRecentTurns);
        StringBuilder material = new StringBuilder();
        String note = contextNote;
        for (List<TranscriptEntry> oldTurn : older) {
            for (TranscriptEntry entry : oldTurn) {
                material.append(switch (entry) {
                    case TranscriptEntry.Prompt p -> "User: " + p.text();
                    case TranscriptEntry.ToolCalls c -> "Assistant called " + String.join(", ",
                            c.calls().stream().map(call -> call.name() + Json.write(call.arguments())).toList());
                    case TranscriptEntry.ToolOutput o -> "Tool " + o.toolName() + " returned: " + o.text();
                    case TranscriptEntry.Response r -> "Assistant: " + r.text();
                }).append('\n');
            }
        }
        AgentOptions opts = options;
        ModelRequest request = new ModelRequest(summaryInstructions != null ? summaryInstructions : DEFAULT_SUMMARY_INSTRUCTIONS,
                null, List.of(TranscriptEntry.Prompt.of(material.toString().strip(), null)), List.of(),
                ToolCallingMode.DISALLOWED, false, null, GenerationOptions.of(opts));
        ModelResponse response = generate(request, new TurnContext(context.token(), TurnListener.NONE, context.tools(),
                context.commit()), opts, false, null, null);
        if (!(response instanceof ModelResponse.Answer answer)) {
            throw new AgentException(ErrorCode.GENERATION_FAILED, "The model called a tool instead of writing the summary.");
        }
        String summary = answer.text().strip();
        context.commit().commit();
        List<TranscriptEntry> kept = new ArrayList<>();
        for (List<TranscriptEntry> recent : turns.subList(turns.size() - keepRecentTurns, turns.size())) {
            kept.addAll(recent);
        }
        contextNote = note == null || note.isBlank() ? summary : note.strip() + "\n\n" + summary;
        history = List.copyOf(kept);
        historySize = TranscriptCodec.size(history);
        historyIndex = null;
        return summary;
    }

    /** The turn's policy; a {@code {"tool": name}} naming a tool the agent lacks is rejected here. */
    private static TurnPolicy policy(TurnRequest request, AgentOptions opts, List<ToolDefinition> toolSet) throws AgentException {
        TurnPolicy base = TurnPolicy.of(opts);
        TurnPolicy policy = new TurnPolicy(
                request.toolChoice() != null ? request.toolChoice() : base.toolChoice(),
                request.maxToolRounds() != null ? request.maxToolRounds() : base.maxToolRounds(),
                request.maxToolCalls() != null ? request.maxToolCalls() : base.maxToolCalls(),
                request.enabledTools() != null ? request.enabledTools() : base.enabledTools());
        if (policy.toolChoice() instanceof ToolChoice.Named named
                && toolSet.stream().noneMatch(tool -> tool.name().equals(named.tool()))) {
            throw new AgentException(ErrorCode.INVALID_PARAMS,
                    "Parameter 'toolChoice' names the tool '" + named.tool() + "', which the session does not have.");
        }
        return policy;
    }

    record StepPlan(ToolCallingMode mode, List<ToolDefinition> tools, boolean offerRespondDirectly) {}

    /** The per-step steering rules (GAME-LAYER.md §3.11). */
    static StepPlan plan(TurnPolicy policy, List<ToolDefinition> toolSet, int index, int rounds, int calls,
            boolean respondedDirectly) {
        return plan(policy, toolSet, index, rounds, rounds, calls, respondedDirectly);
    }

    /** {@code roundsThisCall}: the rounds run since this call began (forcing applies while it is 0); {@code rounds}: the turn's. */
    static StepPlan plan(TurnPolicy policy, List<ToolDefinition> toolSet, int index, int roundsThisCall, int rounds, int calls,
            boolean respondedDirectly) {
        List<ToolDefinition> enabled = toolSet;
        if (policy.enabledTools() != null) {
            Set<String> allowed = new LinkedHashSet<>(policy.enabledTools());
            enabled = toolSet.stream().filter(tool -> allowed.contains(tool.name())).toList();
        }
        ToolChoice choice = policy.toolChoice();
        ToolCallingMode mode;
        if (choice instanceof ToolChoice.None || respondedDirectly
                || rounds >= policy.maxToolRounds() || calls >= policy.maxToolCalls()) {
            mode = ToolCallingMode.DISALLOWED;
        } else if ((choice instanceof ToolChoice.Required || choice instanceof ToolChoice.Explicit) && roundsThisCall == 0) {
            mode = ToolCallingMode.REQUIRED;
        } else if (choice instanceof ToolChoice.Named named && roundsThisCall == 0) {
            mode = ToolCallingMode.REQUIRED;
            enabled = enabled.stream().filter(tool -> tool.name().equals(named.tool())).toList();
        } else {
            mode = ToolCallingMode.ALLOWED;
        }
        if (enabled.isEmpty()) {
            mode = ToolCallingMode.DISALLOWED;
        }
        if (mode == ToolCallingMode.DISALLOWED) {
            return new StepPlan(mode, List.of(), false);
        }
        boolean offer = choice instanceof ToolChoice.Explicit && index == 0;
        return new StepPlan(mode, enabled, offer);
    }

    /** One step, asked again within {@code maxAttempts} where that may help; the answer must fit {@code accept}. */
    private ModelResponse generate(ModelRequest request, TurnContext context, AgentOptions opts, boolean toolRan,
            @Nullable GenerationSchema schema, @Nullable GenerationSchema accept) throws AgentException {
        CancellationToken token = context.token();
        long backoff = FIRST_BACKOFF_MS;
        Usage retried = Usage.ZERO; // what the attempts asked again consumed
        for (int attempt = 1; ; attempt++) {
            TextAccumulator text = new TextAccumulator(context.listener(), schema);
            try {
                ModelResponse response = model.respond(attempt == 1 ? request : request.withAttempt(attempt), text, token);
                token.check();
                String violation = violation(response, accept);
                if (violation != null) {
                    if (!model.retriesInvalidOutput() || attempt >= opts.maxAttempts()) {
                        throw AgentException.invalidOutput(violation).withUsage(response.usage());
                    }
                    retried = retried.plus(response.usage());
                    text.resetIfStreamed();
                    continue;
                }
                return plusUsage(response, retried);
            } catch (AgentException e) {
                if (token.isCancelled()) {
                    throw AgentException.cancelled().withUsage(retried.plus(e.usage()));
                }
                if (!e.isRetryable() || toolRan || attempt >= opts.maxAttempts() || e.isInvalidOutput()) {
                    throw e.withUsage(retried);
                }
                retried = retried.plus(e.usage());
                text.resetIfStreamed();
                token.sleep(backoff);
                backoff *= 2;
            } catch (RuntimeException e) {
                if (token.isCancelled()) {
                    throw AgentException.cancelled();
                }
                throw e;
            }
        }
    }


    /** {@code response} with {@code extra} added to its usage. */
    private static ModelResponse plusUsage(ModelResponse response, Usage extra) {
        if (extra.equals(Usage.ZERO)) {
            return response;
        }
        return switch (response) {
            case ModelResponse.Answer a -> new ModelResponse.Answer(a.text(), a.structured(), extra.plus(a.usage()));
            case ModelResponse.ToolCalls c -> new ModelResponse.ToolCalls(c.calls(), extra.plus(c.usage()));
        };
    }

    /**
     * Turns model text callbacks into events: {@code text} events with the whole answer so far, or,
     * in schema turns, {@code partial} events with the value the JSON so far implies.
     */
    private static final class TextAccumulator implements ModelListener {
        private final TurnListener listener;
        private final @Nullable GenerationSchema schema;
        private final StringBuilder text = new StringBuilder();
        private JsonNode lastPartial;
        private boolean streamed;

        TextAccumulator(TurnListener listener, @Nullable GenerationSchema schema) {
            this.listener = listener;
            this.schema = schema;
        }

        @Override
        public void onText(String delta) {
            if (delta.isEmpty()) {
                return;
            }
            text.append(delta);
            streamed = true;
            if (schema == null) {
                listener.onEvent(new TurnEvent.Text(delta, text.toString(), false));
            } else {
                partial(PartialJson.parse(text.toString()));
            }
        }

        @Override
        public void onReset(String whole) {
            text.setLength(0);
            text.append(whole);
            streamed = true;
            if (schema == null) {
                listener.onEvent(new TurnEvent.Text(whole, whole, true));
            } else {
                lastPartial = null;
                partial(PartialJson.parse(whole));
            }
        }

        @Override
        public void onPartial(JsonNode value) {
            partial(value);
        }

        private void partial(@Nullable JsonNode value) {
            if (value == null || value.equals(lastPartial)) {
                return;
            }
            lastPartial = value;
            listener.onEvent(new TurnEvent.Partial(schema == null ? value : schema.reorder(value)));
        }

        void resetIfStreamed() {
            if (streamed && schema == null) {
                onReset("");
            }
            streamed = false;
            lastPartial = null;
            text.setLength(0);
        }
    }

    /**
     * Runs the client tool calls of one step: every call is sent before any answer is awaited, and
     * the records come back in completion order. Timeouts and cancellation abandon the calls still
     * outstanding.
     */
    private static List<ToolRecord> runToolRound(List<ToolCall> calls, List<ToolDefinition> enabled, int callsBefore,
            int maxToolCalls, AgentOptions opts, TurnContext context) throws AgentException {
        int n = calls.size();
        ToolChannel.PendingCall[] pending = new ToolChannel.PendingCall[n];
        ToolReply[] immediate = new ToolReply[n];
        Duration[] timeouts = new Duration[n];
        for (int i = 0; i < n; i++) {
            ToolCall call = calls.get(i);
            ToolDefinition definition = enabled.stream().filter(t -> t.name().equals(call.name())).findFirst().orElse(null);
            if (callsBefore + i >= maxToolCalls) {
                immediate[i] = ToolReply.error("Tool call limit reached (maxToolCalls is " + maxToolCalls + "); '"
                        + call.name() + "' was not run. Answer with what you have.");
            } else if (definition == null) {
                immediate[i] = ToolReply.error("Tool '" + call.name() + "' is not available. Available tools: "
                        + String.join(", ", enabled.stream().map(ToolDefinition::name).toList()) + ".");
            } else if (definition.schema().firstViolation(call.arguments()).isPresent()) {
                immediate[i] = ToolReply.error("Invalid arguments for '" + call.name() + "': "
                        + definition.schema().firstViolation(call.arguments()).get()
                        + ". Call it again with arguments that match its parameters.");
            } else {
                timeouts[i] = definition.effectiveTimeout(opts.toolTimeout());
            }
        }
        for (ToolCall call : calls) {
            context.listener().onEvent(new TurnEvent.ToolCallStarted(call, context.tools().execution(call.name())));
        }
        long[] started = new long[n];
        BlockingQueue<Integer> done = new LinkedBlockingQueue<>();
        for (int i = 0; i < n; i++) {
            started[i] = System.nanoTime();
            if (immediate[i] == null) {
                pending[i] = context.tools().send(calls.get(i));
                int index = i;
                pending[i].reply().whenComplete((reply, error) -> done.offer(index));
            }
        }
        // Calls that were never sent completed at once, so they come first in completion order.
        List<ToolRecord> records = new ArrayList<>();
        boolean[] finished = new boolean[n];
        for (int i = 0; i < n; i++) {
            if (immediate[i] != null) {
                finished[i] = true;
                record(records, calls.get(i), immediate[i], 0, context);
            }
        }
        Runnable wake = () -> done.offer(-1);
        CancellationToken token = context.token();
        token.onCancel(wake);
        try {
            while (records.size() < n) {
                if (token.isCancelled()) {
                    abandonAll(pending, finished, "The request was cancelled.");
                    throw AgentException.cancelled();
                }
                long now = System.nanoTime();
                long wait = Long.MAX_VALUE;
                for (int i = 0; i < n; i++) {
                    if (!finished[i] && immediate[i] == null && !timeouts[i].isZero()) {
                        long deadline = started[i] + nanos(timeouts[i]);
                        if (deadline - now <= 0) {
                            finished[i] = true;
                            String message = "Tool '" + calls.get(i).name() + "' timed out after " + seconds(timeouts[i]) + "s.";
                            pending[i].abandon("Error: " + message);
                            record(records, calls.get(i), ToolReply.error(message), now - started[i], context);
                        } else {
                            wait = Math.min(wait, deadline - now);
                        }
                    }
                }
                if (records.size() == n) {
                    break;
                }
                Integer index = wait == Long.MAX_VALUE ? done.take() : done.poll(wait, TimeUnit.NANOSECONDS);
                if (index == null || index < 0 || finished[index]) {
                    continue;
                }
                finished[index] = true;
                ToolReply reply = pending[index].reply().join();
                record(records, calls.get(index), reply, System.nanoTime() - started[index], context);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abandonAll(pending, finished, "The request was cancelled.");
            throw AgentException.cancelled();
        } catch (RuntimeException | Error e) {
            abandonAll(pending, finished, "The request failed.");
            throw e;
        } finally {
            token.removeListener(wake);
        }
        return records;
    }

    private static void record(List<ToolRecord> records, ToolCall call, ToolReply reply, long nanos, TurnContext context) {
        ToolRecord record = ToolRecord.of(call, reply, nanos);
        records.add(record);
        context.listener().onEvent(new TurnEvent.ToolCallCompleted(record));
    }

    private static void abandonAll(ToolChannel.PendingCall[] pending, boolean[] finished, String reason) {
        for (int i = 0; i < pending.length; i++) {
            if (pending[i] != null && !finished[i]) {
                finished[i] = true;
                pending[i].abandon(reason);
            }
        }
    }

    private static long nanos(Duration duration) {
        try {
            return duration.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }

    /** Seconds as written by a person: {@code 120}, {@code 0.2}. */
    public static String seconds(Duration duration) {
        BigDecimal seconds = BigDecimal.valueOf(duration.getSeconds()).add(BigDecimal.valueOf(duration.getNano(), 9));
        return seconds.stripTrailingZeros().toPlainString();
    }
}
