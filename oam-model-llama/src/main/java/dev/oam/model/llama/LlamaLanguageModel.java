package dev.oam.model.llama;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.DialogueForm;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ModelState;
import dev.oam.core.model.Sampling;
import dev.oam.core.model.Tokens;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.RepetitionGuard;
import dev.oam.model.llama.engine.SamplerExtras;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.prompt.ChatMessage;
import dev.oam.model.llama.prompt.ChatPrompt;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * A local GGUF model run by an {@link Engine}: renders each step's prompt ({@link ChatPrompt}), constrains the output
 * with a GBNF grammar built from the step's mode, tools and schema ({@link StepGrammar}), streams it
 * ({@link StepStream}) and reads it back ({@link StepOutput}).
 *
 * <p>The engine loads in the background; until it is loaded the model is {@code model_not_ready}, and steps wait for it
 * (cancellably). Thread safety: any number of sessions may run steps at once; the class keeps no mutable state besides
 * the lazily computed framing count.
 */
public final class LlamaLanguageModel implements LanguageModel {
    /** The temperature when the session sets none (llama.cpp's own default is 0.8; 0.7 is a little steadier). */
    public static final double DEFAULT_TEMPERATURE = 0.7;
    /** The least temperature of a step asked again after an invalid output (a greedy draw would repeat it). */
    public static final double RETRY_TEMPERATURE = 0.3;
    /** top-k and top-p when the session sets no sampling: llama.cpp's defaults. */
    public static final int DEFAULT_TOP_K = 40;

    public static final double DEFAULT_TOP_P = 0.95;
    /**
     * The sampler settings of a character's line ({@code GenerationOptions.dialogue()}) that the game leaves unset:
     * min-p {@value #DIALOGUE_MIN_P} and DRY at {@value #DIALOGUE_DRY} (llama.cpp's base 1.75, allowed length 2, the
     * whole context, its default breakers), over the default top-k and top-p. Chosen from {@code bench/run npc}'s
     * repetition figures on both test models (docs/MODELS.md, "Sampling"): without them small models say an earlier
     * line again word for word and loop within a line.
     */
    public static final double DIALOGUE_MIN_P = 0.05;

    public static final double DIALOGUE_DRY = 0.8;

    static final Sampling.Chain DIALOGUE_SAMPLING = new Sampling.Chain(
            null, null, DIALOGUE_MIN_P, null, null, null, null, null, Sampling.Dry.of(DIALOGUE_DRY), null, null);

    /** The sampler seed when neither the step nor the model configures one, so runs are reproducible. */
    public static final long DEFAULT_SEED = 42;
    /** Tokens a free-text answer may take when {@code maxResponseTokens} is not set. */
    public static final int DEFAULT_TEXT_TOKENS = 512;
    /**
     * Tokens a grammar-constrained output (JSON, or a call or an answer) may take when {@code maxResponseTokens} is not
     * set.
     */
    public static final int DEFAULT_GRAMMAR_TOKENS = 1024;
    /**
     * Tokens a step that must call a tool may take when {@code maxResponseTokens} is not set: a call of a game's tool
     * is a few dozen tokens, under a second of decode on a CPU even for the 270M test model; the engine closes a call
     * that runs long at this bound ({@link Engine#closesGrammarsAtBudget}).
     */
    public static final int DEFAULT_CALL_TOKENS = 128;
    /** The least a step that may call tools gets, whatever {@code maxResponseTokens} says, so a call fits. */
    public static final int MIN_CALL_TOKENS = 64;
    /** Tokens over a grammar's shortest output that an engine closing at its budget gets at the least. */
    static final int CLOSING_SLACK = 16;
    /** Strings a constrained step keeps before it gives up parallel calls to fit its budget. */
    static final int FITTING_STRING = 32;
    /** Step shapes whose grammar is remembered ({@link #cachedPlan}). */
    private static final int PLANS = 16;
    /** Longest JSON string the grammar allows, in characters. */
    public static final int MAX_STRING = 256;

    private final String name;
    private final int contextSize;
    private final CompletableFuture<Engine> engine;
    private final @Nullable Long seed;
    private final List<String> languages;
    private final Supplier<List<String>> warnings;
    private volatile int framing = -1;
    private final Map<PlanKey, StepPlan> plans = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<PlanKey, StepPlan> eldest) {
            return size() > PLANS;
        }
    }; // guarded by itself

    /**
     * @param name the model's name ({@code variant} in {@code model/availability})
     * @param contextSize tokens one session's prompt and answer may take together
     * @param engine completes with the loaded engine, or exceptionally with the reason loading failed
     * @param seed the sampler seed when a step sets none ({@code null}: {@link #DEFAULT_SEED})
     */
    public LlamaLanguageModel(
            String name,
            int contextSize,
            CompletableFuture<Engine> engine,
            @Nullable Long seed,
            List<String> languages) {
        this(name, contextSize, engine, seed, languages, List.of());
    }

    /** @param warnings what {@link #warnings()} reports (a file without a chat template) */
    public LlamaLanguageModel(
            String name,
            int contextSize,
            CompletableFuture<Engine> engine,
            @Nullable Long seed,
            List<String> languages,
            List<String> warnings) {
        this(name, contextSize, engine, seed, languages, () -> warnings);
    }

    /**
     * @param warnings what {@link #warnings()} reports, asked for on every call: the backend's finds out on the loading
     *     thread whether the file's chat template can be used, so that a host's start does not wait for it
     */
    public LlamaLanguageModel(
            String name,
            int contextSize,
            CompletableFuture<Engine> engine,
            @Nullable Long seed,
            List<String> languages,
            Supplier<List<String>> warnings) {
        if (contextSize < 1) {
            throw new IllegalArgumentException("contextSize must be at least 1, not " + contextSize);
        }
        this.name = name;
        this.contextSize = contextSize;
        this.engine = engine;
        this.seed = seed;
        this.languages = List.copyOf(languages);
        this.warnings = warnings;
    }

    @Override
    public List<String> warnings() {
        return List.copyOf(warnings.get());
    }

    @Override
    public ModelAvailability availability() {
        if (!engine.isDone()) {
            return ModelAvailability.loading(name);
        }
        if (engine.isCompletedExceptionally()) {
            return ModelAvailability.unavailable("unknown", loadFailure());
        }
        return ModelAvailability.ready(contextSize, name, languages)
                .withDevice(engine.join().device());
    }

    @Override
    public int contextSize() {
        return contextSize;
    }

    @Override
    public boolean retriesInvalidOutput() {
        return true;
    }

    @Override
    public int countTokens(String text) {
        Engine loaded = loaded();
        return loaded == null ? Tokens.estimate(text) : loaded.countTokens(text);
    }

    /** The entry as the prompt renders it: its message in the chat template, less the template's fixed framing. */
    @Override
    public int countTokens(TranscriptEntry entry) {
        Engine loaded = loaded();
        if (loaded == null) {
            return Tokens.estimate(entry);
        }
        ChatMessage message = ChatPrompt.entry(entry, loaded.controlTokens());
        int fixed = framing;
        if (fixed < 0) {
            fixed = loaded.countTokens(loaded.renderChat(List.of()));
            framing = fixed;
        }
        return Math.max(1, loaded.countTokens(loaded.renderChat(List.of(message))) - fixed);
    }

    @Override
    public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
            throws AgentException {
        token.check();
        Engine loaded = awaitEngine(token);
        StepPlan plan = cachedPlan(request, loaded.closesGrammarsAtBudget());
        String prompt = loaded.renderChat(ChatPrompt.messages(request, loaded.controlTokens()));
        if (Log.enabled(Log.Level.DEBUG)) {
            Log.debug("llama step prompt (" + request.mode() + (request.schema() != null ? ", schema" : "") + "):\n"
                    + prompt);
        }
        EngineRequest engineRequest =
                engineRequest(prompt, plan.grammar(), plan.maxTokens(), request.options(), request.attempt());
        StepStream stream = new StepStream(request, listener);
        EngineResult result;
        if (request.schema() == null && request.mode() != ToolCallingMode.REQUIRED) {
            result = generateGuarded(loaded, engineRequest, sessionKey(request), stream, token);
        } else {
            result = loaded.generate(engineRequest, sessionKey(request), stream, token);
        }
        token.check();
        Usage usage = new Usage(
                result.inputTokens(),
                Math.min(Math.max(0, result.cachedInputTokens()), result.inputTokens()),
                result.outputTokens());
        ModelResponse response = StepOutput.parse(result.text(), request, usage);
        stream.finish(response);
        return response;
    }

    /** The state of the lane that ran {@code lastStep}: its prompt, rendered as {@link #respond} rendered it. */
    @Override
    public ModelState.Saved saveState(@Nullable ModelRequest lastStep, Path file) {
        if (lastStep == null) {
            return ModelState.notSaved("The model's state was not saved: the conversation has had no turn since it was"
                    + " created or restored.");
        }
        Engine loaded = loaded();
        if (loaded == null) {
            return ModelState.notSaved("The model's state was not saved: the model " + name + " is not loaded.");
        }
        String prompt = loaded.renderChat(ChatPrompt.messages(lastStep, loaded.controlTokens()));
        return loaded.saveState(prompt, file);
    }

    @Override
    public ModelState.Restored restoreState(JsonNode reference, Path file) {
        Engine loaded;
        try {
            loaded = awaitEngine(CancellationToken.create());
        } catch (AgentException e) {
            return ModelState.notRestored(
                    "The model's state was not restored (the model is unavailable: " + e.getMessage() + ").");
        }
        return loaded.restoreState(reference, file);
    }

    /**
     * A plain-text step under a {@link RepetitionGuard}: a loop stops the generation, and the step's text is what came
     * before the loop (usage counted from the texts, since a stopped generation reports none).
     */
    private static EngineResult generateGuarded(
            Engine loaded, EngineRequest request, String key, StepStream stream, CancellationToken token)
            throws AgentException {
        CancellationToken stop = CancellationToken.create();
        Runnable link = stop::cancel;
        token.onCancel(link);
        RepetitionGuard guard = new RepetitionGuard(stream, stop);
        try {
            return loaded.generate(request, key, guard, stop);
        } catch (AgentException e) {
            if (!guard.tripped() || token.isCancelled()) {
                throw e;
            }
            String kept = guard.kept();
            return new EngineResult(kept, loaded.countTokens(request.prompt()), 0, loaded.countTokens(kept));
        } finally {
            token.removeListener(link);
        }
    }

    /**
     * The conversation's identity for the engine's prompt cache. The model never sees a session, but it sees what a
     * session keeps stable: the id of the first visible entry (a UUID, the same object from step to step and turn to
     * turn, kept across save and restore) and the system message. The key changes only when history trimming or
     * compaction hides that entry, and then the cached prefix is gone anyway. Two sessions restored from one transcript
     * share a key; the engine still tells them apart by their longest common prefix.
     */
    static String sessionKey(ModelRequest request) {
        String first =
                request.entries().isEmpty() ? "-" : request.entries().get(0).id();
        String system = ChatPrompt.system(request.instructions(), request.contextNote());
        return first + "/" + Integer.toHexString(system == null ? 0 : system.hashCode());
    }

    /**
     * What a step's plan depends on: the same tools, schema, mode, budget and spoken form give the same grammar. The
     * form names the speaker and holds the sentence limit ({@link dev.oam.model.llama.prompt.DialogueAnswer}), so two
     * NPCs with the same reply schema have grammars of their own: with one NPC's grammar another NPC's step could write
     * only the first NPC's name, and its reply then failed to parse (issue 37).
     */
    private record PlanKey(
            List<ToolDefinition> tools,
            @Nullable GenerationSchema schema,
            @Nullable DialogueForm dialogue,
            ToolCallingMode mode,
            boolean offerRespondDirectly,
            int budget,
            boolean parallel,
            boolean closes) {}

    /**
     * {@link #plan} remembered for the last {@value #PLANS} shapes of step: sizing a grammar builds it a few times over
     * (2–10 ms for a tool step), and a conversation repeats the same few shapes.
     */
    private StepPlan cachedPlan(ModelRequest request, boolean closes) throws AgentException {
        PlanKey key = new PlanKey(
                request.tools(),
                request.schema(),
                request.options().dialogue(),
                request.mode(),
                request.offerRespondDirectly(),
                maxTokens(request),
                request.options().parallelToolCalls(),
                closes);
        synchronized (plans) {
            StepPlan known = plans.get(key);
            if (known != null) {
                return known;
            }
        }
        StepPlan plan = plan(request, contextSize, closes);
        synchronized (plans) {
            plans.put(key, plan);
        }
        return plan;
    }

    /** A step's grammar ({@code null}: free text) and the most tokens it may generate. */
    record StepPlan(@Nullable Grammar grammar, int maxTokens) {}

    /**
     * The step's grammar, sized so that it ends within the step's budget ({@link #maxTokens}): the longest output a
     * grammar allows, in bytes, bounds its tokens ({@link GrammarBound}), so strings get the longest bound (up to
     * {@link #maxString}) whose grammar fits, and parallel calls are given up before strings shrink below
     * {@link #FITTING_STRING} characters (then one call gets the longest strings that fit). Free text is not counted:
     * the budget cuts it, which leaves a shorter answer, whereas a cut call or JSON answer would be a failure. Only
     * when even one call with one-character strings cannot fit (a large schema and a tiny {@code maxResponseTokens})
     * does the step get what that grammar needs.
     */
    static StepPlan plan(ModelRequest request, int contextSize) throws AgentException {
        return plan(request, contextSize, false);
    }

    /**
     * @param closes whether the engine closes a constrained output within its budget
     *     ({@link Engine#closesGrammarsAtBudget}): then strings keep their full length ({@link #MAX_STRING}, or the
     *     schema's {@code maxLength}) and only the budget bounds the step, which the engine ends with the structure
     *     closed
     */
    static StepPlan plan(ModelRequest request, int contextSize, boolean closes) throws AgentException {
        int budget = maxTokens(request);
        boolean calls = StepGrammar.mayCall(request.mode());
        if (!calls && request.schema() == null) {
            return new StepPlan(
                    StepGrammar.of(request, 1, 1), budget); // plain text: its length is the budget's business
        }
        if (closes) {
            Grammar grammar = StepGrammar.of(request, MAX_STRING, calls ? StepGrammar.maxCalls(request) : 1);
            long shortest = GrammarBound.minCodePoints(grammar); // the engine can close within this many tokens
            return new StepPlan(grammar, (int) Math.max(budget, Math.min(shortest + CLOSING_SLACK, contextSize)));
        }
        int longest = maxString(budget);
        int floor = Math.min(FITTING_STRING, longest);
        for (int maxCalls = calls ? StepGrammar.maxCalls(request) : 1; maxCalls >= 1; maxCalls--) {
            int fitting = largestFittingString(request, maxCalls, longest, budget);
            if (fitting >= floor) {
                return new StepPlan(StepGrammar.of(request, fitting, maxCalls), budget);
            }
        }
        int fitting = largestFittingString(request, 1, longest, budget);
        if (fitting >= 1) {
            return new StepPlan(StepGrammar.of(request, fitting, 1), budget);
        }
        Grammar smallest = StepGrammar.of(request, 1, 1);
        long needed = bound(smallest);
        return new StepPlan(smallest, (int) Math.max(budget, Math.min(needed, contextSize)));
    }

    /** The longest string bound in [1, longest] whose grammar fits {@code budget} bytes, or 0 when none does. */
    private static int largestFittingString(ModelRequest request, int maxCalls, int longest, int budget)
            throws AgentException {
        int low = 0; // fits (0 stands for "none")
        int high = longest;
        while (low < high) {
            int middle = (low + high + 1) >>> 1;
            if (bound(StepGrammar.of(request, middle, maxCalls)) <= budget) {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        return low;
    }

    private static long bound(@Nullable Grammar grammar) {
        return grammar == null ? 0 : GrammarBound.maxBytes(grammar, StepGrammar::isFreeText);
    }

    /**
     * {@code maxResponseTokens} or a default: {@link #DEFAULT_CALL_TOKENS} for a step that must call a tool,
     * {@link #DEFAULT_GRAMMAR_TOKENS} for one whose answer is JSON, {@link #DEFAULT_TEXT_TOKENS} otherwise; steps that
     * may call tools get at least {@link #MIN_CALL_TOKENS}.
     */
    static int maxTokens(ModelRequest request) {
        Integer configured = request.options().maxResponseTokens();
        int tokens = configured != null
                ? configured
                : request.mode() == ToolCallingMode.REQUIRED && request.schema() == null
                        ? DEFAULT_CALL_TOKENS
                        : request.schema() != null ? DEFAULT_GRAMMAR_TOKENS : DEFAULT_TEXT_TOKENS;
        return request.mode() == ToolCallingMode.DISALLOWED ? Math.max(1, tokens) : Math.max(MIN_CALL_TOKENS, tokens);
    }

    /** Strings may take about half the step's tokens (one token can be as short as one character). */
    static int maxString(int maxTokens) {
        return Math.max(16, Math.min(MAX_STRING, maxTokens / 2));
    }

    EngineRequest engineRequest(String prompt, @Nullable Grammar grammar, int maxTokens, GenerationOptions options) {
        return engineRequest(prompt, grammar, maxTokens, options, 1);
    }

    /**
     * The engine's settings for one step. A step asked again ({@code attempt} > 1, after an invalid or failed output)
     * draws with another seed, derived from the first so runs stay reproducible, and a greedy step samples at
     * {@link #RETRY_TEMPERATURE}: the same draw would only repeat the same invalid output.
     */
    EngineRequest engineRequest(
            String prompt, @Nullable Grammar grammar, int maxTokens, GenerationOptions options, int attempt) {
        double temperature = options.temperature() != null ? options.temperature() : DEFAULT_TEMPERATURE;
        int topK = DEFAULT_TOP_K;
        double topP = DEFAULT_TOP_P;
        Long stepSeed = null;
        SamplerExtras extras = SamplerExtras.NONE;
        Sampling sampling = options.sampling();
        if (options.dialogue() != null && (sampling == null || sampling instanceof Sampling.Chain)) {
            // A character's line: the dialogue defaults under whatever the game set of the chain.
            sampling = DIALOGUE_SAMPLING.with(Sampling.Chain.of(sampling));
        }
        switch (sampling) {
            case null -> {}
            case Sampling.Chain chain -> {
                if (chain.topK() != null) {
                    topK = chain.topK();
                }
                if (chain.topP() != null) {
                    topP = chain.topP();
                }
                stepSeed = chain.seed();
                extras = SamplerExtras.of(chain);
            }
            case Sampling.Greedy greedy -> temperature = 0;
            case Sampling.TopK k -> {
                topK = k.k();
                topP = 1;
                stepSeed = k.seed();
            }
            case Sampling.TopP p -> {
                topK = 0;
                topP = p.p();
                stepSeed = p.seed();
            }
        }
        long sampler = stepSeed != null ? stepSeed : seed != null ? seed : DEFAULT_SEED;
        if (attempt > 1) {
            sampler += 0x9E3779B97F4A7C15L * (attempt - 1);
            temperature = Math.max(temperature, RETRY_TEMPERATURE);
        }
        return new EngineRequest(prompt, grammar, maxTokens, Math.max(0, temperature), topK, topP, sampler, extras);
    }

    /** The engine once loaded; {@code null} while loading or after a failed load. */
    private @Nullable Engine loaded() {
        return engine.isDone() && !engine.isCompletedExceptionally() ? engine.join() : null;
    }

    private Engine awaitEngine(CancellationToken token) throws AgentException {
        if (!engine.isDone()) {
            CompletableFuture<Void> cancelled = new CompletableFuture<>();
            Runnable wake = () -> cancelled.complete(null);
            token.onCancel(wake);
            try {
                CompletableFuture.anyOf(engine, cancelled).get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw AgentException.cancelled();
            } catch (ExecutionException e) {
                // the engine failed to load: reported below
            } finally {
                token.removeListener(wake);
            }
            token.check();
        }
        if (engine.isCompletedExceptionally()) {
            throw new AgentException(ErrorCode.MODEL_UNAVAILABLE, loadFailure());
        }
        return engine.join();
    }

    private String loadFailure() {
        try {
            engine.join();
            return "The model " + name + " failed to load.";
        } catch (CompletionException | java.util.concurrent.CancellationException e) {
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            String message = cause.getMessage();
            return message == null || message.isBlank()
                    ? "The model " + name + " failed to load ("
                            + cause.getClass().getSimpleName() + ")."
                    : message;
        }
    }
}
