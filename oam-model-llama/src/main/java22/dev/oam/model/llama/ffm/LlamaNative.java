package dev.oam.model.llama.ffm;

import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.LlamaBuilds;
import dev.oam.model.llama.engine.NativeLibrary;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * llama.cpp's C API called through FFM, on one of two libraries whose struct layouts are known:
 *
 * <ul>
 *   <li>{@link Api#B4916}: build b4916 (commit c6af2161), the build inside de.kherud:llama 4.2.0, on the library
 *       {@link NativeLibrary} extracts from the binding's jar (the default). One KV cache for all lanes; AVX2 kernels
 *       on x86-64.
 *   <li>{@link Api#VENDORED}: the llama.cpp tree vendored by llama-cpp-python {@value #VENDORED_SOURCE}, built by the
 *       project's own script ({@code bin/lib/real-models.sh}, {@code oam_llama_library}) as shared libraries for this
 *       machine's CPU, named by {@value #LIBRARY_VARIABLE} (or the system property {@value #LIBRARY_PROPERTY}). Its
 *       {@code llama.h} is newer: the memory API ({@code llama_memory_*}), a KV stream per sequence ({@code kv_unified
 *       = false}), different parameter structs.
 * </ul>
 *
 * Opened with {@code SymbolLookup.libraryLookup}, so the binding's {@code JNI_OnLoad} never runs and no binding class
 * is needed.
 *
 * <p>The layouts below are those of the vendored tree's {@code include/llama.h}, checked against those builds.
 * {@link NativeLoader} refuses any other library: a build number, commit, missing symbol or default-parameter value
 * that differs means the layouts may be wrong, and a wrong layout is silent memory corruption. For the jar's library
 * the caller then uses the JNI engine; a library named by {@value #LIBRARY_VARIABLE} that fails a check fails the
 * model's load with the reason (it was asked for).
 *
 * <p>Threads: {@code llama_decode}, logits, KV and state calls belong to the one decode thread ({@link DecodeLoop});
 * tokenising and detokenising are safe from any thread. Methods wrap {@code Throwable} from {@code invokeExact} into
 * {@link IllegalStateException}.
 */
@SuppressWarnings(
        "restricted") // calling llama.cpp through FFM is this class's job; oam.jar and bin/oam enable native access
final class LlamaNative {
    static final int BUILD_NUMBER = 4916;
    static final String COMMIT = "c6af2161";
    /** The environment variable naming a project-built {@code libllama} ({@link Api#VENDORED}). */
    static final String LIBRARY_VARIABLE = dev.oam.model.llama.engine.NativeSettings.LIBRARY_VARIABLE;

    static final String LIBRARY_PROPERTY = dev.oam.model.llama.engine.NativeSettings.LIBRARY_PROPERTY;
    /** The source package whose llama.cpp tree {@link Api#VENDORED} is. */
    static final String VENDORED_SOURCE = "0.3.36";
    /** The build record the script writes next to the library ({@link LlamaBuilds}). */
    static final String BUILD_RECORD = LlamaBuilds.RECORD;

    /** Which {@code llama.h} the opened library was built from. */
    enum Api {
        /** b4916 inside de.kherud:llama 4.2.0. */
        B4916,
        /** llama-cpp-python {@value #VENDORED_SOURCE}'s llama.cpp, built by the project's script. */
        VENDORED
    }

    static final StructLayout MODEL_PARAMS = structLayout(
            ADDRESS.withName("devices"),
            JAVA_INT.withName("n_gpu_layers"),
            JAVA_INT.withName("split_mode"),
            JAVA_INT.withName("main_gpu"),
            paddingLayout(4),
            ADDRESS.withName("tensor_split"),
            ADDRESS.withName("progress_callback"),
            ADDRESS.withName("progress_callback_user_data"),
            ADDRESS.withName("kv_overrides"),
            JAVA_BOOLEAN.withName("vocab_only"),
            JAVA_BOOLEAN.withName("use_mmap"),
            JAVA_BOOLEAN.withName("use_mlock"),
            JAVA_BOOLEAN.withName("check_tensors"),
            paddingLayout(4));
    static final StructLayout CONTEXT_PARAMS = structLayout(
            JAVA_INT.withName("n_ctx"),
            JAVA_INT.withName("n_batch"),
            JAVA_INT.withName("n_ubatch"),
            JAVA_INT.withName("n_seq_max"),
            JAVA_INT.withName("n_threads"),
            JAVA_INT.withName("n_threads_batch"),
            JAVA_INT.withName("rope_scaling_type"),
            JAVA_INT.withName("pooling_type"),
            JAVA_INT.withName("attention_type"),
            JAVA_FLOAT.withName("rope_freq_base"),
            JAVA_FLOAT.withName("rope_freq_scale"),
            JAVA_FLOAT.withName("yarn_ext_factor"),
            JAVA_FLOAT.withName("yarn_attn_factor"),
            JAVA_FLOAT.withName("yarn_beta_fast"),
            JAVA_FLOAT.withName("yarn_beta_slow"),
            JAVA_INT.withName("yarn_orig_ctx"),
            JAVA_FLOAT.withName("defrag_thold"),
            paddingLayout(4),
            ADDRESS.withName("cb_eval"),
            ADDRESS.withName("cb_eval_user_data"),
            JAVA_INT.withName("type_k"),
            JAVA_INT.withName("type_v"),
            JAVA_BOOLEAN.withName("logits_all"),
            JAVA_BOOLEAN.withName("embeddings"),
            JAVA_BOOLEAN.withName("offload_kqv"),
            JAVA_BOOLEAN.withName("flash_attn"),
            JAVA_BOOLEAN.withName("no_perf"),
            paddingLayout(3),
            ADDRESS.withName("abort_callback"),
            ADDRESS.withName("abort_callback_data"));
    static final StructLayout BATCH = structLayout(
            JAVA_INT.withName("n_tokens"),
            paddingLayout(4),
            ADDRESS.withName("token"),
            ADDRESS.withName("embd"),
            ADDRESS.withName("pos"),
            ADDRESS.withName("n_seq_id"),
            ADDRESS.withName("seq_id"),
            ADDRESS.withName("logits"));
    static final StructLayout TOKEN_DATA =
            structLayout(JAVA_INT.withName("id"), JAVA_FLOAT.withName("logit"), JAVA_FLOAT.withName("p"));
    static final StructLayout TOKEN_DATA_ARRAY = structLayout(
            ADDRESS.withName("data"),
            JAVA_LONG.withName("size"),
            JAVA_LONG.withName("selected"),
            JAVA_BOOLEAN.withName("sorted"),
            paddingLayout(7));

    /** {@code llama_model_params} of {@link Api#VENDORED} ({@code include/llama.h}), 80 bytes. */
    static final StructLayout MODEL_PARAMS_VENDORED = structLayout(
            ADDRESS.withName("devices"),
            ADDRESS.withName("tensor_buft_overrides"),
            JAVA_INT.withName("n_gpu_layers"),
            JAVA_INT.withName("split_mode"),
            JAVA_INT.withName("load_mode"),
            JAVA_INT.withName("lazy_mode"),
            JAVA_INT.withName("main_gpu"),
            paddingLayout(4),
            ADDRESS.withName("tensor_split"),
            ADDRESS.withName("progress_callback"),
            ADDRESS.withName("progress_callback_user_data"),
            ADDRESS.withName("kv_overrides"),
            JAVA_BOOLEAN.withName("vocab_only"),
            JAVA_BOOLEAN.withName("check_tensors"),
            JAVA_BOOLEAN.withName("use_extra_bufts"),
            JAVA_BOOLEAN.withName("no_host"),
            JAVA_BOOLEAN.withName("no_alloc"),
            JAVA_BOOLEAN.withName("load_mtp"),
            paddingLayout(2));
    /** {@code llama_context_params} of {@link Api#VENDORED}, 160 bytes: the booleans moved after the callbacks. */
    static final StructLayout CONTEXT_PARAMS_VENDORED = structLayout(
            JAVA_INT.withName("n_ctx"),
            JAVA_INT.withName("n_batch"),
            JAVA_INT.withName("n_ubatch"),
            JAVA_INT.withName("n_seq_max"),
            JAVA_INT.withName("n_rs_seq"),
            JAVA_INT.withName("n_outputs_max"),
            JAVA_INT.withName("n_outputs_max_per_seq"),
            JAVA_INT.withName("n_threads"),
            JAVA_INT.withName("n_threads_batch"),
            JAVA_INT.withName("ctx_type"),
            JAVA_INT.withName("rope_scaling_type"),
            JAVA_INT.withName("pooling_type"),
            JAVA_INT.withName("attention_type"),
            JAVA_INT.withName("flash_attn_type"),
            JAVA_FLOAT.withName("rope_freq_base"),
            JAVA_FLOAT.withName("rope_freq_scale"),
            JAVA_FLOAT.withName("yarn_ext_factor"),
            JAVA_FLOAT.withName("yarn_attn_factor"),
            JAVA_FLOAT.withName("yarn_beta_fast"),
            JAVA_FLOAT.withName("yarn_beta_slow"),
            JAVA_INT.withName("yarn_orig_ctx"),
            JAVA_FLOAT.withName("defrag_thold"),
            ADDRESS.withName("cb_eval"),
            ADDRESS.withName("cb_eval_user_data"),
            JAVA_INT.withName("type_k"),
            JAVA_INT.withName("type_v"),
            ADDRESS.withName("abort_callback"),
            ADDRESS.withName("abort_callback_data"),
            JAVA_BOOLEAN.withName("embeddings"),
            JAVA_BOOLEAN.withName("offload_kqv"),
            JAVA_BOOLEAN.withName("no_perf"),
            JAVA_BOOLEAN.withName("op_offload"),
            JAVA_BOOLEAN.withName("swa_full"),
            JAVA_BOOLEAN.withName("kv_unified"),
            paddingLayout(2),
            ADDRESS.withName("samplers"),
            JAVA_LONG.withName("n_samplers"),
            ADDRESS.withName("ctx_other"));

    final Linker linker = Linker.nativeLinker();
    private final SymbolLookup lookup;
    /** The {@code llama.h} of the opened library. */
    final Api api;
    /** The library file opened, for messages. */
    final Path library;
    /** What the project's build record says of it ({@link Api#VENDORED}); null for the binding's library. */
    final LlamaBuilds.@Nullable Build build;
    /** {@code llama_model_params} and {@code llama_context_params} as this library lays them out. */
    private final StructLayout modelLayout;

    private final StructLayout contextLayout;
    final MethodHandle backendInit;
    final MethodHandle logSet;
    final MethodHandle modelDefaultParams;
    final MethodHandle contextDefaultParams;
    final MethodHandle modelLoadFromFile;
    final MethodHandle initFromModel;
    final MethodHandle modelGetVocab;
    final MethodHandle vocabNTokens;
    final MethodHandle vocabIsEog;
    final MethodHandle vocabIsControl;
    final MethodHandle tokenize;
    final MethodHandle tokenToPiece;
    final MethodHandle decode;
    final MethodHandle getLogitsIth;
    private final MethodHandle setNThreads;
    private final MethodHandle nThreads;
    private final MethodHandle nThreadsBatch;
    /** {@code llama_kv_self_seq_rm(ctx, …)} on b4916, {@code llama_memory_seq_rm(memory, …)} on the vendored API. */
    private final MethodHandle seqRm;
    /** {@code llama_kv_self_clear(ctx)}, or {@code llama_memory_clear(memory, bool)}. */
    private final MethodHandle clear;
    /** {@code llama_memory_seq_pos_max(memory, seq)}; {@link Api#VENDORED} only (null on b4916). */
    private final @Nullable MethodHandle seqPosMax;
    /** {@code llama_get_memory(ctx)}; {@link Api#VENDORED} only. */
    private final @Nullable MethodHandle getMemory;

    /** {@code llama_state_seq_save_file} and {@code _load_file}: the same signature on both libraries. */
    private final MethodHandle stateSeqSaveFile;

    private final MethodHandle stateSeqLoadFile;
    final MethodHandle samplerInitGrammar;
    final MethodHandle samplerApply;
    final MethodHandle samplerAccept;
    final MethodHandle samplerFree;

    LlamaNative(SymbolLookup lookup, Api api, Path library, LlamaBuilds.@Nullable Build build) {
        this.lookup = lookup;
        this.api = api;
        this.library = library;
        this.build = build;
        StructLayout modelParams = api == Api.B4916 ? MODEL_PARAMS : MODEL_PARAMS_VENDORED;
        StructLayout contextParams = api == Api.B4916 ? CONTEXT_PARAMS : CONTEXT_PARAMS_VENDORED;
        this.modelLayout = modelParams;
        this.contextLayout = contextParams;
        backendInit = handle("llama_backend_init", FunctionDescriptor.ofVoid());
        logSet = handle("llama_log_set", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS));
        modelDefaultParams = handle("llama_model_default_params", FunctionDescriptor.of(modelParams));
        contextDefaultParams = handle("llama_context_default_params", FunctionDescriptor.of(contextParams));
        modelLoadFromFile = handle("llama_model_load_from_file", FunctionDescriptor.of(ADDRESS, ADDRESS, modelParams));
        initFromModel = handle("llama_init_from_model", FunctionDescriptor.of(ADDRESS, ADDRESS, contextParams));
        modelGetVocab = handle("llama_model_get_vocab", FunctionDescriptor.of(ADDRESS, ADDRESS));
        vocabNTokens = handle("llama_vocab_n_tokens", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        vocabIsEog = handle("llama_vocab_is_eog", FunctionDescriptor.of(JAVA_BOOLEAN, ADDRESS, JAVA_INT));
        vocabIsControl = handle("llama_vocab_is_control", FunctionDescriptor.of(JAVA_BOOLEAN, ADDRESS, JAVA_INT));
        tokenize = handle(
                "llama_tokenize",
                FunctionDescriptor.of(
                        JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, JAVA_BOOLEAN, JAVA_BOOLEAN));
        tokenToPiece = handle(
                "llama_token_to_piece",
                FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT, JAVA_BOOLEAN));
        decode = handle("llama_decode", FunctionDescriptor.of(JAVA_INT, ADDRESS, BATCH));
        getLogitsIth = handle("llama_get_logits_ith", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
        setNThreads = handle("llama_set_n_threads", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_INT));
        nThreads = handle("llama_n_threads", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        nThreadsBatch = handle("llama_n_threads_batch", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        if (api == Api.B4916) {
            seqRm = handle(
                    "llama_kv_self_seq_rm", FunctionDescriptor.of(JAVA_BOOLEAN, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT));
            clear = handle("llama_kv_self_clear", FunctionDescriptor.ofVoid(ADDRESS));
            seqPosMax = null;
            getMemory = null;
        } else {
            seqRm = handle(
                    "llama_memory_seq_rm", FunctionDescriptor.of(JAVA_BOOLEAN, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT));
            clear = handle("llama_memory_clear", FunctionDescriptor.ofVoid(ADDRESS, JAVA_BOOLEAN));
            seqPosMax = handle("llama_memory_seq_pos_max", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
            getMemory = handle("llama_get_memory", FunctionDescriptor.of(ADDRESS, ADDRESS));
        }
        stateSeqSaveFile = handle(
                "llama_state_seq_save_file",
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG));
        stateSeqLoadFile = handle(
                "llama_state_seq_load_file",
                FunctionDescriptor.of(JAVA_LONG, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS));
        samplerInitGrammar =
                handle("llama_sampler_init_grammar", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        samplerApply = handle("llama_sampler_apply", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS));
        samplerAccept = handle("llama_sampler_accept", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
        samplerFree = handle("llama_sampler_free", FunctionDescriptor.ofVoid(ADDRESS));
    }

    private MethodHandle handle(String name, FunctionDescriptor descriptor) {
        MemorySegment symbol = lookup.find(name)
                .orElseThrow(() -> new UnsupportedOperationException("the native library has no symbol " + name));
        return linker.downcallHandle(symbol, descriptor);
    }

    /** Which library and API, for logs and messages. */
    String describe() {
        return api == Api.B4916
                ? "b4916 (" + COMMIT + ", de.kherud:llama " + NativeLibrary.BINDING_VERSION + "'s library)"
                : build != null
                        ? build.describe()
                        : "llama-cpp-python " + VENDORED_SOURCE + "'s llama.cpp, built here (" + library + ")";
    }

    /** The default parameters at their measured offsets: a cheap guard against a layout that moved. */
    void checkDefaults() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment model =
                    (MemorySegment) modelDefaultParams.invokeExact((java.lang.foreign.SegmentAllocator) arena);
            MemorySegment context =
                    (MemorySegment) contextDefaultParams.invokeExact((java.lang.foreign.SegmentAllocator) arena);
            List<String> wrong =
                    api == Api.B4916 ? b4916Mismatches(model, context) : vendoredMismatches(model, context);
            if (!wrong.isEmpty()) {
                throw new UnsupportedOperationException("default parameters differ from "
                        + (api == Api.B4916 ? "b4916's" : "llama-cpp-python " + VENDORED_SOURCE + "'s llama.cpp") + ": "
                        + String.join(", ", wrong));
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("reading llama.cpp's default parameters failed: " + e, e);
        }
    }

    private static List<String> b4916Mismatches(MemorySegment model, MemorySegment context) {
        List<String> wrong = new ArrayList<>();
        expect(wrong, "model.split_mode", model.get(JAVA_INT, 12), 1);
        expect(wrong, "model.use_mmap", model.get(JAVA_BYTE, 57), 1);
        expect(wrong, "model.vocab_only", model.get(JAVA_BYTE, 56), 0);
        expect(wrong, "context.n_ctx", context.get(JAVA_INT, 0), 512);
        expect(wrong, "context.n_batch", context.get(JAVA_INT, 4), 2048);
        expect(wrong, "context.n_ubatch", context.get(JAVA_INT, 8), 512);
        expect(wrong, "context.n_seq_max", context.get(JAVA_INT, 12), 1);
        expect(wrong, "context.rope_scaling_type", context.get(JAVA_INT, 24), -1);
        expect(wrong, "context.yarn_ext_factor", Math.round(context.get(JAVA_FLOAT, 44)), -1);
        expect(wrong, "context.yarn_beta_fast", Math.round(context.get(JAVA_FLOAT, 52)), 32);
        expect(wrong, "context.defrag_thold", Math.round(context.get(JAVA_FLOAT, 64)), -1);
        expect(wrong, "context.type_k", context.get(JAVA_INT, 88), 1);
        expect(wrong, "context.type_v", context.get(JAVA_INT, 92), 1);
        expect(wrong, "context.offload_kqv", context.get(JAVA_BYTE, 98), 1);
        expect(wrong, "context.no_perf", context.get(JAVA_BYTE, 100), 1);
        expect(wrong, "context.abort_callback", (int) context.get(JAVA_LONG, 104), 0);
        return wrong;
    }

    /** Defaults from the vendored tree's {@code llama_*_default_params}. */
    private static List<String> vendoredMismatches(MemorySegment model, MemorySegment context) {
        List<String> wrong = new ArrayList<>();
        expect(wrong, "model.n_gpu_layers", model.get(JAVA_INT, 16), -1);
        expect(wrong, "model.split_mode", model.get(JAVA_INT, 20), 1);
        expect(wrong, "model.vocab_only", model.get(JAVA_BYTE, 72), 0);
        expect(wrong, "model.use_extra_bufts", model.get(JAVA_BYTE, 74), 1);
        expect(wrong, "model.load_mtp", model.get(JAVA_BYTE, 77), 0);
        expect(wrong, "context.n_ctx", context.get(JAVA_INT, 0), 512);
        expect(wrong, "context.n_batch", context.get(JAVA_INT, 4), 2048);
        expect(wrong, "context.n_ubatch", context.get(JAVA_INT, 8), 512);
        expect(wrong, "context.n_seq_max", context.get(JAVA_INT, 12), 1);
        expect(wrong, "context.n_outputs_max_per_seq", context.get(JAVA_INT, 24), 1);
        expect(wrong, "context.rope_scaling_type", context.get(JAVA_INT, 40), -1);
        expect(wrong, "context.flash_attn_type", context.get(JAVA_INT, 52), -1);
        expect(wrong, "context.yarn_ext_factor", Math.round(context.get(JAVA_FLOAT, 64)), -1);
        expect(wrong, "context.defrag_thold", Math.round(context.get(JAVA_FLOAT, 84)), -1);
        expect(wrong, "context.type_k", context.get(JAVA_INT, 104), 1);
        expect(wrong, "context.type_v", context.get(JAVA_INT, 108), 1);
        expect(wrong, "context.abort_callback", (int) context.get(JAVA_LONG, 112), 0);
        expect(wrong, "context.offload_kqv", context.get(JAVA_BYTE, 129), 1);
        expect(wrong, "context.no_perf", context.get(JAVA_BYTE, 130), 1);
        expect(wrong, "context.swa_full", context.get(JAVA_BYTE, 132), 1);
        expect(wrong, "context.kv_unified", context.get(JAVA_BYTE, 133), 0);
        expect(wrong, "context.ctx_other", (int) context.get(JAVA_LONG, 152), 0);
        return wrong;
    }

    /**
     * Model parameters for {@code gpuLayers} (always explicit: macOS builds default to 999, the vendored one to -1).
     * {@code repack}: whether ggml may keep weights in its repacked layouts ({@code use_extra_bufts}; vendored only,
     * b4916's default stays).
     */
    MemorySegment modelParams(Arena arena, int gpuLayers, boolean repack) throws Throwable {
        MemorySegment params =
                (MemorySegment) modelDefaultParams.invokeExact((java.lang.foreign.SegmentAllocator) arena);
        params.set(
                JAVA_INT, offset(modelLayout, "n_gpu_layers"), gpuLayers < 0 ? EngineSettings.ALL_LAYERS : gpuLayers);
        if (api == Api.VENDORED) {
            params.set(JAVA_BOOLEAN, offset(modelLayout, "use_extra_bufts"), repack);
        }
        return params;
    }

    /**
     * Context parameters. {@code streams}: a KV stream per sequence ({@code kv_unified = false}, vendored only); then
     * {@code cells} is split evenly between the {@code sequences}.
     */
    MemorySegment contextParams(
            Arena arena,
            int cells,
            int batch,
            int sequences,
            int threads,
            int threadsBatch,
            boolean flashAttention,
            boolean streams)
            throws Throwable {
        if (streams && api == Api.B4916) {
            throw new IllegalArgumentException("b4916 has one KV cache for all sequences");
        }
        MemorySegment params =
                (MemorySegment) contextDefaultParams.invokeExact((java.lang.foreign.SegmentAllocator) arena);
        params.set(JAVA_INT, offset(contextLayout, "n_ctx"), cells);
        params.set(JAVA_INT, offset(contextLayout, "n_batch"), batch);
        params.set(JAVA_INT, offset(contextLayout, "n_ubatch"), batch);
        params.set(JAVA_INT, offset(contextLayout, "n_seq_max"), sequences);
        params.set(JAVA_INT, offset(contextLayout, "n_threads"), threads);
        params.set(JAVA_INT, offset(contextLayout, "n_threads_batch"), threadsBatch);
        if (api == Api.B4916) {
            // defrag threshold: lanes interleave in the one cache, freed cells scatter
            params.set(JAVA_FLOAT, offset(contextLayout, "defrag_thold"), 0.1f);
            params.set(JAVA_BOOLEAN, offset(contextLayout, "flash_attn"), flashAttention);
        } else {
            // 0 = no limit below n_outputs_max: the padding row is a second output of its lane
            params.set(JAVA_INT, offset(contextLayout, "n_outputs_max_per_seq"), 0);
            params.set(JAVA_INT, offset(contextLayout, "flash_attn_type"), flashAttention ? 1 : 0); // never auto
            params.set(JAVA_BOOLEAN, offset(contextLayout, "kv_unified"), !streams);
        }
        return params;
    }

    /** Where {@code field} lies in {@code layout}. */
    private static long offset(StructLayout layout, String field) {
        return layout.byteOffset(MemoryLayout.PathElement.groupElement(field));
    }

    /** Removes {@code seq}'s cells at positions [p0, p1) (-1: open); false when llama.cpp refuses a partial removal. */
    boolean seqRm(MemorySegment context, int seq, int p0, int p1) {
        try {
            return api == Api.B4916
                    ? (boolean) seqRm.invokeExact(context, seq, p0, p1)
                    : (boolean) seqRm.invokeExact(memory(context), seq, p0, p1);
        } catch (Throwable e) {
            throw failed(api == Api.B4916 ? "llama_kv_self_seq_rm" : "llama_memory_seq_rm", e);
        }
    }

    /** Empties the whole KV cache of {@code context}. */
    void clear(MemorySegment context) {
        try {
            if (api == Api.B4916) {
                clear.invokeExact(context);
            } else {
                clear.invokeExact(memory(context), true);
            }
        } catch (Throwable e) {
            throw failed(api == Api.B4916 ? "llama_kv_self_clear" : "llama_memory_clear", e);
        }
    }

    /** The highest position {@code seq} holds, -1 when it holds none. Vendored API only. */
    int seqPosMax(MemorySegment context, int seq) {
        MethodHandle h = seqPosMax;
        if (h == null) {
            throw new UnsupportedOperationException("llama_memory_seq_pos_max needs the vendored API");
        }
        try {
            return (int) h.invokeExact(memory(context), seq);
        } catch (Throwable e) {
            throw failed("llama_memory_seq_pos_max", e);
        }
    }

    /**
     * {@code llama_state_seq_save_file}: writes {@code seq}'s cells and {@code tokens} (the tokens they hold) to
     * {@code file}. Returns the bytes written, 0 when llama.cpp failed. Decode thread.
     */
    long stateSeqSave(MemorySegment context, Path file, int seq, int[] tokens) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment path = arena.allocateFrom(file.toAbsolutePath().toString());
            MemorySegment list = arena.allocate(JAVA_INT, Math.max(1, tokens.length));
            MemorySegment.copy(tokens, 0, list, JAVA_INT, 0, tokens.length);
            return (long) stateSeqSaveFile.invokeExact(context, path, seq, list, (long) tokens.length);
        } catch (Throwable e) {
            throw failed("llama_state_seq_save_file", e);
        }
    }

    /**
     * {@code llama_state_seq_load_file}: loads {@code file} into {@code seq} (which must be empty). Returns the tokens
     * the file says its cells hold, or {@code null} when llama.cpp refused the file (it then leaves {@code seq} empty).
     * At most {@code capacity} tokens. Decode thread.
     */
    int @Nullable [] stateSeqLoad(MemorySegment context, Path file, int seq, int capacity) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment path = arena.allocateFrom(file.toAbsolutePath().toString());
            MemorySegment tokens = arena.allocate(JAVA_INT, Math.max(1, capacity));
            MemorySegment count = arena.allocate(JAVA_LONG);
            long read = (long) stateSeqLoadFile.invokeExact(context, path, seq, tokens, (long) capacity, count);
            long n = count.get(JAVA_LONG, 0);
            if (read == 0 || n < 0 || n > capacity) {
                return null;
            }
            return tokens.asSlice(0, n * 4L).toArray(JAVA_INT);
        } catch (Throwable e) {
            throw failed("llama_state_seq_load_file", e);
        }
    }

    private MemorySegment memory(MemorySegment context) throws Throwable {
        MethodHandle h = getMemory;
        if (h == null) {
            throw new IllegalStateException("llama_get_memory needs the vendored API");
        }
        return (MemorySegment) h.invokeExact(context);
    }

    private static void expect(List<String> wrong, String what, int value, int expected) {
        if (value != expected) {
            wrong.add(what + "=" + value + " (expected " + expected + ")");
        }
    }

    // ---- convenience wrappers ----

    static IllegalStateException failed(String what, Throwable e) {
        if (e instanceof RuntimeException r && !(e instanceof IllegalStateException)) {
            return new IllegalStateException(what + ": " + r, r);
        }
        return e instanceof IllegalStateException ise ? ise : new IllegalStateException(what + ": " + e, e);
    }

    /**
     * {@code llama_set_n_threads(ctx, …)}: the threads of a decode of one row, and of several, stored in the context
     * for the next decodes (the vendored library logs each call at debug level).
     */
    void setThreads(MemorySegment context, int threads, int threadsBatch) {
        try {
            setNThreads.invokeExact(context, threads, threadsBatch);
        } catch (Throwable e) {
            throw failed("llama_set_n_threads", e);
        }
    }

    /** {@code llama_n_threads(ctx)}: the threads of a decode of one row. */
    int nThreads(MemorySegment context) {
        try {
            return (int) nThreads.invokeExact(context);
        } catch (Throwable e) {
            throw failed("llama_n_threads", e);
        }
    }

    /** {@code llama_n_threads_batch(ctx)}: the threads of a decode of several rows. */
    int nThreadsBatch(MemorySegment context) {
        try {
            return (int) nThreadsBatch.invokeExact(context);
        } catch (Throwable e) {
            throw failed("llama_n_threads_batch", e);
        }
    }

    int nTokens(MemorySegment vocab) {
        try {
            return (int) vocabNTokens.invokeExact(vocab);
        } catch (Throwable e) {
            throw failed("llama_vocab_n_tokens", e);
        }
    }

    boolean isEog(MemorySegment vocab, int token) {
        try {
            return (boolean) vocabIsEog.invokeExact(vocab, token);
        } catch (Throwable e) {
            throw failed("llama_vocab_is_eog", e);
        }
    }

    boolean isControl(MemorySegment vocab, int token) {
        try {
            return (boolean) vocabIsControl.invokeExact(vocab, token);
        } catch (Throwable e) {
            throw failed("llama_vocab_is_control", e);
        }
    }

    /** {@code llama_tokenize}; thread-safe. */
    int[] tokenize(MemorySegment vocab, String text, boolean addSpecial, boolean parseSpecial) {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment in = arena.allocate(utf8.length + 1L);
            MemorySegment.copy(utf8, 0, in, JAVA_BYTE, 0, utf8.length);
            int capacity = utf8.length + 2;
            MemorySegment out = arena.allocate(JAVA_INT, capacity);
            int n = (int) tokenize.invokeExact(vocab, in, utf8.length, out, capacity, addSpecial, parseSpecial);
            if (n < 0) {
                capacity = -n;
                out = arena.allocate(JAVA_INT, capacity);
                n = (int) tokenize.invokeExact(vocab, in, utf8.length, out, capacity, addSpecial, parseSpecial);
            }
            if (n < 0) {
                throw new IllegalStateException("llama_tokenize failed (" + n + ")");
            }
            return out.asSlice(0, n * 4L).toArray(JAVA_INT);
        } catch (Throwable e) {
            throw failed("llama_tokenize", e);
        }
    }

    /** The bytes of one token ({@code llama_token_to_piece}, no strip); thread-safe. */
    byte[] piece(MemorySegment vocab, int token, boolean special, MemorySegment buffer) {
        try {
            int n = (int) tokenToPiece.invokeExact(vocab, token, buffer, (int) buffer.byteSize(), 0, special);
            if (n < 0) {
                try (Arena arena = Arena.ofConfined()) {
                    MemorySegment bigger = arena.allocate(-n);
                    n = (int) tokenToPiece.invokeExact(vocab, token, bigger, -n, 0, special);
                    return n <= 0 ? new byte[0] : bigger.asSlice(0, n).toArray(JAVA_BYTE);
                }
            }
            return n == 0 ? new byte[0] : buffer.asSlice(0, n).toArray(JAVA_BYTE);
        } catch (Throwable e) {
            throw failed("llama_token_to_piece", e);
        }
    }
}
