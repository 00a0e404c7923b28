package dev.oam.model.llama.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.oam.core.Log;
import dev.oam.model.llama.engine.LlamaBuilds;
import dev.oam.model.llama.engine.NativeLibrary;
import dev.oam.model.llama.engine.NativeSettings;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Which llama.cpp library the process drives through FFM, opened once: the one {@value NativeSettings#LIBRARY_VARIABLE}
 * names, else the project-built one when the build script left one here, else the binding jar's b4916. A library is
 * used only when it is a build whose struct layouts are known ({@link LlamaNative}).
 */
@SuppressWarnings(
        "restricted") // calling llama.cpp through FFM is this class's job; oam.jar and bin/oam enable native access
final class NativeLoader {
    private static final Object LOCK = new Object();
    private static @Nullable LlamaNative instance; // guarded by LOCK
    private static @Nullable String failure; // guarded by LOCK: not retried

    private NativeLoader() {}

    /**
     * The process's bindings: opens the library the first time (the one {@value NativeSettings#LIBRARY_VARIABLE} names,
     * else the binding jar's), checks it is a build whose layouts are known, runs {@code llama_backend_init} and
     * installs the log forwarder.
     *
     * @throws UnsupportedOperationException the jar's library is not the build these layouts are for (the reason says
     *     which check failed); the caller uses the JNI engine
     * @throws IOException the jar's library cannot be extracted, or the library
     *     {@value NativeSettings#LIBRARY_VARIABLE} names cannot be opened or fails a check (the reason says which)
     */
    static LlamaNative library(NativeSettings natives) throws IOException {
        synchronized (LOCK) {
            if (instance != null) {
                return instance;
            }
            if (failure != null) {
                throw new UnsupportedOperationException(failure);
            }
            threadsSleepWhenWaiting();
            // The library is loaded once per process: the first load's settings name it.
            @Nullable Path configured = configuredLibrary(natives);
            if (configured != null) {
                try {
                    NativeLibrary.noBacktraces();
                    sameKernelsForAnyRowCount();
                    instance = open(configured, LlamaNative.Api.VENDORED, natives);
                    return instance;
                } catch (RuntimeException | LinkageError e) {
                    // Not remembered: the setting was asked for, and a later load reports the same reason.
                    throw new IOException(
                            NativeSettings.LIBRARY_VARIABLE + "=" + configured + " cannot be used: " + e.getMessage(),
                            e);
                }
            }
            // Nothing named: the project-built llama.cpp when the script has built one here (a current llama.cpp,
            // with a GPU backend if one was built), unless the setting asks for the binding's library.
            LlamaBuilds.Build built = natives.bindingAsked() ? null : LlamaBuilds.preferred(natives);
            if (built != null) {
                try {
                    NativeLibrary.noBacktraces();
                    sameKernelsForAnyRowCount();
                    instance = open(built.library(), LlamaNative.Api.VENDORED, natives);
                    return instance;
                } catch (RuntimeException | LinkageError e) {
                    Log.warning("the project-built llama.cpp at " + built.library() + " cannot be used ("
                            + e.getMessage() + "); using the binding's llama.cpp b4916 (set "
                            + NativeSettings.LIBRARY_VARIABLE + " to choose a library)");
                }
            }
            Path library = NativeLibrary.extractedLibrary(natives);
            try {
                LlamaNative opened = open(library, LlamaNative.Api.B4916, natives);
                instance = opened;
                return opened;
            } catch (RuntimeException | LinkageError e) {
                failure = "llama.cpp through FFM is not available: " + e.getMessage();
                throw new UnsupportedOperationException(failure, e);
            }
        }
    }

    /** ggml's switch for its tiled K-quant product; read once, at the first product. */
    static final String TILED_VARIABLE = "GGML_CPU_TILED_MM";

    /**
     * Before the vendored library computes anything: {@value #TILED_VARIABLE}=0, unless the host set it. ggml takes its
     * tiled K-quant product for 8 rows or more and its dot products below, which round differently, so a lane's numbers
     * would depend on how many lanes decode with it and a prompt's on how it was cut.
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

    /** OpenMP's wait policy, read once, when llama.cpp's CPU backend loads its OpenMP runtime. */
    static final String WAIT_POLICY_VARIABLE = "OMP_WAIT_POLICY";
    /** GNU OpenMP's spin count before a waiting thread sleeps; a host that sets it chooses the wait itself. */
    static final String SPIN_COUNT_VARIABLE = "GOMP_SPINCOUNT";

    /**
     * Before any llama.cpp library loads: {@value #WAIT_POLICY_VARIABLE}=passive, unless the host set it or
     * {@value #SPIN_COUNT_VARIABLE}. ggml computes a decode of several rows (a prompt, lanes decoding together) on
     * OpenMP threads that meet at a barrier after every operation, and by default a thread at a barrier spins for a
     * while before it sleeps. Beside a game, or anything else that keeps the cores busy, the thread it waits for is
     * often not running, and the spinning one burns its time slice: {@code bench/run sampling}'s SmolLM2 case with 8
     * sessions (batch threads 2) under a load average of about 20 on 2 cores generated 2.8 tokens/s spinning and 70
     * passive, 99.7 and 11.1 ms of CPU per token. A decode of one row runs on one thread and never waits.
     */
    static void threadsSleepWhenWaiting() {
        if (!dev.oam.core.os.Posix.isAvailable()
                || dev.oam.core.os.Posix.getenv(SPIN_COUNT_VARIABLE).isPresent()) {
            return;
        }
        try {
            dev.oam.core.os.Posix.setenv(WAIT_POLICY_VARIABLE, "passive", false);
        } catch (IOException e) {
            Log.warning("cannot set " + WAIT_POLICY_VARIABLE + ": " + e.getMessage());
        }
    }

    /**
     * The library {@value NativeSettings#LIBRARY_PROPERTY} or {@value NativeSettings#LIBRARY_VARIABLE} names (the
     * property wins), or null when they name none or {@value NativeSettings#BINDING}.
     *
     * @throws IOException the setting names no readable file
     */
    static @Nullable Path configuredLibrary(NativeSettings natives) throws IOException {
        String value = natives.namedLibrary();
        if (value == null) {
            return null;
        }
        Path path = Path.of(value);
        if (!java.nio.file.Files.isRegularFile(path) || !java.nio.file.Files.isReadable(path)) {
            throw new IOException(
                    NativeSettings.LIBRARY_VARIABLE + "=" + value + " is not a readable file (build it with"
                            + " bin/build-llama, or unset it to use the binding's library)");
        }
        return path.toAbsolutePath();
    }

    static LlamaNative open(Path library, LlamaNative.Api api, NativeSettings natives) {
        if (api == LlamaNative.Api.VENDORED) {
            preloadWindowsDependencies(library, natives);
        }
        // The library lives for the process: model and context pointers outlive any narrower arena.
        SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
        boolean memoryApi = lookup.find("llama_get_memory").isPresent();
        LlamaBuilds.Build build = null;
        if (api == LlamaNative.Api.B4916) {
            checkVersion(lookup);
            if (memoryApi) {
                throw new UnsupportedOperationException("the library has llama_get_memory: a newer API than b4916");
            }
        } else {
            build = checkVendoredVersion(library);
            if (!memoryApi) {
                throw new UnsupportedOperationException("the library has no llama_get_memory: not llama-cpp-python "
                        + LlamaNative.VENDORED_SOURCE + "'s llama.cpp");
            }
        }
        LlamaNative bindings = new LlamaNative(lookup, api, library, build);
        bindings.checkDefaults();
        try {
            bindings.backendInit.invokeExact();
            MemorySegment stub = NativeLog.callback(bindings.linker);
            bindings.logSet.invokeExact(stub, MemorySegment.NULL);
        } catch (Throwable e) {
            throw new IllegalStateException("llama_backend_init failed: " + e, e);
        }
        loadBackends(library, natives, build);
        Log.info("llama.cpp through FFM: " + bindings.describe());
        return bindings;
    }

    /** The devices llama.cpp registered once its backends were loaded, e.g. "CPU; Vulkan0 (…)"; null before. */
    private static volatile @Nullable String devices;
    /** Whether a GPU (or integrated GPU) device is registered. */
    private static volatile boolean gpuDevice;

    /** Whether the pulled CUDA runtime joined the library's backends in this process. */
    private static volatile boolean cudaLoaded;

    /** {@code " + CUDA runtime"} when the pulled CUDA runtime joined the backends, else empty: for the placement. */
    static String cudaSuffix() {
        return cudaLoaded ? " + CUDA runtime" : "";
    }

    /** The devices llama.cpp registered ("CPU (…); Vulkan0 (…)"), or null when unknown. */
    static @Nullable String devices() {
        return devices;
    }

    /** Whether llama.cpp registered a GPU device (any backend) in this process. */
    static boolean hasGpuDevice() {
        return gpuDevice;
    }

    /**
     * The registry library of a modular build: {@code libggml.so}, {@code libggml.<tag>.so}, {@code ggml.<tag>.dll}.
     */
    static boolean isRegistry(String name) {
        boolean library = name.endsWith(".so") || name.endsWith(".dylib") || name.endsWith(".dll");
        return library && (name.startsWith("libggml.") || name.startsWith("ggml."));
    }

    /**
     * Windows resolves a DLL's imports from the program's folder and the system's, not the DLL's own: the llama.cpp
     * folder's {@code ggml-base.dll} and {@code ggml.*.dll} are loaded first, by path, so that {@code llama.*.dll} (and
     * the backend modules later) bind to them by name.
     */
    private static void preloadWindowsDependencies(Path library, NativeSettings natives) {
        if (!natives.osName().toLowerCase(java.util.Locale.ROOT).startsWith("windows")) {
            return;
        }
        Path folder = library.toAbsolutePath().getParent();
        // The DLLs import the Visual C++ runtime: the Java runtime's copy, when the program (a game that embeds the
        // C library, say) is not in the runtime's folder and Windows has no copy of its own
        String javaHome = natives.javaHome();
        for (String runtime : List.of("vcruntime140.dll", "vcruntime140_1.dll", "msvcp140.dll")) {
            Path file = Path.of(javaHome, "bin", runtime);
            if (java.nio.file.Files.isRegularFile(file)) {
                try {
                    SymbolLookup.libraryLookup(file, Arena.global());
                } catch (IllegalArgumentException e) {
                    Log.debug("cannot preload " + file + ": " + e.getMessage());
                }
            }
        }
        Path base = folder.resolve("ggml-base.dll");
        if (java.nio.file.Files.isRegularFile(base)) {
            SymbolLookup.libraryLookup(base, Arena.global());
        }
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(folder)) {
            for (Path registry : files.filter(f -> {
                        String name = f.getFileName().toString();
                        return name.startsWith("ggml.") && name.endsWith(".dll");
                    })
                    .sorted()
                    .toList()) {
                SymbolLookup.libraryLookup(registry, Arena.global());
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list " + folder + ": " + e, e);
        }
    }

    /**
     * For a llama.cpp built with its backends as loadable modules ({@code GGML_BACKEND_DL}, as node-llama-cpp's
     * prebuilt libraries are: {@code libggml-cpu-<cpu>.so}, {@code libggml-vulkan.so} next to the library), loads them
     * from the library's folder when none is registered yet, as llama.cpp's own programs do at start; a build with its
     * backends linked in (the project's own) has them registered already and is left alone. With
     * {@value NativeSettings#BACKEND_VARIABLE}=cpu only the best CPU module is loaded (no GPU module, so no GPU driver
     * is touched). Before them, the CUDA runtime {@code oam pull runtime:cuda} placed is tried ({@link #loadCuda});
     * when it registers a device only the best CPU module joins it. Then the registered devices are logged, and a GPU
     * build that found no GPU device says why.
     */
    private static void loadBackends(Path library, NativeSettings natives, LlamaBuilds.@Nullable Build build) {
        String backend = natives.backend();
        String buildBackend = build != null ? build.backend() : null;
        Path folder = library.toAbsolutePath().getParent();
        Path registry = null;
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(folder)) {
            registry = files.filter(f -> isRegistry(f.getFileName().toString()))
                    .sorted()
                    .findFirst()
                    .orElse(null);
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
        MemorySegment loadOne = ggml.find("ggml_backend_load").orElse(null);
        if (count == null || loadAll == null) {
            return;
        }
        try {
            long registered = (long) linker.downcallHandle(count, FunctionDescriptor.of(JAVA_LONG))
                    .invokeExact();
            String cuda = null;
            if (registered == 0) {
                try (Arena local = Arena.ofConfined()) {
                    // CUDA first when its runtime was pulled and finds a device; then no Vulkan module, which would
                    // offer the same GPU a second time
                    try {
                        cuda = build != null && loadOne != null
                                ? loadCuda(linker, loadOne, folder, natives, build)
                                : null;
                    } catch (Throwable e) { // the CUDA runtime must never cost the other backends
                        Log.warning(
                                "the CUDA runtime could not be loaded (" + e + "); models run on the other backends");
                    }
                    if (cuda != null) {
                        buildBackend = "cuda";
                        cudaLoaded = true;
                    }
                    Path cpu =
                            (backend.equals("cpu") || cuda != null) && loadOne != null ? bestCpuModule(folder) : null;
                    if (cpu != null) {
                        MethodHandle load = linker.downcallHandle(loadOne, FunctionDescriptor.of(ADDRESS, ADDRESS));
                        MemorySegment reg = (MemorySegment) load.invokeExact(local.allocateFrom(cpu.toString()));
                        if (reg.equals(MemorySegment.NULL)) {
                            throw new IllegalStateException("ggml_backend_load(" + cpu + ") failed");
                        }
                    } else {
                        MethodHandle load = linker.downcallHandle(loadAll, FunctionDescriptor.ofVoid(ADDRESS));
                        load.invokeExact(local.allocateFrom(folder.toString()));
                    }
                }
                long now = (long) linker.downcallHandle(count, FunctionDescriptor.of(JAVA_LONG))
                        .invokeExact();
                Log.info("llama.cpp: loaded " + now + " backend module(s) from " + folder
                        + (backend.equals("cpu")
                                ? " (" + NativeSettings.BACKEND_VARIABLE + "=cpu: the CPU's only)"
                                : "")
                        + (cuda != null
                                ? " and the CUDA runtime " + cuda + " (no Vulkan module: CUDA drives the GPU)"
                                : ""));
            }
        } catch (Throwable e) {
            throw new IllegalStateException("loading llama.cpp's backend modules from " + folder + " failed: " + e, e);
        }
        reportDevices(linker, ggml, folder, backend, buildBackend, natives.osName());
    }

    /**
     * Loads the CUDA runtime {@code oam pull runtime:cuda} placed into the registry, when {@code backend} allows it
     * ({@code auto} or {@code cuda}); returns its description when it registered at least one device, else null after a
     * warning naming why (no runtime pulled while cuda was forced, a runtime that fails its checks, a library it needs
     * that the system lacks, a module llama.cpp cannot load, no CUDA device), so the other backends run instead.
     */
    private static @Nullable String loadCuda(
            Linker linker, MemorySegment loadOne, Path folder, NativeSettings natives, LlamaBuilds.Build build)
            throws Throwable {
        String backend = natives.backend();
        if (!backend.equals("auto") && !backend.equals("cuda")) {
            return null;
        }
        String instead = "; models run on the " + (backend.equals("cuda") ? "other backends" : "Vulkan or CPU backend")
                + " instead";
        Path pulled = dev.oam.model.llama.engine.CudaRuntime.pulled(natives);
        if (pulled == null) {
            if (backend.equals("cuda")) {
                Log.warning(
                        NativeSettings.BACKEND_VARIABLE + "=cuda, but no CUDA runtime is in the model cache: fetch it"
                                + " once with `oam pull runtime:cuda` (or the protocol's model/pull)" + instead);
            }
            return null;
        }
        dev.oam.model.llama.engine.CudaRuntime.Checked runtime;
        try {
            runtime = dev.oam.model.llama.engine.CudaRuntime.check(
                    pulled, build, dev.oam.core.model.pull.NpmRuntime.platform(natives.osName(), natives.osArch()));
        } catch (IOException | RuntimeException e) {
            Log.warning("the CUDA runtime in " + pulled + " is not used: " + e.getMessage() + instead);
            return null;
        }
        List<String> missing = new java.util.ArrayList<>();
        for (String needed : runtime.needs()) {
            Path beside = runtime.folder().resolve(needed);
            try (Arena probe = Arena.ofConfined()) {
                if (java.nio.file.Files.isRegularFile(beside)) {
                    SymbolLookup.libraryLookup(beside, probe);
                } else {
                    SymbolLookup.libraryLookup(needed, probe);
                }
            } catch (IllegalArgumentException e) {
                missing.add(needed);
            }
        }
        if (!missing.isEmpty()) {
            Log.warning("the CUDA runtime in " + runtime.folder() + " cannot load here: this system has no "
                    + String.join(", ", missing) + " (NVIDIA's driver provides libcuda/nvcuda, the CUDA 13 runtime"
                    + " cudart and cuBLAS; install them, or put the CUDA 13 libraries next to the module)" + instead);
            return null;
        }
        try {
            dev.oam.model.llama.engine.NativeFiles.check(
                    runtime.folder(), dev.oam.model.llama.engine.NativeFiles.notes(natives));
        } catch (IOException e) {
            Log.warning("the CUDA runtime in " + runtime.folder() + " is not used: " + e.getMessage()
                    + " (oam models rm runtime:cuda, then oam pull runtime:cuda)" + instead);
            return null;
        }
        MemorySegment reg;
        try (Arena local = Arena.ofConfined()) {
            MethodHandle load = linker.downcallHandle(loadOne, FunctionDescriptor.of(ADDRESS, ADDRESS));
            reg = (MemorySegment)
                    load.invokeExact(local.allocateFrom(runtime.module().toString()));
        }
        if (reg.equals(MemorySegment.NULL)) {
            Log.warning("llama.cpp could not load the CUDA module " + runtime.module() + " (see llama.cpp's line above;"
                    + " a driver older than CUDA 13 needs, say)" + instead);
            return null;
        }
        long count = 0;
        Path baseFile = null;
        for (String name : List.of("libggml-base.so", "ggml-base.dll")) {
            if (java.nio.file.Files.isRegularFile(folder.resolve(name))) {
                baseFile = folder.resolve(name);
            }
        }
        MemorySegment devCount = baseFile == null
                ? null
                : SymbolLookup.libraryLookup(baseFile, Arena.global())
                        .find("ggml_backend_reg_dev_count")
                        .orElse(null);
        if (devCount != null) {
            count = (long) linker.downcallHandle(devCount, FunctionDescriptor.of(JAVA_LONG, ADDRESS))
                    .invokeExact(reg);
        }
        if (count == 0) {
            Log.warning("the CUDA runtime " + runtime.npmPackage() + " loaded but found no CUDA device (no NVIDIA GPU,"
                    + " or a driver too old for CUDA 13)" + instead);
            return null;
        }
        return runtime.npmPackage() + " from " + runtime.folder() + ", " + count + " device(s)";
    }

    /**
     * The CPU module ({@code libggml-cpu-<level>}) with the highest {@code ggml_backend_score} on this CPU (0: it
     * cannot run here), as ggml's own loader picks it; null when the folder has none.
     */
    private static @Nullable Path bestCpuModule(Path folder) throws IOException {
        List<Path> modules;
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(folder)) {
            modules = files.filter(f -> {
                        String name = f.getFileName().toString();
                        return (name.startsWith("libggml-cpu") || name.startsWith("ggml-cpu"))
                                && (name.endsWith(".so") || name.endsWith(".dylib") || name.endsWith(".dll"));
                    })
                    .sorted()
                    .toList();
        }
        Path best = null;
        int bestScore = 0;
        for (Path module : modules) {
            try (Arena scoring = Arena.ofConfined()) {
                SymbolLookup lookup = SymbolLookup.libraryLookup(module, scoring);
                MemorySegment score = lookup.find("ggml_backend_score").orElse(null);
                if (score == null) {
                    continue;
                }
                int value = (int) Linker.nativeLinker()
                        .downcallHandle(score, FunctionDescriptor.of(JAVA_INT))
                        .invokeExact();
                if (value > bestScore) {
                    best = module;
                    bestScore = value;
                }
            } catch (Throwable e) {
                Log.debug("llama.cpp: the CPU module " + module + " does not load here: " + e);
            }
        }
        return best;
    }

    /** Logs the registered devices and remembers whether one is a GPU; a GPU build without a GPU device says why. */
    private static void reportDevices(
            Linker linker,
            SymbolLookup ggml,
            Path folder,
            String backend,
            @Nullable String buildBackend,
            String osName) {
        MemorySegment devCount = ggml.find("ggml_backend_dev_count").orElse(null);
        MemorySegment devGet = ggml.find("ggml_backend_dev_get").orElse(null);
        Path baseFile = null;
        for (String name : List.of("libggml-base.so", "libggml-base.dylib", "ggml-base.dll")) {
            if (java.nio.file.Files.isRegularFile(folder.resolve(name))) {
                baseFile = folder.resolve(name);
            }
        }
        if (devCount == null || devGet == null || baseFile == null) {
            return;
        }
        SymbolLookup base = SymbolLookup.libraryLookup(baseFile, Arena.global());
        MemorySegment devName = base.find("ggml_backend_dev_name").orElse(null);
        MemorySegment devDescription = base.find("ggml_backend_dev_description").orElse(null);
        MemorySegment devType = base.find("ggml_backend_dev_type").orElse(null);
        if (devName == null || devDescription == null || devType == null) {
            return;
        }
        List<String> found = new java.util.ArrayList<>();
        boolean gpu = false;
        try {
            long n = (long) linker.downcallHandle(devCount, FunctionDescriptor.of(JAVA_LONG))
                    .invokeExact();
            MethodHandle get = linker.downcallHandle(devGet, FunctionDescriptor.of(ADDRESS, JAVA_LONG));
            MethodHandle name = linker.downcallHandle(devName, FunctionDescriptor.of(ADDRESS, ADDRESS));
            MethodHandle description = linker.downcallHandle(devDescription, FunctionDescriptor.of(ADDRESS, ADDRESS));
            MethodHandle type = linker.downcallHandle(devType, FunctionDescriptor.of(JAVA_INT, ADDRESS));
            for (long i = 0; i < n; i++) {
                MemorySegment device = (MemorySegment) get.invokeExact(i);
                int kind = (int) type.invokeExact(device);
                MemorySegment nameText = (MemorySegment) name.invokeExact(device);
                MemorySegment descriptionText = (MemorySegment) description.invokeExact(device);
                // 1: a GPU with its own memory, 2: an integrated GPU (ggml_backend_dev_type)
                gpu |= kind == 1 || kind == 2;
                found.add(text(nameText) + " (" + text(descriptionText) + ")");
            }
        } catch (Throwable e) {
            Log.warning("llama.cpp: cannot list its devices: " + e);
            return;
        }
        devices = String.join("; ", found);
        gpuDevice = gpu;
        Log.info("llama.cpp devices: " + devices);
        boolean gpuBuild = buildBackend != null && !buildBackend.equals("cpu");
        if (gpuBuild && !gpu && !backend.equals("cpu")) {
            String why = missingDriver(buildBackend, osName);
            String message = "llama.cpp's " + buildBackend + " backend found no GPU device"
                    + (why != null ? " (" + why + ")" : " (no GPU, or its driver offers only a CPU device)")
                    + ": models run on the CPU";
            if (backend.equals(buildBackend)) {
                Log.warning(message + " although " + NativeSettings.BACKEND_VARIABLE + "=" + backend + " asked for it");
            } else {
                Log.info(message);
            }
        }
    }

    /** Why a GPU backend cannot have a device here when its loader library is missing, or null. */
    private static @Nullable String missingDriver(String backend, String osName) {
        String os = osName.toLowerCase(java.util.Locale.ROOT);
        String loader = switch (backend) {
            case "vulkan" -> os.startsWith("windows") ? "vulkan-1.dll" : os.startsWith("mac") ? null : "libvulkan.so.1";
            case "cuda" -> os.startsWith("windows") ? "nvcuda.dll" : "libcuda.so.1";
            default -> null;
        };
        if (loader == null) {
            return null;
        }
        try (Arena probe = Arena.ofConfined()) {
            SymbolLookup.libraryLookup(loader, probe);
            return null;
        } catch (IllegalArgumentException e) {
            return "no " + loader + ": install the GPU's driver"
                    + (backend.equals("vulkan") ? " and the Vulkan loader (Debian: libvulkan1)" : "");
        }
    }

    private static String text(MemorySegment pointer) {
        return pointer.equals(MemorySegment.NULL)
                ? ""
                : pointer.reinterpret(1024).getString(0);
    }

    private static void checkVersion(SymbolLookup lookup) {
        MemorySegment build = lookup.find("LLAMA_BUILD_NUMBER")
                .orElseThrow(() -> new UnsupportedOperationException("the library has no LLAMA_BUILD_NUMBER"));
        int number = build.reinterpret(4).get(JAVA_INT, 0);
        MemorySegment commitPointer = lookup.find("LLAMA_COMMIT")
                .orElseThrow(() -> new UnsupportedOperationException("the library has no LLAMA_COMMIT"));
        MemorySegment commitText = commitPointer.reinterpret(ADDRESS.byteSize()).get(ADDRESS, 0);
        String commit = commitText.equals(MemorySegment.NULL)
                ? ""
                : commitText.reinterpret(64).getString(0);
        if (number != LlamaNative.BUILD_NUMBER || !commit.equals(LlamaNative.COMMIT)) {
            throw new UnsupportedOperationException("llama.cpp build " + number + " (" + commit + "), not "
                    + LlamaNative.BUILD_NUMBER + " (" + LlamaNative.COMMIT + ") whose struct layouts are known");
        }
    }

    /**
     * The vendored build is recognised by the record the project's build script writes next to it
     * ({@value LlamaNative#BUILD_RECORD}: the source package and its SHA-256, which must be one of the family whose
     * layouts were verified, {@link LlamaBuilds#VERIFIED}, whatever its GPU backend), since llama.cpp built from a
     * source package has no commit of its own to report; the default-parameter fingerprint is checked after.
     */
    private static LlamaBuilds.Build checkVendoredVersion(Path library) {
        try {
            return LlamaBuilds.read(library);
        } catch (IOException e) {
            throw new UnsupportedOperationException(e.getMessage(), e);
        }
    }
}
