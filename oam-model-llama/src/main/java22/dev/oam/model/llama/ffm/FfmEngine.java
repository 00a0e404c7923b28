package dev.oam.model.llama.ffm;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.ModelState;
import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.ModelFile;
import dev.oam.model.llama.engine.NativeSettings;
import dev.oam.model.llama.engine.SlotEngine;
import dev.oam.model.llama.engine.SlotTable;
import dev.oam.model.llama.engine.TokenCounts;
import dev.oam.model.llama.gguf.GgufException;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.grammar.TokenConstraint;
import dev.oam.model.llama.grammar.TokenVocabulary;
import dev.oam.model.llama.prompt.ChatMessage;
import dev.oam.model.llama.prompt.ChatRenderer;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The {@link Engine} on llama.cpp's C API through FFM ({@link LlamaNative}): one model, one context with one KV
 * sequence ("lane") per slot, decoded by the process's {@link DecodeLoop} with continuous batching ({@link Scheduler}).
 * Sampling is in Java ({@link TokenPicker}); grammars are {@link TokenConstraint}s from {@link Grammars}.
 * {@code usage.outputTokens} counts the tokens sampled (not the end-of-generation token); {@code cachedInputTokens} the
 * prompt tokens the lane already held. How it decodes is its {@link FfmTuning}; what it reports, its
 * {@link FfmObserver}.
 *
 * <p>Threads: callers tokenise (thread-safe in llama.cpp), compile their grammar, wait fairly for a lane
 * ({@link SlotTable}) and then for events from the decode thread, running {@code onDelta} themselves. Everything with
 * the context runs on the decode thread.
 */
final class FfmEngine implements SlotEngine, AutoCloseable {
    private final ModelFile file;
    private final EngineSettings settings;
    private final ModelVocab vocab;
    private final SlotTable slots;
    private final ChatRenderer chat;
    private final Grammars grammars;
    private final DecodeLoop loop;
    private final Scheduler scheduler;
    private final TokenCounts tokenCounts = new TokenCounts();
    private final LaneStates states;
    private volatile boolean closed;
    /** Where the model runs ({@link Engine#device()}): set once, right after loading. */
    private volatile @Nullable String device;

    private FfmEngine(
            LlamaNative api,
            ModelFile file,
            EngineSettings settings,
            MemorySegment model,
            FfmTuning tuning,
            FfmObserver observer) {
        this.file = file;
        this.settings = settings;
        this.vocab = new ModelVocab(api, model);
        this.slots = new SlotTable(settings.slots());
        this.chat = file.chatRenderer();
        this.grammars = new Grammars(vocab, file.name(), tuning.grammar());
        this.loop = DecodeLoop.get();
        this.scheduler = new Scheduler(
                file.name(),
                vocab,
                settings,
                slots,
                tuning.pad() && file.floatMatrices(),
                streams(api, tuning),
                tuning,
                observer);
        this.states = new LaneStates(
                this,
                api,
                slots,
                scheduler,
                loop,
                file.path(),
                settings.contextSize(),
                tuning.flashAttention(settings),
                streams(api, tuning));
    }

    /** Streams for this library: {@link FfmTuning#streams()} on the vendored API. */
    private static boolean streams(LlamaNative api, FfmTuning tuning) {
        return tuning.streams() && api.api == LlamaNative.Api.VENDORED;
    }

    /**
     * Loads {@code gguf} through FFM.
     *
     * @throws UnsupportedOperationException FFM cannot run this library (wrong build, missing symbols)
     * @throws IOException the model cannot be loaded
     */
    static FfmEngine open(
            GgufFile gguf, EngineSettings requested, NativeSettings natives, FfmTuning tuning, FfmObserver observer)
            throws IOException {
        try {
            return open(ModelFile.of(gguf), requested, natives, tuning, observer);
        } catch (GgufException e) {
            throw new IOException(e.getMessage(), e);
        }
    }

    static FfmEngine open(
            ModelFile file, EngineSettings requested, NativeSettings natives, FfmTuning tuning, FfmObserver observer)
            throws IOException {
        if (!Files.isRegularFile(file.path()) || !Files.isReadable(file.path())) {
            throw new IOException("model file " + file.path() + " does not exist or is not readable");
        }
        EngineSettings resolved =
                requested.resolve(file.contextLength(), Runtime.getRuntime().availableProcessors());
        LlamaNative api = NativeLoader.library(natives);
        boolean auto = resolved.gpuLayers() == EngineSettings.AUTO_LAYERS;
        // Nothing named a count: every layer on the GPU where llama.cpp registered one, none elsewhere
        EngineSettings settings = auto ? resolved.withGpuLayers(NativeLoader.hasGpuDevice() ? -1 : 0) : resolved;
        long start = System.nanoTime();
        MemorySegment model = load(api, file, settings, tuning);
        if (model.equals(MemorySegment.NULL) && auto && settings.gpuLayers() != 0) {
            // Did not fit (or the GPU backend failed to allocate): the CPU, said in a warning, never a failed load
            Log.warning("llama model '" + file.name() + "': loading every layer on the GPU (" + NativeLoader.devices()
                    + ") failed (see llama.cpp's lines above); loading it on the CPU instead. Set gpuLayers (or "
                    + "OAM_LLAMA_GPU_LAYERS) to a count that fits.");
            NativeLog.takePlacement();
            settings = resolved.withGpuLayers(0);
            model = load(api, file, settings, tuning);
        }
        if (model.equals(MemorySegment.NULL)) {
            throw new IOException("llama.cpp cannot load " + file.path() + " (see the log for llama.cpp's reason)");
        }
        return open(api, file, settings, model, tuning, observer, auto, start);
    }

    private static FfmEngine open(
            LlamaNative api,
            ModelFile file,
            EngineSettings settings,
            MemorySegment model,
            FfmTuning tuning,
            FfmObserver observer,
            boolean auto,
            long start)
            throws IOException {
        FfmEngine engine = new FfmEngine(api, file, settings, model, tuning, observer);
        engine.device = placement(NativeLog.takePlacement(), settings.gpuLayers(), api);
        if (!auto && settings.gpuLayers() != 0 && engine.device.startsWith("CPU")) {
            Log.warning("llama model '" + file.name() + "': gpuLayers " + settings.gpuLayers() + " was asked, but "
                    + api.describe()
                    + " used no GPU (no GPU backend in this build, or no device it can use): it runs on"
                    + " the CPU. bin/build-llama --vulkan (or --cuda, --metal) gives a GPU build; docs/MODELS.md");
        }
        try {
            engine.loop.call(() -> {
                engine.scheduler.createContext(model, tuning.flashAttention(settings));
                return null;
            });
        } catch (Exception e) {
            throw new IOException("llama.cpp cannot create a context for " + file.path() + ": " + e.getMessage(), e);
        }
        engine.loop.register(engine.scheduler);
        long millis = (System.nanoTime() - start) / 1_000_000;
        Log.info("llama model '" + file.name() + "' loaded through FFM in " + millis + " ms (" + settings.slots()
                + " lane(s) of " + settings.contextSize() + " tokens, " + settings.threads() + "/"
                + settings.threadsBatch()
                + " threads; "
                + (file.chatTemplate() != null
                        ? "the file's own chat template"
                        : file.turnFormat().label() + " turns, the file has no chat template")
                + "; on " + engine.device + ")");
        return engine;
    }

    private static MemorySegment load(LlamaNative api, ModelFile file, EngineSettings settings, FfmTuning tuning)
            throws IOException {
        try (Arena local = Arena.ofConfined()) {
            MemorySegment params =
                    api.modelParams(local, settings.gpuLayers(), !streams(api, tuning) || tuning.repack());
            return (MemorySegment) api.modelLoadFromFile.invokeExact(
                    local.allocateFrom(file.path().toAbsolutePath().toString()), params);
        } catch (Throwable e) {
            throw new IOException("llama.cpp cannot load " + file.path() + ": " + e, e);
        }
    }

    @Override
    public @Nullable String device() {
        return device;
    }

    /**
     * The device text from llama.cpp's load lines ("using device Vulkan0 (…) - 7934 MiB free", "offloaded 3/3 layers to
     * GPU"): "Vulkan0 (…), 7934 MiB free, 3/3 layers", or "CPU" when no layer went to a GPU.
     */
    static String placement(List<String> lines, int gpuLayers, LlamaNative api) {
        List<String> devices = new ArrayList<>();
        String layers = null;
        for (String line : lines) {
            int at = line.indexOf("using device ");
            if (at >= 0) {
                devices.add(line.substring(at + "using device ".length())
                        .replace(" - ", ", ")
                        .strip());
            }
            Matcher offloaded =
                    Pattern.compile("offloaded (\\d+)/(\\d+) layers").matcher(line);
            if (offloaded.find()) {
                layers = offloaded.group(1) + "/" + offloaded.group(2) + " layers";
            }
        }
        String backend = api.build != null ? api.build.backend() + " build" + NativeLoader.cudaSuffix() : "b4916";
        if (devices.isEmpty() || layers != null && layers.startsWith("0/")) {
            return "CPU (" + backend
                    + (gpuLayers != 0 ? "; gpuLayers " + gpuLayers + " asked, but no GPU device was used" : "") + ")";
        }
        return String.join("; ", devices) + (layers != null ? ", " + layers : "") + " (" + backend + ")";
    }

    @Override
    public String name() {
        return file.name();
    }

    @Override
    public int contextSize() {
        return settings.contextSize();
    }

    @Override
    public EngineSettings settings() {
        return settings;
    }

    /** The vocabulary as a Java grammar sees it ({@link ModelVocab#forGrammars()}). */
    TokenVocabulary vocabulary() {
        return vocab.forGrammars();
    }

    /** With the Java grammar ({@code TokenPicker#closing}); llama.cpp's own sampler cannot be steered so. */
    @Override
    public boolean closesGrammarsAtBudget() {
        return grammars.closeAtBudget();
    }

    /** The admission queue and lanes (tests watch it). */
    @Override
    public SlotTable slotTable() {
        return slots;
    }

    @Override
    public int countTokens(String text) {
        ensureUsable();
        return tokenCounts.count(text, t -> t.isEmpty() ? 0 : vocab.tokenize(t, false, true).length);
    }

    /**
     * The tokens evaluated for {@code prompt}: BOS when the model adds one, then the prompt's, control tokens parsed.
     */
    @Override
    public int[] promptTokens(String prompt) {
        return vocab.tokenize(prompt, true, true);
    }

    @Override
    public String renderChat(List<ChatMessage> messages) {
        ensureUsable();
        return chat.render(messages);
    }

    @Override
    public Set<String> controlTokens() {
        return file.controlTokens();
    }

    @Override
    public EngineResult generate(
            EngineRequest request, Object sessionKey, Consumer<String> onDelta, CancellationToken token)
            throws AgentException {
        request.checkRunnable();
        if (closed) {
            throw SlotTable.closedError();
        }
        token.check();
        int[] prompt = promptTokens(request.prompt());
        int context = settings.contextSize();
        if (prompt.length == 0 || prompt.length + 1 > context) {
            throw new AgentException(
                    ErrorCode.CONTEXT_SIZE_EXCEEDED,
                    String.format(
                            Locale.ROOT,
                            "The prompt has %d tokens; the context holds %d (prompt and at least one generated token).",
                            prompt.length,
                            context));
        }
        for (int t : prompt) {
            if (t < 0 || t >= vocab.size) {
                throw new IllegalStateException(
                        "the tokenizer returned token " + t + " outside the vocabulary of " + vocab.size);
            }
        }
        int maxTokens = Math.max(1, Math.min(request.maxTokens(), context - prompt.length));
        TokenConstraint constraint = null;
        if (request.grammar() != null) {
            try {
                constraint = grammars.start(request.grammar());
            } catch (RuntimeException e) {
                throw failure(e);
            }
        }
        SlotTable.Lease lease;
        try {
            lease = slots.acquire(prompt, sessionKey, token);
        } catch (AgentException | RuntimeException e) {
            Grammars.close(constraint);
            throw e;
        }
        FfmGeneration generation = new FfmGeneration(this, request, maxTokens, prompt, lease, constraint);
        scheduler.submit(generation);
        loop.wake();
        if (closed) {
            generation.cancel();
        }
        return generation.await(onDelta, token);
    }

    /** The state of the free lane holding {@code lastPrompt}, written to {@code file} ({@link LaneStates}). */
    @Override
    public ModelState.Saved saveState(String lastPrompt, Path file) {
        if (closed) {
            return ModelState.notSaved("The model's state was not saved: the model is closed.");
        }
        return states.save(promptTokens(lastPrompt), file);
    }

    @Override
    public ModelState.Restored restoreState(JsonNode reference, Path file) {
        return states.restore(reference, file);
    }

    private void ensureUsable() {
        if (closed) {
            throw new IllegalStateException("the llama engine for '" + file.name() + "' is closed");
        }
    }

    boolean isClosed() {
        return closed;
    }

    /** Rouses the decode thread (a new request, a cancel). */
    void wake() {
        loop.wake();
    }

    /** Cancels running and queued generations and refuses new ones. The native model stays until the process exits. */
    @Override
    public void close() {
        closed = true;
        slots.close();
        scheduler.cancelAll();
        loop.wake();
    }

    static AgentException failure(Throwable e) {
        if (e instanceof IllegalArgumentException) {
            return new AgentException(
                    ErrorCode.GENERATION_FAILED, "The local model cannot run this request: " + e.getMessage());
        }
        Log.error("llama generation failed", e);
        return new AgentException(ErrorCode.GENERATION_FAILED, "The local model failed: " + e.getMessage());
    }
}
