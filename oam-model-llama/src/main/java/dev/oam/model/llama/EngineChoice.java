package dev.oam.model.llama;

import dev.oam.core.Environment;
import dev.oam.core.Log;
import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.LlamaBuilds;
import dev.oam.model.llama.engine.NativeLibrary;
import dev.oam.model.llama.engine.NativeSettings;
import dev.oam.model.llama.ffm.FfmObserver;
import dev.oam.model.llama.ffm.FfmTuning;
import dev.oam.model.llama.gguf.GgufException;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.jni.JniEngine;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Which engine runs a llama model: the FFM engine ({@code FfmEngine}, llama.cpp's C API driven directly: continuous
 * batching of every slot, Java sampling, cancel between prompt chunks) or the JNI engine ({@link JniEngine}, through
 * the de.kherud binding).
 *
 * <p>By default FFM runs on JDK 22+ on Linux and macOS, when the library passes {@code LlamaNative}'s checks (b4916,
 * every symbol, the default-parameter fingerprint); anywhere else (JDK 21, Windows, whose DLLs export no
 * {@code llama_*} symbol, or a failed check) the JNI engine runs. {@value #VARIABLE} (or the system property
 * {@value #PROPERTY}) = {@code jni} or {@code ffm} forces one; a forced FFM that cannot run fails the load with the
 * reason instead of falling back.
 *
 * <p>The FFM classes are compiled for release 22 into {@code META-INF/versions/22} and reached only here, by name, so a
 * JDK 21 host never loads them.
 */
public final class EngineChoice {
    static final String VARIABLE = "OAM_LLAMA_ENGINE";
    static final String PROPERTY = "oam.llama.engine";
    static final String FFM_CLASS = "dev.oam.model.llama.ffm.FfmEngine";

    public enum Kind {
        JNI,
        FFM
    }

    private EngineChoice() {}

    /**
     * The engine asked for: {@code null} when nothing is forced (then FFM where it can run).
     *
     * @throws IllegalArgumentException the setting is neither {@code jni} nor {@code ffm}
     */
    static @Nullable Kind forced(Environment environment) {
        String value = environment.property(PROPERTY);
        if (value == null || value.isBlank()) {
            value = environment.variable(VARIABLE);
        }
        if (value == null || value.isBlank() || value.strip().equalsIgnoreCase("auto")) {
            return null;
        }
        return switch (value.strip().toLowerCase(Locale.ROOT)) {
            case "jni" -> Kind.JNI;
            case "ffm" -> Kind.FFM;
            default -> throw new IllegalArgumentException(VARIABLE + "='" + value + "': use jni, ffm or auto");
        };
    }

    /**
     * Which llama.cpp a model loaded now would run on, decided without loading anything: for the architecture check at
     * {@code session/create} ({@link #checkArchitecture}).
     *
     * @param current whether it is the project's current llama.cpp ({@link Architectures#VENDORED}) rather than b4916
     */
    public record Planned(boolean current, String description) {
        java.util.Set<String> architectures() {
            return current ? Architectures.VENDORED : Architectures.B4916;
        }
    }

    /** {@link #planned} for the settings {@code environment} names, on a JVM of {@code javaFeature} (for tests). */
    public static Planned planned(Environment environment, int javaFeature, String osName, String home) {
        Environment facts = Environment.of(java.util.Map.of(), java.util.Map.of("os.name", osName, "user.home", home))
                .over(environment);
        LlamaSettings settings = LlamaSettings.read(facts);
        return planned(settings.engine(), settings.natives(), javaFeature);
    }

    private static Planned planned(@Nullable Kind forced, NativeSettings natives, int javaFeature) {
        String osName = natives.osName();
        @Nullable String named = natives.library();
        if (forced == Kind.JNI
                || forced == null
                        && !ffmPossible(javaFeature, osName)
                        && !(windowsWithBundle(javaFeature, osName) && LlamaBuilds.bundled(natives) != null)) {
            return new Planned(
                    false,
                    "llama.cpp b4916, which the JNI engine runs (de.kherud:llama " + NativeLibrary.BINDING_VERSION
                            + (forced == Kind.JNI ? ", " + VARIABLE + "=jni" : ", JDK " + javaFeature + " on " + osName)
                            + ")");
        }
        if (named != null) {
            return named.strip().equalsIgnoreCase("binding")
                    ? new Planned(false, "llama.cpp b4916, the binding's library (OAM_LLAMA_LIBRARY=binding)")
                    : new Planned(true, "the llama.cpp OAM_LLAMA_LIBRARY names (" + named.strip() + ")");
        }
        LlamaBuilds.Build built = LlamaBuilds.preferred(natives);
        return built != null
                ? new Planned(true, built.describe())
                : new Planned(
                        false, "llama.cpp b4916, the binding's library (no project-built llama.cpp was found here)");
    }

    /** {@link #planned} for this JVM with {@code settings}' engine and natives. */
    public static Planned planned(LlamaSettings settings) {
        return planned(settings.engine(), settings.natives(), Runtime.version().feature());
    }

    /**
     * Refuses a file whose architecture {@code planned}'s llama.cpp does not know, naming the architecture and what
     * would run it (llama.cpp aborts or fails later, with a message about tensors, on a file it cannot run).
     */
    static void checkArchitecture(GgufFile file, Planned planned) throws GgufException {
        String architecture = file.architecture();
        if (planned.architectures().contains(architecture)) {
            return;
        }
        String name = file.path().getFileName().toString();
        if (!planned.current() && Architectures.VENDORED.contains(architecture)) {
            throw new GgufException(name + " is a '" + architecture + "' model, which " + planned.description()
                    + " cannot run. A current llama.cpp can: on JDK 22 or newer (Linux, macOS) build it once with"
                    + " bin/build-llama (the FFM engine then uses it), or run a current llama-server for it with"
                    + " {\"type\": \"llama-server\", \"path\": …}.");
        }
        throw new GgufException(name + " is a '" + architecture + "' model, which no llama.cpp this bridge can load"
                + " knows (here: " + planned.description() + "); a newer llama-server may run it: {\"type\":"
                + " \"llama-server\", \"path\": …}.");
    }

    /**
     * Whether FFM can be tried here: JDK 22+ (final FFM) and Linux or macOS (the only libraries with llama_* exports).
     */
    static boolean ffmPossible(int javaFeature, String osName) {
        String os = osName.toLowerCase(Locale.ROOT);
        return javaFeature >= 22 && (os.startsWith("linux") || os.startsWith("mac") || os.startsWith("darwin"));
    }

    /**
     * Windows on JDK 22+: FFM can drive a llama.cpp DLL that exports the {@code llama_*} functions (a release's
     * {@code lib/llama}, or one {@code OAM_LLAMA_LIBRARY} names), never the binding's {@code jllama.dll}.
     */
    static boolean windowsWithBundle(int javaFeature, String osName) {
        return javaFeature >= 22 && osName.toLowerCase(Locale.ROOT).startsWith("windows");
    }

    /** Whether FFM can run here for this process: {@link #ffmPossible}, or Windows with a llama.cpp DLL to drive. */
    private static boolean ffmPossibleHere(NativeSettings natives) {
        int feature = Runtime.version().feature();
        if (ffmPossible(feature, natives.osName())) {
            return true;
        }
        if (!windowsWithBundle(feature, natives.osName())) {
            return false;
        }
        return natives.namedLibrary() != null || LlamaBuilds.bundled(natives) != null;
    }

    private static final java.util.concurrent.atomic.AtomicBoolean OLD_JDK_WARNED =
            new java.util.concurrent.atomic.AtomicBoolean();

    /**
     * The warning for a JDK 21 host that has a release's current llama.cpp beside it but cannot drive it (FFM is final
     * in JDK 22): what it loses by running the binding's b4916 instead. Null when there is no such llama.cpp.
     */
    public static @Nullable String oldJdkLoses(int javaFeature, LlamaBuilds.@Nullable Build bundle) {
        if (javaFeature >= 22 || bundle == null) {
            return null;
        }
        return "this JVM is Java " + javaFeature + ": the FFM engine needs Java 22 or newer, so the JNI engine runs"
                + " llama.cpp b4916 (March 2025) instead of the release's " + bundle.describe() + ". This host loses"
                + " today's architectures (Qwen3, Gemma 3n and 4, SmolLM3, … are refused), the " + bundle.backend()
                + " backend (no GPU offload), one KV stream per session and the CPU's own kernels. Start it on Java 22+"
                + " (the release's runtime is Java 25) to get them.";
    }

    /** {@code file} on the engine {@code host} forces (else chosen), with its natives and FFM tuning. */
    static Engine open(GgufFile file, EngineSettings settings, LlamaSettings host) throws IOException {
        return open(file, settings, host.engine(), host.natives(), host.tuning(), FfmObserver.NONE);
    }

    /** {@code file} on the engine {@code forced} names (null: chosen), with {@code host}'s natives and tuning. */
    static Engine open(GgufFile file, EngineSettings settings, @Nullable Kind forced, LlamaSettings host)
            throws IOException {
        return open(file, settings, forced, host.natives(), host.tuning(), FfmObserver.NONE);
    }

    /**
     * {@code file} on the engine {@code forced} names (null: FFM where it can run, else JNI), on the llama.cpp
     * {@code natives} name; an FFM engine with {@code tuning} and {@code observer}.
     */
    static Engine open(
            GgufFile file,
            EngineSettings settings,
            @Nullable Kind forced,
            NativeSettings natives,
            FfmTuning tuning,
            FfmObserver observer)
            throws IOException {
        @Nullable String library = natives.library();
        boolean possible = ffmPossibleHere(natives);
        if (forced == null && !possible) {
            String loses = oldJdkLoses(Runtime.version().feature(), LlamaBuilds.bundled(natives));
            if (loses != null && OLD_JDK_WARNED.compareAndSet(false, true)) {
                Log.warning(loses);
            }
        }
        if (forced == Kind.JNI || forced == null && !possible) {
            String ignored = ignoredLibrary(
                    library,
                    null,
                    forced == Kind.JNI
                            ? VARIABLE + "=jni"
                            : "JDK " + Runtime.version().feature() + " on " + natives.osName());
            if (ignored != null) {
                Log.warning(ignored);
            }
            return JniEngine.open(file, settings, natives);
        }
        if (!possible) {
            throw new IOException("the FFM llama engine needs JDK 22 or newer on Linux or macOS, or on Windows a"
                    + " llama.cpp DLL (a release's lib/llama, or OAM_LLAMA_LIBRARY) (this is JDK "
                    + Runtime.version().feature() + " on " + natives.osName() + "); unset " + VARIABLE);
        }
        try {
            return openFfm(file, settings, natives, tuning, observer);
        } catch (UnsupportedOperationException e) {
            if (forced == Kind.FFM) {
                throw new IOException(e.getMessage(), e);
            }
            Log.info(e.getMessage() + "; using the JNI engine");
            return JniEngine.open(file, settings, natives);
        }
    }

    /**
     * The warning for a library named by {@code OAM_LLAMA_LIBRARY} (or {@code oam.llama.library}) that the JNI engine
     * will not use (it drives the binding's own llama.cpp), or null when none is named. {@code why}: why JNI runs.
     */
    static @Nullable String ignoredLibrary(@Nullable String property, @Nullable String variable, String why) {
        String named = property != null && !property.isBlank() ? property : variable;
        if (named == null || named.isBlank()) {
            return null;
        }
        return "OAM_LLAMA_LIBRARY=" + named.strip() + " is not used: the JNI engine runs here (" + why
                + ") and drives the"
                + " binding's own llama.cpp; the FFM engine, which drives that library, needs JDK 22 or newer on Linux";
    }

    /** {@code FfmEngine.open(file, settings, natives, tuning, observer)}, by name. */
    private static Engine openFfm(
            GgufFile file, EngineSettings settings, NativeSettings natives, FfmTuning tuning, FfmObserver observer)
            throws IOException {
        Method open;
        try {
            Class<?> type = Class.forName(FFM_CLASS, true, EngineChoice.class.getClassLoader());
            open = type.getDeclaredMethod(
                    "open",
                    GgufFile.class,
                    EngineSettings.class,
                    NativeSettings.class,
                    FfmTuning.class,
                    FfmObserver.class);
            open.setAccessible(true);
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new UnsupportedOperationException("the FFM llama engine is not in this build (" + e + ")", e);
        }
        try {
            return (Engine) open.invoke(null, file, settings, natives, tuning, observer);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException io) {
                throw io;
            }
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw new IOException(String.valueOf(cause), cause);
        } catch (IllegalAccessException e) {
            throw new UnsupportedOperationException("the FFM llama engine cannot be reached: " + e, e);
        }
    }
}
