package dev.oam.model.llama;

import static java.lang.foreign.MemoryLayout.paddingLayout;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.oam.core.Log;
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
 * llama.cpp's C API at build b4916 (commit c6af2161), the build inside de.kherud:llama 4.2.0, called through FFM
 * on the library {@link NativeLibrary} extracts. Opened with {@code SymbolLookup.libraryLookup}, so the binding's
 * {@code JNI_OnLoad} never runs and no binding class is needed.
 *
 * <p>The layouts below were measured for that build (docs: {@code LLAMA-FFM.md} §1). {@link #open} refuses any
 * other library: a build number, commit, missing symbol or default-parameter value that differs means the layouts
 * may be wrong, and a wrong layout is silent memory corruption; the caller then uses the JNI engine.
 *
 * <p>Threads: {@code llama_decode}, logits, KV and state calls belong to the one decode thread
 * ({@link DecodeLoop}); tokenising and detokenising are safe from any thread. Methods wrap {@code Throwable} from
 * {@code invokeExact} into {@link IllegalStateException}.
 */
final class LlamaNative {
    static final int BUILD_NUMBER = 4916;
    static final String COMMIT = "c6af2161";

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
    final MethodHandle setNThreads;
    final MethodHandle kvSeqRm;
    final MethodHandle kvClear;
    final MethodHandle kvNTokens;
    final MethodHandle samplerInitGrammar;
    final MethodHandle samplerApply;
    final MethodHandle samplerAccept;
    final MethodHandle samplerFree;

    private LlamaNative(SymbolLookup lookup) {
        this.lookup = lookup;
        backendInit = handle("llama_backend_init", FunctionDescriptor.ofVoid());
        logSet = handle("llama_log_set", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS));
        modelDefaultParams = handle("llama_model_default_params", FunctionDescriptor.of(MODEL_PARAMS));
        contextDefaultParams = handle("llama_context_default_params", FunctionDescriptor.of(CONTEXT_PARAMS));
        modelLoadFromFile = handle("llama_model_load_from_file", FunctionDescriptor.of(ADDRESS, ADDRESS, MODEL_PARAMS));
        modelFree = handle("llama_model_free", FunctionDescriptor.ofVoid(ADDRESS));
        initFromModel = handle("llama_init_from_model", FunctionDescriptor.of(ADDRESS, ADDRESS, CONTEXT_PARAMS));
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
        kvSeqRm = handle("llama_kv_self_seq_rm", FunctionDescriptor.of(JAVA_BOOLEAN, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT));
        kvClear = handle("llama_kv_self_clear", FunctionDescriptor.ofVoid(ADDRESS));
        kvNTokens = handle("llama_kv_self_n_tokens", FunctionDescriptor.of(JAVA_INT, ADDRESS));
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
     * The process's bindings: opens the extracted library the first time, checks it is exactly b4916, runs
     * {@code llama_backend_init} and installs the log forwarder.
     *
     * @throws UnsupportedOperationException the library is not the build these layouts are for (the reason says
     *     which check failed); the caller uses the JNI engine
     * @throws IOException the library cannot be extracted
     */
    static LlamaNative get() throws IOException {
        synchronized (LOCK) {
            if (instance != null) {
                return instance;
            }
            if (failure != null) {
                throw new UnsupportedOperationException(failure);
            }
            Path library = NativeLibrary.extractedLibrary();
            try {
                LlamaNative opened = open(library);
                instance = opened;
                return opened;
            } catch (RuntimeException | LinkageError e) {
                failure = "llama.cpp through FFM is not available: " + e.getMessage();
                throw new UnsupportedOperationException(failure, e);
            }
        }
    }

    private static LlamaNative open(Path library) {
        // The library lives for the process: model and context pointers outlive any narrower arena.
        SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
        checkVersion(lookup);
        if (lookup.find("llama_get_memory").isPresent()) {
            throw new UnsupportedOperationException("the library has llama_get_memory: a newer API than b4916");
        }
        LlamaNative bindings = new LlamaNative(lookup);
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
        return bindings;
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

    /** The default parameters at their measured offsets: a cheap guard against a layout that moved. */
    private void checkDefaults() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment model = (MemorySegment) modelDefaultParams.invokeExact((java.lang.foreign.SegmentAllocator) arena);
            MemorySegment context = (MemorySegment) contextDefaultParams.invokeExact((java.lang.foreign.SegmentAllocator) arena);
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
            if (!wrong.isEmpty()) {
                throw new UnsupportedOperationException("default parameters differ from b4916's: " + String.join(", ", wrong));
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("reading llama.cpp's default parameters failed: " + e, e);
        }
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
            if (!loud && !Log.enabled(Log.Level.DEBUG)) {
                return;
            }
            String message = text.equals(MemorySegment.NULL) ? "" : text.reinterpret(64 * 1024).getString(0).strip();
            if (message.isEmpty()) {
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

    // ---- convenience wrappers ----

    static IllegalStateException failed(String what, Throwable e) {
        if (e instanceof RuntimeException r && !(e instanceof IllegalStateException)) {
            return new IllegalStateException(what + ": " + r, r);
        }
        return e instanceof IllegalStateException ise ? ise : new IllegalStateException(what + ": " + e, e);
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
