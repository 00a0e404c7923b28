package dev.oam.model.llama.ffm;

import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.oam.core.Log;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.LlamaBuilds;
import dev.oam.model.llama.engine.NativeLibrary;
import dev.oam.model.llama.prompt.ChatMessage;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * llama.cpp's C API called through FFM, on one of two libraries whose struct layouts are known:
 * <ul>
 *   <li>{@link Api#B4916}: build b4916 (commit c6af2161), the build inside de.kherud:llama 4.2.0, on the library
 *       {@link NativeLibrary} extracts from the binding's jar (the default). One KV cache for all lanes; AVX2
 *       kernels on x86-64.
 *   <li>{@link Api#VENDORED}: the llama.cpp tree vendored by llama-cpp-python {@value #VENDORED_SOURCE}, built by
 *       the project's own script ({@code bin/lib/real-models.sh}, {@code oam_llama_library}) as shared libraries for
 *       this machine's CPU, named by {@value #LIBRARY_VARIABLE} (or the system property {@value #LIBRARY_PROPERTY}).
 *       Its {@code llama.h} is newer: the memory API ({@code llama_memory_*}), a KV stream per sequence
 *       ({@code kv_unified = false}), different parameter structs.
 * </ul>
 * Opened with {@code SymbolLookup.libraryLookup}, so the binding's {@code JNI_OnLoad} never runs and no binding
 * class is needed.
 *
 * <p>The layouts below were measured for those builds (docs: {@code LLAMA-FFM.md} §1, and the vendored tree's
 * {@code include/llama.h}). {@link #open} refuses any other library: a build number, commit, missing symbol or
 * default-parameter value that differs means the layouts may be wrong, and a wrong layout is silent memory
 * corruption. For the jar's library the caller then uses the JNI engine; a library named by
 * {@value #LIBRARY_VARIABLE} that fails a check fails the model's load with the reason (it was asked for).
 *
 * <p>Threads: {@code llama_decode}, logits, KV and state calls belong to the one decode thread
 * ({@link DecodeLoop}); tokenising and detokenising are safe from any thread. Methods wrap {@code Throwable} from
 * {@code invokeExact} into {@link IllegalStateException}.
 */
public final class LlamaNative {
    static final int BUILD_NUMBER = 4916;
    static final String COMMIT = "c6af2161";
    /** The environment variable naming a project-built {@code libllama} ({@link Api#VENDORED}). */
    static final String LIBRARY_VARIABLE = "OAM_LLAMA_LIBRARY";
    static final String LIBRARY_PROPERTY = "oam.llama.library";
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

    static final StructLayout MODEL_PARAMS = structLayout(ADDRESS.withName("devices"), JAVA_INT.withName("n_gpu_layers"),
            JAVA_INT.withName("split_mode"), JAVA_INT.withName("main_gpu"), paddingLayout(4), ADDRESS.withName("tensor_split"),
            ADDRESS.withName("progress_callback"), ADDRESS.withName("progress_callback_user_data"),
            ADDRESS.withName("kv_overrides"), JAVA_BOOLEAN.withName("vocab_only"), JAVA_BOOLEAN.withName("use_mmap"),
            JAVA_BOOLEAN.withName("use_mlock"), JAVA_BOOLEAN.withName("check_tensors"), paddingLayout(4));
    static final StructLayout CONTEXT_PARAMS = structLayout(JAVA_INT.withName("n_ctx"), JAVA_INT.withName("n_batch"),
            JAVA_INT.withName("n_ubatch"), JAVA_INT.withName("n_seq_max"), JAVA_INT.withName("n_threads"),
            JAVA_INT.withName("n_threads_batch"), JAVA_INT.withName("rope_scaling_type"), JAVA_INT.withName("pooling_type"),
            JAVA_INT.withName("attention_type"), JAVA_FLOAT.withName("rope_freq_base"), JAVA_FLOAT.withName("rope_freq_scale"),
            JAVA_FLOAT.withName("yarn_ext_factor"), JAVA_FLOAT.withName("yarn_attn_factor"), JAVA_FLOAT.withName("yarn_beta_fast"),
            JAVA_FLOAT.withName("yarn_beta_slow"), JAVA_INT.withName("yarn_orig_ctx"), JAVA_FLOAT.withName("defrag_thold"),
            paddingLayout(4), ADDRESS.withName("cb_eval"), ADDRESS.withName("cb_eval_user_data"), JAVA_INT.withName("type_k"),
            JAVA_INT.withName("type_v"), JAVA_BOOLEAN.withName("logits_all"), JAVA_BOOLEAN.withName("embeddings"),
            JAVA_BOOLEAN.withName("offload_kqv"), JAVA_BOOLEAN.withName("flash_attn"), JAVA_BOOLEAN.withName("no_perf"),
            paddingLayout(3), ADDRESS.withName("abort_callback"), ADDRESS.withName("abort_callback_data"));
    static final StructLayout BATCH = structLayout(JAVA_INT.withName("n_tokens"), paddingLayout(4), ADDRESS.withName("token"),
            ADDRESS.withName("embd"), ADDRESS.withName("pos"), ADDRESS.withName("n_seq_id"), ADDRESS.withName("seq_id"),
            ADDRESS.withName("logits"));
    static final StructLayout TOKEN_DATA = structLayout(JAVA_INT.withName("id"), JAVA_FLOAT.withName("logit"),
            JAVA_FLOAT.withName("p"));
    static final StructLayout TOKEN_DATA_ARRAY = structLayout(ADDRESS.withName("data"), JAVA_LONG.withName("size"),
            JAVA_LONG.withName("selected"), JAVA_BOOLEAN.withName("sorted"), paddingLayout(7));
    static final StructLayout CHAT_MESSAGE = structLayout(ADDRESS.withName("role"), ADDRESS.withName("content"));

    /** {@code llama_model_params} of {@link Api#VENDORED} ({@code include/llama.h}), 80 bytes. */
    static final StructLayout MODEL_PARAMS_VENDORED = structLayout(ADDRESS.withName("devices"),
            ADDRESS.withName("tensor_buft_overrides"), JAVA_INT.withName("n_gpu_layers"), JAVA_INT.withName("split_mode"),
            JAVA_INT.withName("load_mode"), JAVA_INT.withName("lazy_mode"), JAVA_INT.withName("main_gpu"), paddingLayout(4),
            ADDRESS.withName("tensor_split"), ADDRESS.withName("progress_callback"),
            ADDRESS.withName("progress_callback_user_data"), ADDRESS.withName("kv_overrides"),
            JAVA_BOOLEAN.withName("vocab_only"), JAVA_BOOLEAN.withName("check_tensors"),
            JAVA_BOOLEAN.withName("use_extra_bufts"), JAVA_BOOLEAN.withName("no_host"), JAVA_BOOLEAN.withName("no_alloc"),
            JAVA_BOOLEAN.withName("load_mtp"), paddingLayout(2));
    /** {@code llama_context_params} of {@link Api#VENDORED}, 160 bytes: the booleans moved after the callbacks. */
    static final StructLayout CONTEXT_PARAMS_VENDORED = structLayout(JAVA_INT.withName("n_ctx"), JAVA_INT.withName("n_batch"),
            JAVA_INT.withName("n_ubatch"), JAVA_INT.withName("n_seq_max"), JAVA_INT.withName("n_rs_seq"),
            JAVA_INT.withName("n_outputs_max"), JAVA_INT.withName("n_outputs_max_per_seq"), JAVA_INT.withName("n_threads"),
            JAVA_INT.withName("n_threads_batch"), JAVA_INT.withName("ctx_type"), JAVA_INT.withName("rope_scaling_type"),
            JAVA_INT.withName("pooling_type"), JAVA_INT.withName("attention_type"), JAVA_INT.withName("flash_attn_type"),
            JAVA_FLOAT.withName("rope_freq_base"), JAVA_FLOAT.withName("rope_freq_scale"),
            JAVA_FLOAT.withName("yarn_ext_factor"), JAVA_FLOAT.withName("yarn_attn_factor"),
            JAVA_FLOAT.withName("yarn_beta_fast"), JAVA_FLOAT.withName("yarn_beta_slow"), JAVA_INT.withName("yarn_orig_ctx"),
            JAVA_FLOAT.withName("defrag_thold"), ADDRESS.withName("cb_eval"), ADDRESS.withName("cb_eval_user_data"),
            JAVA_INT.withName("type_k"), JAVA_INT.withName("type_v"), ADDRESS.withName("abort_callback"),
            ADDRESS.withName("abort_callback_data"), JAVA_BOOLEAN.withName("embeddings"), JAVA_BOOLEAN.withName("offload_kqv"),
            JAVA_BOOLEAN.withName("no_perf"), JAVA_BOOLEAN.withName("op_offload"), JAVA_BOOLEAN.withName("swa_full"),
            JAVA_BOOLEAN.withName("kv_unified"), paddingLayout(2), ADDRESS.withName("samplers"),
            JAVA_LONG.withName("n_samplers"), ADDRESS.withName("ctx_other"));

    /** ggml_log_level values. */
    private static final int LOG_DEBUG = 1;
    private static final int LOG_INFO = 2;
    private static final int LOG_WARN = 3;
    private static final int LOG_ERROR = 4;
    private static final int LOG_CONT = 5;

    private static final Object LOCK = new Object();
    private static @Nullable LlamaNative instance; // guarded by LOCK
    private static @Nullable String failure; // guarded by LOCK: not retried

    private final Linker linker = Linker.nativeLinker();
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
    final MethodHandle modelFree;
    final MethodHandle initFromModel;
    final MethodHandle free;
    final MethodHandle modelGetVocab;
    final MethodHandle modelChatTemplate;
    final MethodHandle vocabNTokens;
    final MethodHandle vocabIsEog;
    final MethodHandle vocabIsControl;
    final MethodHandle vocabBos;
    final MethodHandle vocabGetAddBos;
    final MethodHandle tokenize;
    final MethodHandle tokenToPiece;
    final MethodHandle chatApplyTemplate;
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
    final MethodHandle samplerInitGrammar;
    final MethodHandle samplerApply;
    final MethodHandle samplerAccept;
    final MethodHandle samplerFree;

    private LlamaNative(SymbolLookup lookup, Api api, Path library, LlamaBuilds.@Nullable Build build) {
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
        modelFree = handle("llama_model_free", FunctionDescriptor.ofVoid(ADDRESS));
        initFromModel = handle("llama_init_from_model", FunctionDescriptor.of(ADDRESS, ADDRESS, contextParams));
        free = handle("llama_free", FunctionDescriptor.ofVoid(ADDRESS));
        modelGetVocab = handle("llama_model_get_vocab", FunctionDescriptor.of(ADDRESS, ADDRESS));
        modelChatTemplate = handle("llama_model_chat_template", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        vocabNTokens = handle("llama_vocab_n_tokens", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        vocabIsEog = handle("llama_vocab_is_eog", FunctionDescriptor.of(JAVA_BOOLEAN, ADDRESS, JAVA_INT));
        vocabIsControl = handle("llama_vocab_is_control", FunctionDescriptor.of(JAVA_BOOLEAN, ADDRESS, JAVA_INT));
        vocabBos = handle("llama_vocab_bos", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        vocabGetAddBos = handle("llama_vocab_get_add_bos", FunctionDescriptor.of(JAVA_BOOLEAN, ADDRESS));
        tokenize = handle("llama_tokenize", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT,
                JAVA_BOOLEAN, JAVA_BOOLEAN));
        tokenToPiece = handle("llama_token_to_piece", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS, JAVA_INT,
                JAVA_INT, JAVA_BOOLEAN));
        chatApplyTemplate = handle("llama_chat_apply_template", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG,
                JAVA_BOOLEAN, ADDRESS, JAVA_INT));
        decode = handle("llama_decode", FunctionDescriptor.of(JAVA_INT, ADDRESS, BATCH));
        getLogitsIth = handle("llama_get_logits_ith", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
        setNThreads = handle("llama_set_n_threads", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT, JAVA_INT));
        nThreads = handle("llama_n_threads", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        nThreadsBatch = handle("llama_n_threads_batch", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        if (api == Api.B4916) {
            seqRm = handle("llama_kv_self_seq_rm", FunctionDescriptor.of(JAVA_BOOLEAN, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT));
            clear = handle("llama_kv_self_clear", FunctionDescriptor.ofVoid(ADDRESS));
            seqPosMax = null;
            getMemory = null;
        } else {
            seqRm = handle("llama_memory_seq_rm", FunctionDescriptor.of(JAVA_BOOLEAN, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT));
            clear = handle("llama_memory_clear", FunctionDescriptor.ofVoid(ADDRESS, JAVA_BOOLEAN));
            seqPosMax = handle("llama_memory_seq_pos_max", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
            getMemory = handle("llama_get_memory", FunctionDescriptor.of(ADDRESS, ADDRESS));
        }
        samplerInitGrammar = handle("llama_sampler_init_grammar", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
        samplerApply = handle("llama_sampler_apply", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS));
        samplerAccept = handle("llama_sampler_accept", FunctionDescriptor.ofVoid(ADDRESS, JAVA_INT));
        samplerFree = handle("llama_sampler_free", FunctionDescriptor.ofVoid(ADDRESS));
    }

    private MethodHandle handle(String name, FunctionDescriptor descriptor) {
        MemorySegment symbol = lookup.find(name).orElseThrow(() -> new UnsupportedOperationException(
                "the native library has no symbol " + name));
        return linker.downcallHandle(symbol, descriptor);
    }

    /**
     * The process's bindings: opens the library the first time (the one {@value #LIBRARY_VARIABLE} names, else the
     * binding jar's), checks it is a build whose layouts are known, runs {@code llama_backend_init} and installs the
     * log forwarder.
     *
     * @throws UnsupportedOperationException the jar's library is not the build these layouts are for (the reason
     *     says which check failed); the caller uses the JNI engine
     * @throws IOException the jar's library cannot be extracted, or the library {@value #LIBRARY_VARIABLE} names
     *     cannot be opened or fails a check (the reason says which)
     */
    static LlamaNative get() throws IOException {
        synchronized (LOCK) {
            if (instance != null) {
                return instance;
            }
            if (failure != null) {
                throw new UnsupportedOperationException(failure);
            }
            @Nullable Path configured = configuredLibrary(System::getenv, System::getProperty);
            if (configured != null) {
                try {
                    NativeLibrary.noBacktraces();
                    sameKernelsForAnyRowCount();
                    instance = open(configured, Api.VENDORED);
                    return instance;
                } catch (RuntimeException | LinkageError e) {
                    // Not remembered: the setting was asked for, and a later load reports the same reason.
                    throw new IOException(LIBRARY_VARIABLE + "=" + configured + " cannot be used: " + e.getMessage(), e);
                }
            }
            // Nothing named: the project-built llama.cpp when the script has built one here (a current llama.cpp,
            // with a GPU backend if one was built), unless the setting asks for the binding's library.
            LlamaBuilds.Build built = bindingAsked(System::getenv, System::getProperty) ? null
                    : LlamaBuilds.preferred(System::getenv, System.getProperty("user.home", "."));
            if (built != null) {
                try {
                    NativeLibrary.noBacktraces();
                    sameKernelsForAnyRowCount();
                    instance = open(built.library(), Api.VENDORED);
                    return instance;
                } catch (RuntimeException | LinkageError e) {
                    Log.warning("the project-built llama.cpp at " + built.library() + " cannot be used (" + e.getMessage()
                            + "); using the binding's llama.cpp b4916 (set " + LIBRARY_VARIABLE + " to choose a library)");
                }
            }
            Path library = NativeLibrary.extractedLibrary();
            try {
                LlamaNative opened = open(library, Api.B4916);
                instance = opened;
                return opened;
            } catch (RuntimeException | LinkageError e) {
                failure = "llama.cpp through FFM is not available: " + e.getMessage();
                throw new UnsupportedOperationException(failure, e);
            }
        }
    }

    /** The setting's value that asks for the binding jar's library (b4916) even where a project build exists. */
    static final String BINDING = "binding";

    /** Whether {@value #LIBRARY_PROPERTY} or {@value #LIBRARY_VARIABLE} says {@value #BINDING}. */
    static boolean bindingAsked(java.util.function.UnaryOperator<@Nullable String> environment,
            java.util.function.UnaryOperator<@Nullable String> properties) {
        String value = properties.apply(LIBRARY_PROPERTY);
        if (value == null || value.isBlank()) {
            value = environment.apply(LIBRARY_VARIABLE);
        }
        return value != null && value.strip().equalsIgnoreCase(BINDING);
    }

    /** ggml's switch for its tiled K-quant product; read once, at the first product. */
    static final String TILED_VARIABLE = "GGML_CPU_TILED_MM";

    /**
     * Before the vendored library computes anything: {@value #TILED_VARIABLE}=0, unless the host set it. ggml takes
     * its tiled K-quant product for 8 rows or more and its dot products below, which round differently, so a lane's
     * numbers would depend on how many lanes decode with it and a prompt's on how it was cut.
     */
    private static void sameKernelsForAnyRowCount() {
        if (!dev.oam.core.os.Posix.isAvailable()) {
            return;
        }
        try {
            dev.oam.core.os.Posix.setenv(TILED_VARIABLE, "0", false);
        } catch (IOException e) {
            Log.warning("cannot set " + TILED_VARIABLE + ": " + e.getMessage());
        }
    }

    /**
     * The library {@value #LIBRARY_PROPERTY} or {@value #LIBRARY_VARIABLE} names (the property wins), or null.
     *
     * @throws IOException the setting names no readable file
     */
    static @Nullable Path configuredLibrary(java.util.function.UnaryOperator<@Nullable String> environment,
            java.util.function.UnaryOperator<@Nullable String> properties) throws IOException {
        String value = properties.apply(LIBRARY_PROPERTY);
        if (value == null || value.isBlank()) {
            value = environment.apply(LIBRARY_VARIABLE);
        }
        if (value == null || value.isBlank() || value.strip().equalsIgnoreCase(BINDING)) {
            return null;
        }
        Path path = Path.of(value.strip());
        if (!java.nio.file.Files.isRegularFile(path) || !java.nio.file.Files.isReadable(path)) {
            throw new IOException(LIBRARY_VARIABLE + "=" + value + " is not a readable file (build it with"
                    + " bin/build-llama, or unset it to use the binding's library)");
        }
        return path.toAbsolutePath();
    }

    private static LlamaNative open(Path library, Api api) {
        // The library lives for the process: model and context pointers outlive any narrower arena.
        SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
        boolean memoryApi = lookup.find("llama_get_memory").isPresent();
        LlamaBuilds.Build build = null;
        if (api == Api.B4916) {
            checkVersion(lookup);
            if (memoryApi) {
                throw new UnsupportedOperationException("the library has llama_get_memory: a newer API than b4916");
            }
        } else {
            build = checkVendoredVersion(library);
            if (!memoryApi) {
                throw new UnsupportedOperationException("the library has no llama_get_memory: not llama-cpp-python "
                        + VENDORED_SOURCE + "'s llama.cpp");
            }
        }
        LlamaNative bindings = new LlamaNative(lookup, api, library, build);
        bindings.checkDefaults();
        try {
            bindings.backendInit.invokeExact();
            MethodHandle forward = MethodHandles.lookup().findStatic(LlamaNative.class, "log",
                    MethodType.methodType(void.class, int.class, MemorySegment.class, MemorySegment.class));
            MemorySegment stub = bindings.linker.upcallStub(forward, FunctionDescriptor.ofVoid(JAVA_INT, ADDRESS, ADDRESS),
                    Arena.global());
            bindings.logSet.invokeExact(stub, MemorySegment.NULL);
        } catch (Throwable e) {
            throw new IllegalStateException("llama_backend_init failed: " + e, e);
        }
        loadBackends(library);
        Log.info("llama.cpp through FFM: " + bindings.describe());
        return bindings;
    }

    /**
     * For a llama.cpp built with its backends as loadable modules ({@code GGML_BACKEND_DL}, as node-llama-cpp's
     * prebuilt libraries are: {@code libggml-cpu-<cpu>.so}, {@code libggml-vulkan.so} next to the library), loads
     * them from the library's folder when none is registered yet, as llama.cpp's own programs do at start; a build
     * with its backends linked in (the project's own) has them registered already and is left alone.
     */
    private static void loadBackends(Path library) {
        Path folder = library.toAbsolutePath().getParent();
        Path registry = null;
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(folder)) {
            registry = files.filter(f -> {
                String name = f.getFileName().toString();
                return name.equals("libggml.so") || name.equals("libggml.dylib")
                        || (name.startsWith("libggml.") && (name.endsWith(".so") || name.endsWith(".dylib")));
            }).sorted().findFirst().orElse(null);
        } catch (IOException e) {
            return;
        }
        if (registry == null) {
            return;
        }
        Linker linker = Linker.nativeLinker();
        SymbolLookup ggml = SymbolLookup.libraryLookup(registry, Arena.global());
        MemorySegment count = ggml.find("ggml_backend_reg_count").orElse(null);
        MemorySegment loadAll = ggml.find("ggml_backend_load_all_from_path").orElse(null);
        if (count == null || loadAll == null) {
            return;
        }
        try {
            long registered = (long) linker.downcallHandle(count, FunctionDescriptor.of(JAVA_LONG)).invokeExact();
            if (registered > 0) {
                return;
            }
            try (Arena local = Arena.ofConfined()) {
                MethodHandle load = linker.downcallHandle(loadAll, FunctionDescriptor.ofVoid(ADDRESS));
                load.invokeExact(local.allocateFrom(folder.toString()));
            }
            long now = (long) linker.downcallHandle(count, FunctionDescriptor.of(JAVA_LONG)).invokeExact();
            Log.info("llama.cpp: loaded " + now + " backend module(s) from " + folder);
        } catch (Throwable e) {
            throw new IllegalStateException("loading llama.cpp's backend modules from " + folder + " failed: " + e, e);
        }
    }

    /** Which library and API, for logs and messages. */
    String describe() {
        return api == Api.B4916 ? "b4916 (" + COMMIT + ", de.kherud:llama " + NativeLibrary.BINDING_VERSION + "'s library)"
                : build != null ? build.describe() : "llama-cpp-python " + VENDORED_SOURCE + "'s llama.cpp, built here (" + library + ")";
    }

    private static void checkVersion(SymbolLookup lookup) {
        MemorySegment build = lookup.find("LLAMA_BUILD_NUMBER")
                .orElseThrow(() -> new UnsupportedOperationException("the library has no LLAMA_BUILD_NUMBER"));
        int number = build.reinterpret(4).get(JAVA_INT, 0);
        MemorySegment commitPointer = lookup.find("LLAMA_COMMIT")
                .orElseThrow(() -> new UnsupportedOperationException("the library has no LLAMA_COMMIT"));
        MemorySegment commitText = commitPointer.reinterpret(ADDRESS.byteSize()).get(ADDRESS, 0);
        String commit = commitText.equals(MemorySegment.NULL) ? "" : commitText.reinterpret(64).getString(0);
        if (number != BUILD_NUMBER || !commit.equals(COMMIT)) {
            throw new UnsupportedOperationException("llama.cpp build " + number + " (" + commit + "), not " + BUILD_NUMBER
                    + " (" + COMMIT + ") whose struct layouts are known");
        }
    }

    /**
     * The vendored build is recognised by the record the project's build script writes next to it
     * ({@value #BUILD_RECORD}: the source package and its SHA-256, which must be one of the family whose layouts were
     * verified, {@link LlamaBuilds#VERIFIED}, whatever its GPU backend), since llama.cpp built from a source package has
     * no commit of its own to report; the default-parameter fingerprint is checked after.
     */
    private static LlamaBuilds.Build checkVendoredVersion(Path library) {
        try {
            return LlamaBuilds.read(library);
        } catch (IOException e) {
            throw new UnsupportedOperationException(e.getMessage(), e);
        }
    }

    /** The default parameters at their measured offsets: a cheap guard against a layout that moved. */
    private void checkDefaults() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment model = (MemorySegment) modelDefaultParams.invokeExact((java.lang.foreign.SegmentAllocator) arena);
            MemorySegment context = (MemorySegment) contextDefaultParams.invokeExact((java.lang.foreign.SegmentAllocator) arena);
            List<String> wrong = api == Api.B4916 ? b4916Mismatches(model, context) : vendoredMismatches(model, context);
            if (!wrong.isEmpty()) {
                throw new UnsupportedOperationException("default parameters differ from " + (api == Api.B4916 ? "b4916's"
                        : "llama-cpp-python " + VENDORED_SOURCE + "'s llama.cpp") + ": " + String.join(", ", wrong));
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
        MemorySegment params = (MemorySegment) modelDefaultParams.invokeExact((java.lang.foreign.SegmentAllocator) arena);
        params.set(JAVA_INT, offset(modelLayout, "n_gpu_layers"), gpuLayers < 0 ? EngineSettings.ALL_LAYERS : gpuLayers);
        if (api == Api.VENDORED) {
            params.set(JAVA_BOOLEAN, offset(modelLayout, "use_extra_bufts"), repack);
        }
        return params;
    }

    /**
     * Context parameters. {@code streams}: a KV stream per sequence ({@code kv_unified = false}, vendored only); then
     * {@code cells} is split evenly between the {@code sequences}.
     */
    MemorySegment contextParams(Arena arena, int cells, int batch, int sequences, int threads, int threadsBatch,
            boolean flashAttention, boolean streams) throws Throwable {
        if (streams && api == Api.B4916) {
            throw new IllegalArgumentException("b4916 has one KV cache for all sequences");
        }
        MemorySegment params = (MemorySegment) contextDefaultParams.invokeExact((java.lang.foreign.SegmentAllocator) arena);
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
            return api == Api.B4916 ? (boolean) seqRm.invokeExact(context, seq, p0, p1)
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

    /**
     * llama.cpp's log callback: forwards to {@link Log} (errors as warnings, the rest at debug). Runs on whichever
     * thread logs; must never throw (an exception escaping an upcall ends the JVM), so it catches everything.
     */
    @SuppressWarnings("unused") // the upcall target
    private static void log(int level, MemorySegment text, MemorySegment userData) {
        try {
            boolean loud = level == LOG_ERROR || level == LOG_WARN;
            if (!loud && level != LOG_INFO && !Log.enabled(Log.Level.DEBUG)) {
                return;
            }
            String message = text.equals(MemorySegment.NULL) ? "" : text.reinterpret(64 * 1024).getString(0).strip();
            if (message.isEmpty()) {
                return;
            }
            if (level == LOG_INFO && isPlacement(message)) {
                // where a model's layers went: the device, its free memory, the offloaded layers (FfmEngine reports them)
                Log.info("llama.cpp: " + message);
                synchronized (PLACEMENT) {
                    if (PLACEMENT.size() < 16) {
                        PLACEMENT.add(message);
                    }
                }
                return;
            }
            if (!loud && !Log.enabled(Log.Level.DEBUG)) {
                return;
            }
            if (level == LOG_ERROR) {
                Log.warning("llama.cpp: " + message);
            } else if (level == LOG_WARN) {
                Log.info("llama.cpp: " + message);
            } else if (level == LOG_DEBUG || level == LOG_INFO || level == LOG_CONT) {
                Log.debug("llama.cpp: " + message);
            }
        } catch (Throwable ignored) {
            // nothing may escape an upcall
        }
    }

    /** llama.cpp's load lines about devices and offloaded layers since the last {@link #takePlacement()}. */
    private static final List<String> PLACEMENT = new ArrayList<>(); // guarded by itself

    static boolean isPlacement(String message) {
        return message.contains("using device ") || message.contains("offloaded ") || message.contains("ggml_vulkan: ")
                || message.contains("CUDA0") || message.contains("Metal");
    }

    /** The placement lines logged since the last call (the engine takes them right after loading a model). */
    static List<String> takePlacement() {
        synchronized (PLACEMENT) {
            List<String> lines = List.copyOf(PLACEMENT);
            PLACEMENT.clear();
            return lines;
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

    int bos(MemorySegment vocab) {
        try {
            return (int) vocabBos.invokeExact(vocab);
        } catch (Throwable e) {
            throw failed("llama_vocab_bos", e);
        }
    }

    boolean addBos(MemorySegment vocab) {
        try {
            return (boolean) vocabGetAddBos.invokeExact(vocab);
        } catch (Throwable e) {
            throw failed("llama_vocab_get_add_bos", e);
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

    /** The model's built-in chat template string, or null. */
    @Nullable String chatTemplate(MemorySegment model) {
        try {
            MemorySegment text = (MemorySegment) modelChatTemplate.invokeExact(model, MemorySegment.NULL);
            return text.equals(MemorySegment.NULL) ? null : text.reinterpret(1 << 20).getString(0);
        } catch (Throwable e) {
            throw failed("llama_model_chat_template", e);
        }
    }

    /**
     * {@code llama_chat_apply_template} (llama.cpp's built-in template families, no Jinja) with the generation
     * prompt; null when llama.cpp does not recognise {@code template}.
     */
    @Nullable String applyTemplate(String template, List<ChatMessage> messages) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment array = arena.allocate(CHAT_MESSAGE, Math.max(1, messages.size()));
            long total = template.length();
            for (int i = 0; i < messages.size(); i++) {
                array.setAtIndex(ADDRESS, 2L * i, arena.allocateFrom(messages.get(i).role()));
                array.setAtIndex(ADDRESS, 2L * i + 1, arena.allocateFrom(messages.get(i).content()));
                total += messages.get(i).content().length() * 4L + 64;
            }
            MemorySegment tmpl = arena.allocateFrom(template);
            int capacity = (int) Math.min(Integer.MAX_VALUE - 16, total * 2 + 1024);
            MemorySegment out = arena.allocate(capacity);
            int n = (int) chatApplyTemplate.invokeExact(tmpl, array, (long) messages.size(), true, out, capacity);
            if (n < 0) {
                return null;
            }
            if (n > capacity) {
                out = arena.allocate(n);
                n = (int) chatApplyTemplate.invokeExact(tmpl, array, (long) messages.size(), true, out, n);
            }
            return new String(out.asSlice(0, n).toArray(JAVA_BYTE), StandardCharsets.UTF_8);
        } catch (Throwable e) {
            throw failed("llama_chat_apply_template", e);
        }
    }

    /** The operating system's name as the checks report it. */
    static String platform() {
        return System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    }

    static MemoryLayout tokenDataArray() {
        return TOKEN_DATA_ARRAY;
    }
}
