package dev.oam.model.llama.engine;

import dev.oam.core.model.pull.ModelCache;
import dev.oam.core.model.pull.NpmRuntime;
import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Objects;
import java.util.Properties;
import org.jspecify.annotations.Nullable;

/**
 * The CUDA backend {@code oam pull runtime:cuda} placed in the model cache ({@code runtime/cuda-<platform>-<version>/},
 * {@link NpmRuntime}): node-llama-cpp's {@code libggml-cuda} module, loaded into the registry of the release's
 * llama.cpp (a modular build of the same node-llama-cpp release) before its other modules. Checked before anything
 * loads it: the record names a pinned package for this platform, of the same release as the llama.cpp it joins, and
 * every file matches its SHA-256 ({@link NativeFiles}).
 */
public final class CudaRuntime {
    private CudaRuntime() {}

    /** A checked runtime: the module to load and the system libraries it needs (named when absent). */
    public record Checked(Path folder, Path module, String npmPackage, List<String> needs) {}

    /** The folder of this platform's CUDA runtime in the host's model cache, or null when none was pulled. */
    public static @Nullable Path pulled(NativeSettings natives) {
        return ModelCache.at(natives.modelCache()).runtime("cuda");
    }

    /**
     * Checks the runtime in {@code folder} against the pins, for the llama.cpp {@code build} (not yet its files:
     * {@link #checkWithFiles}).
     *
     * @param platform this JVM's platform ({@link NpmRuntime#platform})
     * @throws IOException why it cannot be used (for the warning)
     */
    public static Checked check(Path folder, LlamaBuilds.Build build, @Nullable String platform) throws IOException {
        Properties record = new Properties();
        try (Reader in = Files.newBufferedReader(folder.resolve(LlamaBuilds.RECORD))) {
            record.load(in);
        }
        String source = record.getProperty("source", "");
        String sha256 = record.getProperty("sha256", "");
        NpmRuntime pin = null;
        for (NpmRuntime known : NpmRuntime.KNOWN) {
            if (known.backend().equals("cuda")
                    && Objects.equals(known.platform(), platform)
                    && known.tarballName().equals(source)
                    && known.sha256().equals(sha256)) {
                pin = known;
            }
        }
        if (pin == null) {
            throw new IOException("its record names " + source + " (" + sha256 + "), not the CUDA package this build"
                    + " pins for " + platform + " (oam pull runtime:cuda fetches that one)");
        }
        String bundle = build.source();
        if (!bundle.startsWith("node-llama-cpp-") || !bundle.endsWith("-" + pin.version() + ".tgz")) {
            throw new IOException("it is node-llama-cpp " + pin.version() + "'s CUDA module, which loads only into that"
                    + " release's llama.cpp, and this process runs " + build.describe());
        }
        Path module = folder.resolve(pin.library());
        if (!Files.isRegularFile(module)) {
            throw new IOException(pin.library() + " is missing");
        }
        return new Checked(folder, module, pin.npmPackage() + "@" + pin.version(), pin.needs());
    }

    /**
     * {@link #check}, then every file against its SHA-256 ({@link NativeFiles#check}: about half a second for the Linux
     * module's 159 MB, once per process), which the engine does after probing the libraries the module needs.
     */
    public static Checked checkWithFiles(Path folder, LlamaBuilds.Build build, @Nullable String platform)
            throws IOException {
        Checked checked = check(folder, build, platform);
        NativeFiles.check(folder);
        return checked;
    }
}
