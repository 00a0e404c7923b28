package dev.oam.model.openai;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Environment;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.ModelParameterException;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A {@code llama-server} the bridge starts and supervises: serves {@code {"type": "llama-server", "path": "model.gguf",
 * "binary"?: …}}. The user installs llama.cpp's server (a GPU build from their package manager, say); the bridge starts
 * it on a free loopback port for the file, waits for {@code /health}, and drives it through the OpenAI backend
 * ({@link OpenAIModel}) with the file's own chat template ({@code --jinja}), or Gemma's turns for a Gemma file without
 * one, and a context of {@code contextSize} tokens per slot. A server that dies is started again for the next turn;
 * {@link #close()} stops every server. Sessions with the same file and settings share one server.
 *
 * <p>Only an executable called {@code llama-server} is run, and only after {@code --version} answered as llama.cpp's
 * does ({@link #checkBinary}), so a client cannot make the bridge start another program.
 */
public final class LlamaServerBackend implements ModelBackend {
    public static final String TYPE = SupervisedServer.TYPE;
    /** What {@code --model} starts with to name a file for a supervised llama-server. */
    public static final String SYSTEM_PREFIX = "llama-server:";

    private static final Duration VERSION_WAIT = Duration.ofSeconds(30);

    private final Environment environment;
    private final OpenAIBackend openai;
    private final Object lock = new Object();
    private final Map<String, SupervisedServer> servers = new HashMap<>(); // guarded by lock
    private final Map<Path, String> versions = new HashMap<>(); // guarded by lock: binary -> its --version line
    private @Nullable HttpClient http; // guarded by lock
    private @Nullable Path gemmaTurns; // guarded by lock
    private boolean closed; // guarded by lock

    /** Reads {@code OAM_LLAMA_SERVER} and {@code PATH} from the process environment. */
    public LlamaServerBackend() {
        this(Environment.system());
    }

    /** Reads {@code OAM_LLAMA_SERVER} and {@code PATH} through {@code environment}. */
    public LlamaServerBackend(Environment environment) {
        this.environment = environment;
        this.openai = new OpenAIBackend(environment);
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public LanguageModel create(ObjectNode spec, String path) throws ModelParameterException {
        return create(spec, path, environment);
    }

    private LanguageModel create(ObjectNode spec, String path, Environment environment) throws ModelParameterException {
        ServerSettings settings = ServerSettings.parse(spec, path, environment);
        checkBinary(settings.binary(), path);
        List<String> warnings = new ArrayList<>();
        SupervisedServer server;
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the llama-server backend is closed");
            }
            if (http == null) {
                http = HttpClient.newBuilder()
                        .connectTimeout(Duration.ofSeconds(5))
                        .build();
            }
            server = servers.get(settings.key());
            if (server == null) {
                server = new SupervisedServer(settings, alias(settings.model()), template(settings, path), http);
                servers.put(settings.key(), server);
            }
        }
        if (!settings.header().chatTemplate()) {
            warnings.add(settings.model().getFileName() + " has no chat template; "
                    + (isGemma(settings)
                            ? "the llama-server is given Gemma's turn format (<start_of_turn>)."
                            : "the llama-server uses its default (ChatML), which may not be the "
                                    + "format this model was trained on."));
        }
        server.startSoon();
        SupervisedServer shared = server;
        return new SupervisedModel(
                server,
                baseUrl -> openai.model(new Settings(
                        baseUrl,
                        shared.alias(),
                        Settings.DEFAULT_KEY_ENV,
                        Secret.NONE,
                        Map.of(),
                        settings.toolCallMode(),
                        settings.contextSize(),
                        settings.timeout())),
                settings.contextSize(),
                warnings);
    }

    /**
     * {@code --model llama-server:PATH.gguf} ({@code OAM_MODEL}, the C library's settings): the system model on a
     * supervised server.
     */
    @Override
    public boolean servesSystemModel(String location) {
        return location.strip().regionMatches(true, 0, SYSTEM_PREFIX, 0, SYSTEM_PREFIX.length());
    }

    @Override
    public LanguageModel systemModel(String location, @Nullable String name) throws ModelParameterException {
        return systemModel(location, name, environment);
    }

    /**
     * The file after {@value #SYSTEM_PREFIX}, on the llama-server {@code OAM_LLAMA_SERVER} names (else the first on the
     * host's {@code PATH}), with {@code OAM_LLAMA_GPU_LAYERS} layers offloaded when it is set.
     */
    @Override
    public LanguageModel systemModel(String location, @Nullable String name, Environment hostEnvironment)
            throws ModelParameterException {
        com.fasterxml.jackson.databind.node.ObjectNode spec = dev.oam.core.json.Json.object();
        spec.put("type", TYPE);
        spec.put("path", location.strip().substring(SYSTEM_PREFIX.length()));
        // the one parser of the host's GPU layers: a bad value is the same warning, and the default, as in-process
        Integer layers = dev.oam.core.model.ModelSpec.Llama.hostGpuLayers(hostEnvironment);
        if (layers != null) {
            spec.put("gpuLayers", layers.intValue());
        }
        return create(spec, "--model", hostEnvironment);
    }

    /** Runs {@code binary --version} once per file: llama.cpp's programs print {@code version: N (commit)}. */
    private void checkBinary(Path binary, String path) throws ModelParameterException {
        synchronized (lock) {
            if (versions.containsKey(binary)) {
                return;
            }
        }
        String output;
        int status;
        Path log = null;
        try {
            // Output to a file, not a pipe: a program that never exits nor closes its output cannot block the check.
            log = Files.createTempFile("oam-llama-server-version", ".txt");
            Process process = new ProcessBuilder(binary.toString(), "--version")
                    .redirectErrorStream(true)
                    .redirectOutput(log.toFile())
                    .start();
            process.getOutputStream().close();
            if (!process.waitFor(VERSION_WAIT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw ModelParameterException.invalid(
                        path + ".binary",
                        binary + " --version did not finish within " + VERSION_WAIT.toSeconds()
                                + " s; it is not a working llama-server.");
            }
            status = process.exitValue();
            byte[] bytes;
            try (InputStream in = Files.newInputStream(log)) {
                bytes = in.readNBytes(16 * 1024);
            }
            output = new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw ModelParameterException.invalid(path + ".binary", binary + " could not be run: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ModelParameterException.invalid(path + ".binary", "the check of " + binary + " was interrupted.");
        } finally {
            if (log != null) {
                try {
                    Files.deleteIfExists(log);
                } catch (IOException e) {
                    // a temporary file left behind
                }
            }
        }
        String version = output.lines()
                .filter(line -> line.startsWith("version: "))
                .findFirst()
                .orElse(null);
        if (status != 0 || version == null) {
            String shown = output.strip();
            throw ModelParameterException.invalid(
                    path + ".binary",
                    binary + " is not llama.cpp's llama-server: '--version' "
                            + (status != 0 ? "exited with status " + status : "printed no 'version: …' line")
                            + (shown.isEmpty()
                                    ? "."
                                    : " (" + (shown.length() > 200 ? shown.substring(0, 200) + "…" : shown) + ")."));
        }
        dev.oam.core.Log.info(binary + ": " + version.strip());
        synchronized (lock) {
            versions.put(binary, version.strip());
        }
    }

    private static boolean isGemma(ServerSettings settings) {
        return settings.header().architecture().toLowerCase(Locale.ROOT).startsWith("gemma");
    }

    /** Gemma's turns as a Jinja file for a Gemma file without a template; null when the file's own is used. */
    private @Nullable Path template(ServerSettings settings, String path) throws ModelParameterException {
        if (settings.header().chatTemplate() || !isGemma(settings)) {
            return null;
        }
        if (gemmaTurns != null) { // guarded by lock: called with it held
            return gemmaTurns;
        }
        try (InputStream in = LlamaServerBackend.class.getResourceAsStream("gemma-turns.jinja")) {
            if (in == null) {
                throw new IllegalStateException("gemma-turns.jinja is missing from oam-model-openai");
            }
            Path file = Files.createTempFile("oam-gemma-turns", ".jinja");
            Files.write(file, in.readAllBytes());
            file.toFile().deleteOnExit();
            gemmaTurns = file;
            return file;
        } catch (IOException e) {
            throw ModelParameterException.invalid(
                    path, "the Gemma turn template could not be written: " + e.getMessage());
        }
    }

    private static String alias(Path model) {
        String name = model.getFileName().toString();
        return name.toLowerCase(Locale.ROOT).endsWith(".gguf") ? name.substring(0, name.length() - 5) : name;
    }

    /** Every server this backend started, for tests. */
    List<SupervisedServer> servers() {
        synchronized (lock) {
            return List.copyOf(servers.values());
        }
    }

    /** Stops every server and the OpenAI backend under them. */
    @Override
    public void close() {
        List<SupervisedServer> stop;
        synchronized (lock) {
            closed = true;
            stop = List.copyOf(servers.values());
            servers.clear();
        }
        stop.forEach(SupervisedServer::close);
        openai.close();
    }
}
