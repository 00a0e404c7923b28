package dev.oam.model.llama.engine;

import dev.oam.core.Environment;
import dev.oam.core.model.pull.ModelCache;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Which llama.cpp libraries the process may load and where they are, read once from an {@link Environment} at an entry
 * point ({@code LlamaSettings.read}); the loaders ({@link NativeLibrary}, {@link LlamaBuilds},
 * {@link ClassPathNatives}, the FFM engine's) take this record and read nothing themselves. llama.cpp's library is
 * loaded once per process, so the first load's settings are the ones that count.
 *
 * @param osName the JVM's {@code os.name}
 * @param osArch the JVM's {@code os.arch}
 * @param home the JVM's {@code user.home}
 * @param javaHome the JVM's {@code java.home} (on Windows its Visual C++ runtime serves llama.cpp's DLLs)
 * @param cacheFolder the project's cache folder ({@link Environment#cacheFolder()}): builds of {@code bin/build-llama}
 *     live in its {@code llama-cpp}, natives from the class path in its {@code native}
 * @param modelCache the model cache's folder ({@link ModelCache#fromEnvironment}), where {@code oam pull runtime:cuda}
 *     places the CUDA runtime
 * @param nativeDir where the binding's JNI library is extracted ({@value #NATIVE_DIR_VARIABLE}), or null for
 *     {@code ~/.cache/oam/native/…}
 * @param jllamaLibrary a {@code jllama} library of the user's to load instead of the binding jar's
 *     ({@value #JLLAMA_VARIABLE}), or null
 * @param bundle the folder of a release's llama.cpp to use instead of the one beside the jar
 *     ({@value #BUNDLE_VARIABLE}), or null
 * @param backend the backend forced ({@value #BACKEND_PROPERTY}, else {@value #BACKEND_VARIABLE}): {@code auto} (the
 *     default, also for a value that is none of these), {@code cpu}, {@code vulkan}, {@code cuda} or {@code metal}
 * @param library the llama.cpp library the FFM engine drives ({@value #LIBRARY_PROPERTY}, else
 *     {@value #LIBRARY_VARIABLE}; {@value #BINDING} for the binding's own), or null for the project-built one
 * @param gpuFirst whether the host asks for GPU layers (its GPU layers setting is other than 0), so a GPU build of
 *     llama.cpp is preferred
 */
public record NativeSettings(
        String osName,
        String osArch,
        String home,
        String javaHome,
        Path cacheFolder,
        Path modelCache,
        @Nullable String nativeDir,
        @Nullable String jllamaLibrary,
        @Nullable String bundle,
        String backend,
        @Nullable String library,
        boolean gpuFirst) {
    /** Where the binding's JNI library is extracted. */
    public static final String NATIVE_DIR_VARIABLE = "OAM_NATIVE_DIR";
    /** Names a {@code jllama} library of the user's to load instead of extracting the jar's. */
    public static final String JLLAMA_VARIABLE = "OAM_JLLAMA_LIBRARY";
    /** Names the folder of a bundled llama.cpp (its record names the library) instead of the release's. */
    public static final String BUNDLE_VARIABLE = "OAM_LLAMA_BUNDLE";
    /** Forces a backend: {@code auto} (the default), {@code cpu}, {@code vulkan}, {@code cuda} or {@code metal}. */
    public static final String BACKEND_VARIABLE = "OAM_LLAMA_BACKEND";
    /** The system property for {@value #BACKEND_VARIABLE}; it wins over the variable. */
    public static final String BACKEND_PROPERTY = "oam.llama.backend";
    /** The llama.cpp library the FFM engine drives. */
    public static final String LIBRARY_VARIABLE = "OAM_LLAMA_LIBRARY";
    /** The system property for {@value #LIBRARY_VARIABLE}; it wins over the variable. */
    public static final String LIBRARY_PROPERTY = "oam.llama.library";
    /**
     * The library setting's value that asks for the binding jar's library (b4916) even where a project build exists.
     */
    public static final String BINDING = "binding";

    private static final Set<String> BACKENDS = Set.of("auto", "cpu", "vulkan", "cuda", "metal");

    public NativeSettings {
        Objects.requireNonNull(osName, "osName");
        Objects.requireNonNull(osArch, "osArch");
        Objects.requireNonNull(home, "home");
        Objects.requireNonNull(javaHome, "javaHome");
        Objects.requireNonNull(cacheFolder, "cacheFolder");
        Objects.requireNonNull(modelCache, "modelCache");
        nativeDir = blankToNull(nativeDir);
        jllamaLibrary = blankToNull(jllamaLibrary);
        bundle = blankToNull(bundle);
        backend = backend(backend);
        library = blankToNull(library);
    }

    /**
     * What {@code environment} names; {@code gpuFirst} from the host's parsed GPU layers setting. The JVM's facts
     * ({@code os.name}, {@code os.arch}, {@code user.home}) are its properties.
     */
    public static NativeSettings read(Environment environment, boolean gpuFirst) {
        String backend = environment.nonBlankProperty(BACKEND_PROPERTY);
        String library = environment.nonBlankProperty(LIBRARY_PROPERTY);
        return new NativeSettings(
                Objects.requireNonNullElse(environment.property("os.name"), ""),
                Objects.requireNonNullElse(environment.property("os.arch"), ""),
                Objects.requireNonNullElse(environment.property("user.home"), "."),
                Objects.requireNonNullElse(environment.property("java.home"), ""),
                environment.cacheFolder(),
                ModelCache.fromEnvironment(environment).root(),
                environment.variable(NATIVE_DIR_VARIABLE),
                environment.variable(JLLAMA_VARIABLE),
                environment.variable(BUNDLE_VARIABLE),
                backend != null ? backend : environment.variable(BACKEND_VARIABLE),
                library != null ? library : environment.variable(LIBRARY_VARIABLE),
                gpuFirst);
    }

    /** Whether the library setting asks for the binding's own library ({@value #BINDING}). */
    public boolean bindingAsked() {
        return library != null && library.equalsIgnoreCase(BINDING);
    }

    /** The library the setting names as a file, or null when it names none or the binding's. */
    public @Nullable String namedLibrary() {
        return library == null || bindingAsked() ? null : library;
    }

    public NativeSettings withLibrary(@Nullable String value) {
        return new NativeSettings(
                osName,
                osArch,
                home,
                javaHome,
                cacheFolder,
                modelCache,
                nativeDir,
                jllamaLibrary,
                bundle,
                backend,
                value,
                gpuFirst);
    }

    public NativeSettings withGpuFirst(boolean value) {
        return new NativeSettings(
                osName,
                osArch,
                home,
                javaHome,
                cacheFolder,
                modelCache,
                nativeDir,
                jllamaLibrary,
                bundle,
                backend,
                library,
                value);
    }

    /** The backend {@code value} names: one of auto, cpu, vulkan, cuda, metal; {@code auto} for anything else. */
    static String backend(@Nullable String value) {
        if (value == null || value.isBlank()) {
            return "auto";
        }
        String backend = value.strip().toLowerCase(Locale.ROOT);
        return BACKENDS.contains(backend) ? backend : "auto";
    }

    private static @Nullable String blankToNull(@Nullable String value) {
        return value == null || value.isBlank() ? null : value.strip();
    }
}
