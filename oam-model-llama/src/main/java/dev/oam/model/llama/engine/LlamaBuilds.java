package dev.oam.model.llama.engine;

import dev.oam.model.llama.LlamaBackend;
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
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * The llama.cpp builds the project's script makes ({@code bin/build-llama}, {@code bin/lib/real-models.sh}) and where
 * to find them: {@code <cache>/llama-cpp/<version>-r<recipe>[-<backend>]/lib/libllama.so} (or {@code .dylib}), with the
 * build record {@value #RECORD} next to the library. The FFM engine drives the preferred one by default (JDK 22+, Linux
 * and macOS), so a host gets a current llama.cpp without setting anything once the script has run: the CPU build first,
 * or a GPU build first when {@code OAM_LLAMA_GPU_LAYERS} asks for GPU layers.
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

    static final String CACHE_VARIABLE = "OAM_CACHE_DIR";
    /** Source packages (file name to SHA-256) whose llama.h the vendored layouts were verified against. */
    static final Map<String, String> VERIFIED = Map.of(
            "llama_cpp_python-0.3.36.tar.gz", "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e",
            // node-llama-cpp's prebuilt llama.cpp 0.5.0 with Vulkan (bin/build-llama --vulkan): its 241 llama_*
            // functions
            // are a subset of 0.3.36's, and both libraries' llama_model_default_params (80 bytes) and
            // llama_context_default_params (160 bytes), called through 0.3.36's llama.h, return identical bytes
            "node-llama-cpp-linux-x64-vulkan-3.22.1.tgz",
                    "e10577190fc4bd1649d3b655588e5c7a85fc6b6dbf7136fee596cbe9e25521e7");

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
        Properties build = new Properties();
        try (Reader in = Files.newBufferedReader(record)) {
            build.load(in);
        } catch (IOException e) {
            throw new IOException(
                    "no " + record + " (" + e.getClass().getSimpleName() + "): this is not a library"
                            + " bin/build-llama built, whose struct layouts are known",
                    e);
        }
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

    /**
     * The folder the script builds into: {@code $OAM_CACHE_DIR}, else {@code ${XDG_CACHE_HOME:-~/.cache}/oam}, then
     * {@code llama-cpp}.
     */
    static Path folder(UnaryOperator<@Nullable String> environment, String home) {
        String cache = environment.apply(CACHE_VARIABLE);
        if (cache == null || cache.isBlank()) {
            String xdg = environment.apply("XDG_CACHE_HOME");
            cache = (xdg == null || xdg.isBlank() ? Path.of(home, ".cache") : Path.of(xdg.strip()))
                    .resolve("oam")
                    .toString();
        }
        return Path.of(cache.strip()).resolve("llama-cpp");
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
     * when {@code OAM_LLAMA_GPU_LAYERS} is set to other than 0, else the CPU build first.
     */
    public static @Nullable Build preferred(UnaryOperator<@Nullable String> environment, String home) {
        String layers = environment.apply(LlamaBackend.GPU_LAYERS_VARIABLE);
        boolean gpuFirst =
                layers != null && !layers.isBlank() && !layers.strip().equals("0");
        List<Build> builds = found(folder(environment, home), gpuFirst);
        return builds.isEmpty() ? null : builds.get(0);
    }

    private static int rank(List<String> order, String backend) {
        int at = order.indexOf(backend);
        return at < 0 ? order.size() : at;
    }
}
