package dev.oam.model.llama.engine;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.jspecify.annotations.Nullable;

/**
 * The llama.cpp builds the project's script makes ({@code bin/build-llama}, {@code bin/lib/real-models.sh}) and where
 * to find them: {@code <cache>/llama-cpp/<version>-r<recipe>[-<backend>]/lib/libllama.so} (or {@code .dylib}), with the
 * build record {@value #RECORD} next to the library. The FFM engine drives the preferred one by default (JDK 22+, Linux
 * and macOS), so a host gets a current llama.cpp without setting anything once the script has run: the CPU build first,
 * or a GPU build first when the host asks for GPU layers ({@link NativeSettings#gpuFirst}).
 *
 * <p>A build is accepted by the struct layouts it was verified against, not by one commit: {@link #VERIFIED} maps each
 * source package whose {@code llama.h} the FFM engine's {@code VENDORED} layouts were checked against to its SHA-256,
 * and a record must name one of them. The backend ({@code cpu}, {@code vulkan}, {@code cuda}, {@code metal}) changes no
 * layout, only where layers may run.
 */
public final class LlamaBuilds {
    /**
     * The record the script writes next to the library: {@code source}, {@code sha256}, {@code recipe},
     * {@code backend}.
     */
    public static final String RECORD = "oam-build.properties";

    /** Source packages (file name to SHA-256) whose llama.h the vendored layouts were verified against. */
    static final Map<String, String> VERIFIED = Map.of(
            "llama_cpp_python-0.3.36.tar.gz", "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
            // node-llama-cpp's prebuilt llama.cpp 0.5.0 with Vulkan (bin/build-llama --vulkan): its 241 llama_*
            // functions
            // are a subset of 0.3.36's, and both libraries' llama_model_default_params (80 bytes) and
            // llama_context_default_params (160 bytes), called through 0.3.36's llama.h, return identical bytes
            "node-llama-cpp-linux-x64-vulkan-3.22.1.tgz",
                    "e10577190fc4bd1649d3b655588e5c7a85fc6b6dbf7136fee596cbe9e25521e7",
            // The release archives' llama.cpp (bin/lib/llama-natives.sh): node-llama-cpp 3.22.1 (llama.cpp v0.5.0) for
            // Linux, 3.21.1 (v0.4.0, whose llama.h differs from v0.5.0's by additions only) for Windows and macOS,
            // and 3.21.1's Linux x64 CPU build, which runs the FFM tests for that release on Linux
            "node-llama-cpp-linux-x64-3.22.1.tgz", "0d953e1503d5ab4608d8ed5b739132308c81ac05ffeb760d2a7f30e08a9f90e0",
            "node-llama-cpp-linux-x64-3.21.1.tgz", "4b5b65a8b2611d8af94349b02d815c0f424a30a0a19aef2be5db25ecfef6730f",
            // the Linux arm64 archive's: the same llama.cpp v0.5.0 built for aarch64
            "node-llama-cpp-linux-arm64-3.22.1.tgz", "39c76b998e35ed2f236c01472fc79eda0fc558b1c8b535023c2d7ded8c327cc4",
            "node-llama-cpp-win-x64-vulkan-3.21.1.tgz",
                    "105e8207d2114f5f248b217fee7f9b702d0e7509cf0d3c7565dfb9e707f9303e",
            "node-llama-cpp-mac-arm64-metal-3.21.1.tgz",
                    "cd11a52fab1935fde5abd221b5ecf8167686b45e386b6a02df49cb9b2814e9d6",
            "node-llama-cpp-mac-x64-3.21.1.tgz", "3bcc6b2d6d3618098a36c9c01ae3afff1599f336a826cd54b1a55a73ed2159a7");

    private static final List<String> GPU_FIRST = List.of("cuda", "vulkan", "metal", "cpu");
    private static final List<String> CPU_FIRST = List.of("cpu", "cuda", "vulkan", "metal");

    /** One build: its library file and what its record says. */
    public record Build(Path library, String source, String backend, int recipe) {
        public String describe() {
            String from = source.replace(".tar.gz", "").replace(".tgz", "");
            from = from.startsWith("llama_cpp_python-")
                    ? "llama-cpp-python " + from.substring("llama_cpp_python-".length())
                    : from;
            return from + "'s llama.cpp, " + backend + " build (" + library + ")";
        }
    }

    private LlamaBuilds() {}

    /**
     * The build whose library is {@code library}, from its record.
     *
     * @throws IOException no record, or one naming a source whose layouts were not verified (the message says which)
     */
    public static Build read(Path library) throws IOException {
        Path record = library.toAbsolutePath().getParent().resolve(RECORD);
        return read(record, library, properties(record));
    }

    private static Properties properties(Path record) throws IOException {
        Properties build = new Properties();
        try (Reader in = Files.newBufferedReader(record)) {
            build.load(in);
        } catch (IOException e) {
            throw new IOException(
                    "no " + record + " (" + e.getClass().getSimpleName() + "): this is not a library"
                            + " bin/build-llama built or a release carries, whose struct layouts are known",
                    e);
        }
        return build;
    }

    /**
     * The llama.cpp a release carries in {@code folder} ({@code lib/llama} of the archive): its {@value #RECORD} names
     * the library file ({@code library=}), the npm package and its SHA-256, checked like a built one's; then every file
     * is checked against the folder's {@value NativeFiles#FILES} ({@link NativeFiles#check}) before anything loads it.
     *
     * @throws IOException no record, a record naming no existing library, a source whose layouts were not verified, or
     *     a file missing, damaged or replaced (the message names it)
     */
    public static Build readBundle(Path folder) throws IOException {
        return readBundle(folder, null);
    }

    /** {@link #readBundle(Path)}, keeping the note of a folder that checked in {@code notes} ({@link NativeFiles}). */
    public static Build readBundle(Path folder, @Nullable Path notes) throws IOException {
        Path record = folder.resolve(RECORD);
        Properties build = properties(record);
        String name = build.getProperty("library", "").strip();
        if (name.isEmpty() || name.contains("/") || name.contains("\\")) {
            throw new IOException(record + " names no library file (library=)");
        }
        Path library = folder.resolve(name);
        if (!Files.isRegularFile(library)) {
            throw new IOException(record + " names " + name + ", which is not in " + folder);
        }
        Build read = read(record, library, build);
        try {
            NativeFiles.check(folder, notes);
        } catch (IOException e) {
            throw new IOException("its files do not check: " + e.getMessage(), e);
        }
        return read;
    }

    private static Build read(Path record, Path library, Properties build) throws IOException {
        String source = build.getProperty("source", "");
        String sha256 = build.getProperty("sha256", "");
        if (!sha256.equals(VERIFIED.get(source))) {
            throw new IOException(record + " names " + source + " (" + sha256 + "), not one of the sources whose struct"
                    + " layouts are verified (" + String.join(", ", new java.util.TreeSet<>(VERIFIED.keySet())) + ")");
        }
        int recipe;
        try {
            recipe = Integer.parseInt(build.getProperty("recipe", "0").strip());
        } catch (NumberFormatException e) {
            recipe = 0;
        }
        String backend = build.getProperty("backend", "cpu").strip().toLowerCase(Locale.ROOT);
        return new Build(library.toAbsolutePath(), source, backend.isEmpty() ? "cpu" : backend, recipe);
    }

    /** The folder the script builds into: {@code llama-cpp} in the project's cache folder. */
    static Path folder(NativeSettings natives) {
        return natives.cacheFolder().resolve("llama-cpp");
    }

    /** Every verified build under {@code folder}, the preferred first (by backend, then the newest recipe). */
    static List<Build> found(Path folder, boolean gpuFirst) {
        List<Build> builds = new ArrayList<>();
        if (!Files.isDirectory(folder)) {
            return builds;
        }
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(folder)) {
            for (Path dir : dirs) {
                for (String name : List.of("libllama.so", "libllama.dylib")) {
                    Path library = dir.resolve("lib").resolve(name);
                    if (Files.isRegularFile(library)) {
                        try {
                            builds.add(read(library));
                        } catch (IOException e) {
                            // not a verified build: not a candidate
                        }
                    }
                }
            }
        } catch (IOException e) {
            return builds;
        }
        List<String> order = gpuFirst ? GPU_FIRST : CPU_FIRST;
        builds.sort(Comparator.<Build>comparingInt(b -> rank(order, b.backend()))
                .thenComparing(Comparator.comparingInt(Build::recipe).reversed())
                .thenComparing(b -> b.library().toString()));
        return builds;
    }

    /**
     * The build the FFM engine uses when no library is named, or null when the script never ran here: a GPU build first
     * when the host asks for GPU layers ({@link NativeSettings#gpuFirst}) or forces a GPU backend, else the CPU build
     * first.
     */
    public static @Nullable Build preferred(NativeSettings natives) {
        String backend = natives.backend();
        Build bundle = bundled(natives);
        boolean gpuFirst = !backend.equals("cpu") && (!backend.equals("auto") || natives.gpuFirst());
        List<Build> builds = found(folder(natives), gpuFirst);
        if (!backend.equals("auto")) {
            // A forced backend: a build of it (the bundle first); a build with GPU modules serves the CPU as well
            for (Build build : bundle != null ? prepend(bundle, builds) : builds) {
                if (build.backend().equals(backend)) {
                    return build;
                }
            }
        }
        if (bundle != null) {
            return bundle;
        }
        return builds.isEmpty() ? null : builds.get(0);
    }

    private static List<Build> prepend(Build first, List<Build> rest) {
        List<Build> all = new ArrayList<>(rest.size() + 1);
        all.add(first);
        all.addAll(rest);
        return all;
    }

    /**
     * The release's llama.cpp: the folder {@value NativeSettings#BUNDLE_VARIABLE} names, else {@code llama} next to the
     * jar this class was loaded from ({@code lib/oam.jar} of a release archive, so {@code lib/llama}); null when there
     * is none or it is not a verified build (then the reason is logged once).
     */
    public static @Nullable Build bundled(NativeSettings natives) {
        String named = natives.bundle();
        Path folder;
        if (named != null) {
            folder = Path.of(named).toAbsolutePath();
        } else {
            folder = besideJar();
            if (folder == null || !Files.isRegularFile(folder.resolve(RECORD))) {
                // a JVM host with oam from Maven: the platform natives artifact on the class path, extracted once
                try {
                    folder = ClassPathNatives.extracted(natives, LlamaBuilds.class.getClassLoader());
                } catch (IOException e) {
                    warnOnce("the llama.cpp natives on the class path are not used: " + e.getMessage());
                    return null;
                }
                if (folder == null) {
                    return null;
                }
            }
        }
        if (!Files.isRegularFile(folder.resolve(RECORD))) {
            return null;
        }
        try {
            return readBundle(folder, NativeFiles.notes(natives));
        } catch (IOException e) {
            warnOnce("the llama.cpp in " + folder + " is not used: " + e.getMessage() + ". Models run on a"
                    + " project-built llama.cpp if there is one, else on the binding's llama.cpp b4916 (CPU only);"
                    + " reinstall the release to get it back.");
            return null;
        }
    }

    private static final java.util.Set<String> WARNED = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private static void warnOnce(String message) {
        if (WARNED.add(message)) {
            dev.oam.core.Log.warning(message);
        }
    }

    /** {@code llama} in the folder of the jar (or classes folder) this class came from, or null. */
    static @Nullable Path besideJar() {
        try {
            java.security.CodeSource source =
                    LlamaBuilds.class.getProtectionDomain().getCodeSource();
            if (source == null || source.getLocation() == null) {
                return null;
            }
            Path location = Path.of(source.getLocation().toURI());
            Path parent = location.toAbsolutePath().getParent();
            return parent == null ? null : parent.resolve("llama");
        } catch (java.net.URISyntaxException | RuntimeException e) {
            return null;
        }
    }

    private static int rank(List<String> order, String backend) {
        int at = order.indexOf(backend);
        return at < 0 ? order.size() : at;
    }
}
