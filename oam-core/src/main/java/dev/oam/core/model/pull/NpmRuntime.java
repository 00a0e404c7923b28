package dev.oam.core.model.pull;

import java.util.List;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A llama.cpp GPU backend fetched on demand ({@code oam pull runtime:BACKEND}, the protocol's {@code model/pull}): one
 * backend module of node-llama-cpp's prebuilt packages on npm (MIT), from the same node-llama-cpp release as the
 * llama.cpp the release archive carries in {@code lib/llama}, so the module loads into that llama.cpp's backend
 * registry ({@code ggml_backend_load}). Not bundled because of its size (docs/MODELS.md, "Which path runs where").
 *
 * @param backend the name after {@code runtime:} ({@code cuda})
 * @param platform the platform it is for, as the release names them ({@code linux-x86_64}, {@code windows-x86_64})
 * @param npmPackage the npm package ({@code @node-llama-cpp/linux-x64-cuda})
 * @param version the package's version (the node-llama-cpp release)
 * @param sha256 the npm tarball's pinned SHA-256
 * @param size the npm tarball's size in bytes
 * @param members the files taken from the tarball, as paths inside it; the first is the module the engine loads
 * @param needs the libraries the module needs from the system (the GPU's driver and vendor runtime), named when absent
 */
public record NpmRuntime(
        String backend,
        String platform,
        String npmPackage,
        String version,
        String sha256,
        long size,
        List<String> members,
        List<String> needs) {

    /** The npm registry's address (default {@code https://registry.npmjs.org}), for {@code runtime:} pulls. */
    public static final String REGISTRY_VARIABLE = "OAM_NPM_REGISTRY";

    /**
     * The runtimes this build can fetch: node-llama-cpp's CUDA module for Linux x86-64 (3.22.1, the release of the
     * Linux archive's llama.cpp; its libggml-base.so is byte for byte the bundled one) and Windows x86-64 (3.21.1, the
     * Windows archive's). Both are built against CUDA 13 and need NVIDIA's driver and CUDA 13 runtime (cudart, cuBLAS).
     */
    public static final List<NpmRuntime> KNOWN = List.of(
            new NpmRuntime(
                    "cuda",
                    "linux-x86_64",
                    "@node-llama-cpp/linux-x64-cuda",
                    "3.22.1",
                    "d6cd3ff39a43b024816952e0bc6452d6711608d26256ff6eb0fe8cf7ff55bb2c",
                    142_898_030L,
                    List.of("package/bins/linux-x64-cuda/libggml-cuda.so", "package/LICENSE"),
                    List.of("libcuda.so.1", "libcudart.so.13", "libcublas.so.13")),
            new NpmRuntime(
                    "cuda",
                    "windows-x86_64",
                    "@node-llama-cpp/win-x64-cuda",
                    "3.21.1",
                    "7824fb3d391d32194f3ee537d70ab3e334030cca71a85b855c368f36b251dc83",
                    138_542_727L,
                    List.of("package/bins/win-x64-cuda/ggml-cuda.dll", "package/LICENSE"),
                    List.of("nvcuda.dll", "cublas64_13.dll")));

    public NpmRuntime {
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(platform, "platform");
        Objects.requireNonNull(npmPackage, "npmPackage");
        Objects.requireNonNull(version, "version");
        if (!NameRules.SEGMENT.matcher(backend).matches()
                || !NameRules.SEGMENT.matcher(platform).matches()) {
            throw new IllegalArgumentException("backend and platform must be letters, digits, '_', '-' or '.'");
        }
        if (!npmPackage.matches("(@[a-z0-9._-]+/)?[a-z0-9._-]+") || !version.matches("[0-9A-Za-z.+-]+")) {
            throw new IllegalArgumentException("not an npm package and version: " + npmPackage + "@" + version);
        }
        if (!sha256.matches("[0-9a-f]{64}")) {
            throw new IllegalArgumentException("sha256 must be 64 lower-case hex digits");
        }
        if (size <= 0) {
            throw new IllegalArgumentException("size must be positive");
        }
        members = List.copyOf(members);
        needs = List.copyOf(needs);
        if (members.isEmpty()) {
            throw new IllegalArgumentException("members must not be empty");
        }
        for (String member : members) {
            String base = fileName(member);
            if (!NameRules.FILE_SEGMENT.matcher(base).matches() || base.startsWith(".")) {
                throw new IllegalArgumentException("the member " + member + " has no plain file name");
            }
        }
    }

    /** {@code runtime:BACKEND}. */
    public ModelName.Runtime name() {
        return new ModelName.Runtime(backend);
    }

    /** The file name the module has in the runtime's folder (the first member's). */
    public String library() {
        return fileName(members.get(0));
    }

    /**
     * The npm tarball's file name, as {@code npm pack} writes it ({@code node-llama-cpp-linux-x64-cuda-3.22.1.tgz}).
     */
    public String tarballName() {
        return npmPackage.replace("@", "").replace('/', '-') + "-" + version + ".tgz";
    }

    /** The tarball's address on {@code registry}: {@code REGISTRY/@scope/name/-/name-VERSION.tgz}, npm's layout. */
    public String tarballPath() {
        String bare = npmPackage.substring(npmPackage.indexOf('/') + 1);
        return "/" + npmPackage + "/-/" + bare + "-" + version + ".tgz";
    }

    /** The folder name under the cache's {@code runtime/}: {@code cuda-linux-x86_64-3.22.1}. */
    public String folderName() {
        return backend + "-" + platform + "-" + version;
    }

    static String fileName(String member) {
        return member.substring(member.lastIndexOf('/') + 1);
    }

    /** The runtime of {@code backend} for {@code platform} among {@code runtimes}, or null. */
    public static @Nullable NpmRuntime find(List<NpmRuntime> runtimes, String backend, @Nullable String platform) {
        for (NpmRuntime runtime : runtimes) {
            if (runtime.backend().equals(backend) && runtime.platform().equals(platform)) {
                return runtime;
            }
        }
        return null;
    }

    /**
     * {@code linux-x86_64}, {@code linux-aarch64}, {@code windows-x86_64}, {@code macos-arm64}, {@code macos-x86_64}
     * for the JVM's {@code os.name} and {@code os.arch}, or null.
     */
    public static @Nullable String platform(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        String family = os.startsWith("linux")
                ? "linux"
                : os.startsWith("windows")
                        ? "windows"
                        : os.startsWith("mac") || os.startsWith("darwin") ? "macos" : null;
        String arch = switch (osArch.toLowerCase(Locale.ROOT)) {
            case "amd64", "x86_64", "x64" -> "x86_64";
            case "aarch64", "arm64" -> "macos".equals(family) ? "arm64" : "aarch64";
            default -> null;
        };
        return family == null || arch == null ? null : family + "-" + arch;
    }
}
