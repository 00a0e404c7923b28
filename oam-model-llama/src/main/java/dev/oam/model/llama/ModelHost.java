package dev.oam.model.llama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelParameterException;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.Tokens;
import dev.oam.core.transcript.TranscriptEntry;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The process model host: llama.cpp for one model file runs in a child JVM ({@link ModelHostMain}), so that a native
 * abort costs that model, not the host process (a game with the C ABI inside it, a Java game server).
 *
 * <p>The parent speaks to the child over the child's stdin and stdout, one compact JSON object per line. Parent to
 * child: {@code start} (the host defaults), {@code model} (a model value or the system model; answered {@code ready}
 * with its context size and warnings, or {@code failed}), {@code respond} (a {@link ModelRequest}; answered by any
 * number of {@code text}/{@code reset}/{@code partial} deltas, then {@code response} or {@code error}), {@code cancel},
 * {@code count} and {@code availability} (answered {@code answer}). Every message but {@code start} carries an
 * {@code id} its answers repeat. The child's stderr is copied to this process's stderr (its last lines are kept for the
 * error message).
 *
 * <p>When the child ends unexpectedly, every request in flight on it fails with {@code -32001 model_unavailable}
 * ({@code data.reason: "model_host_exited"}, {@code data.exitCode}), naming the exit code and the child's last stderr
 * line (ggml's {@code GGML_ASSERT} line for an abort). A child that had loaded its model is started again by the next
 * request; one that ended before its model ever answered (it crashed loading the file) leaves the model unavailable
 * until this process restarts, as an in-process load failure does.
 */
public final class ModelHost implements AutoCloseable {
    private static final int STDERR_LINES = 80; // an abort's line, then the JVM's banner (about 20 lines)

    private final Path file;
    private final LlamaSettings defaults;
    private final List<String> languages;
    private final AtomicLong ids = new AtomicLong();
    private final Object lock = new Object();
    private @Nullable Child child; // guarded by lock
    private @Nullable AgentException gone; // guarded by lock: set for good when the child died before its model loaded
    private boolean closed; // guarded by lock

    public ModelHost(Path file, LlamaSettings defaults, List<String> languages) {
        this.file = file;
        this.defaults = defaults;
        this.languages = List.copyOf(languages);
    }

    /**
     * A client's model value (without {@code host}), registered in the child at once so that its errors surface here.
     */
    public LanguageModel model(ObjectNode spec, String where) throws ModelParameterException {
        ObjectNode registration = Json.object().put("op", "model").put("where", where);
        registration.set("spec", spec);
        return register(registration);
    }

    public LanguageModel systemModel(String location, @Nullable String name) throws ModelParameterException {
        return register(
                Json.object().put("op", "model").put("location", location).put("name", name));
    }

    private LanguageModel register(ObjectNode registration) throws ModelParameterException {
        ProcessModel model = new ProcessModel(registration);
        try {
            model.ready(current());
        } catch (AgentException e) {
            JsonNode member = e.data().get("member");
            if (member != null) { // the child's backend refused the value: the same -32602 as in-process
                String problem = e.data().path("problem").asText();
                throw e.data().path("missing").asBoolean()
                        ? ModelParameterException.missing(member.asText(), problem)
                        : ModelParameterException.invalid(member.asText(), problem);
            }
            throw ModelParameterException.invalid(
                    registration.has("spec") ? registration.get("where").asText() + ".path" : "model",
                    ": " + e.getMessage());
        }
        return model;
    }

    /** The running child, started when there is none (after a crash of a loaded one, or the first time). */
    private Child current() throws AgentException {
        synchronized (lock) {
            if (closed) {
                throw new AgentException(ErrorCode.MODEL_UNAVAILABLE, "The llama backend is closed.");
            }
            if (gone != null) {
                throw new AgentException(
                        gone.code(), gone.getMessage(), gone.data().deepCopy());
            }
            if (child == null || child.death != null) {
                child = start();
            }
            return child;
        }
    }

    private Child start() throws AgentException {
        List<String> command = new ArrayList<>();
        LlamaSettings.ChildJvm jvm = defaults.child();
        command.add(Path.of(jvm.javaHome(), "bin", jvm.windows() ? "java.exe" : "java")
                .toString());
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-XX:ErrorFile=" + crashFolder(jvm).resolve("hs_err_pid%p.log"));
        command.add("-Doam.host.log=" + Log.level().name().toLowerCase(java.util.Locale.ROOT));
        command.add("-cp");
        command.add(jvm.classPath());
        command.add(ModelHostMain.class.getName());
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().putIfAbsent("GGML_NO_BACKTRACE", "1");
        try {
            Process process = builder.start();
            Child started = new Child(process);
            started.send(Json.object()
                    .put("op", "start")
                    .<ObjectNode>set(
                            "defaults",
                            Json.mapper()
                                    .createArrayNode()
                                    .add(defaults.slots())
                                    .add(defaults.threads())
                                    .add(defaults.threadsBatch())
                                    .add(defaults.contextSize())
                                    .add(defaults.gpuLayers()))
                    .set("languages", Json.strings(languages)));
            Log.debug("model host for " + file + ": process " + process.pid());
            return started;
        } catch (IOException e) {
            throw new AgentException(
                    ErrorCode.MODEL_UNAVAILABLE,
                    "Cannot start the model host process for " + file + ": " + e.getMessage());
        }
    }

    /**
     * Where the child's crash report goes: the system property {@code oam.crashDir} when set (the builds' tests point
     * it into {@code target/}, so a test's deliberate crash never lands in the user's cache), else the private folder
     * bin/oam uses ({@code ${XDG_CACHE_HOME:-~/.cache}/oam}).
     */
    static Path crashFolder(LlamaSettings.ChildJvm jvm) {
        String configured = jvm.crashDir();
        Path folder = configured != null ? Path.of(configured) : jvm.cacheHome();
        try {
            Files.createDirectories(folder);
        } catch (IOException e) {
            return jvm.tmpDir();
        }
        return folder.toAbsolutePath();
    }

    /** The pid of the running child, or -1 (for tests). */
    public long pid() {
        synchronized (lock) {
            return child == null || child.death != null ? -1 : child.process.pid();
        }
    }

    /** Ends the child: closes its stdin (it cancels what runs and exits), then kills it if it lingers. */
    @Override
    public void close() {
        Child last;
        synchronized (lock) {
            closed = true;
            last = child;
            child = null;
        }
        if (last != null) {
            last.stop();
        }
    }

    /** One child JVM: its pipes, the requests waiting for answers, and how it ended. */
    private final class Child {
        final Process process;
        final OutputStream stdin;
        final Map<Long, BlockingQueue<JsonNode>> waiting = new ConcurrentHashMap<>();
        final Deque<String> lastStderr = new ArrayDeque<>();
        volatile @Nullable AgentException death;
        volatile boolean loaded; // the model answered once: a later crash restarts the child
        volatile boolean stopping;
        private final Thread stderrCopier;

        Child(Process process) {
            this.process = process;
            this.stdin = process.getOutputStream();
            this.stderrCopier = Thread.ofPlatform()
                    .daemon()
                    .name("oam-host-err-" + process.pid())
                    .start(this::copyStderr);
            Thread.ofPlatform().daemon().name("oam-host-out-" + process.pid()).start(this::read);
        }

        void send(ObjectNode message) throws AgentException {
            AgentException dead = death;
            if (dead != null) {
                throw dead;
            }
            byte[] bytes = HostWire.line(message);
            synchronized (stdin) {
                try {
                    stdin.write(bytes);
                    stdin.flush();
                } catch (IOException e) {
                    // the child is gone; read() sees its end and fails what waits
                }
            }
        }

        /** Sends {@code message} under a new id; its answers arrive on the returned queue. */
        BlockingQueue<JsonNode> open(ObjectNode message) throws AgentException {
            long id = ids.incrementAndGet();
            BlockingQueue<JsonNode> queue = new LinkedBlockingQueue<>();
            waiting.put(id, queue);
            message.put("id", id);
            if (death != null) {
                waiting.remove(id);
                throw death;
            }
            send(message);
            return queue;
        }

        /** The next answer to a request; the child's death is an answer too. */
        JsonNode next(BlockingQueue<JsonNode> queue) throws AgentException {
            JsonNode answer;
            try {
                answer = queue.take();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw AgentException.cancelled();
            }
            if (answer.path("op").asText().equals("exited")) {
                throw Objects.requireNonNullElse(
                        death, new AgentException(ErrorCode.MODEL_UNAVAILABLE, "The model host exited."));
            }
            return answer;
        }

        void done(JsonNode message) {
            waiting.remove(message.path("id").asLong());
        }

        private void read() {
            try (BufferedReader reader =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    JsonNode message;
                    try {
                        message = Json.parse(line);
                    } catch (IOException e) {
                        Log.warning("model host: not a protocol line: " + line);
                        continue;
                    }
                    BlockingQueue<JsonNode> queue =
                            waiting.get(message.path("id").asLong());
                    if (queue != null) {
                        queue.add(message);
                    }
                }
            } catch (IOException e) {
                // the pipe broke: the child is gone
            }
            int code;
            try {
                code = process.waitFor();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                code = -1;
            }
            died(code);
        }

        private void died(int code) {
            try {
                stderrCopier.join(5_000); // its last lines say why; the pipe ends with the process
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            String last = "";
            synchronized (lastStderr) {
                for (String marker : List.of("GGML_ASSERT(", "terminate called", "oam: native code aborted")) {
                    for (String line : lastStderr) {
                        if (last.isEmpty() && line.contains(marker)) {
                            last = line;
                        }
                    }
                }
                if (last.isEmpty() && !lastStderr.isEmpty() && code != 137) {
                    last = lastStderr.peekLast();
                }
            }
            String what = code == 134
                    ? " (native code aborted)"
                    : code == 137 ? " (killed)" : code == 139 ? " (crashed)" : "";
            Path report = crashFolder(defaults.child()).resolve("hs_err_pid" + process.pid() + ".log");
            if (Files.exists(report)) {
                last = last.strip() + (last.isBlank() ? "" : "; ") + "crash report " + report;
            }
            ObjectNode data = Json.object().put("reason", "model_host_exited").put("exitCode", code);
            if (Files.exists(report)) {
                data.put("crashReport", report.toString());
            }
            boolean forGood = !loaded;
            String message = "The model host process for " + file + " ended with exit code " + code + what
                    + (last.isBlank() ? "" : ": " + last.strip()) + ". The request was lost. "
                    + (forGood
                            ? "It ended before the model answered once, so the model stays unavailable "
                                    + "until the bridge restarts."
                            : "The next request starts a new model host.");
            AgentException e = new AgentException(ErrorCode.MODEL_UNAVAILABLE, message, data);
            death = e;
            if (!stopping) {
                Log.warning(message);
                synchronized (lock) {
                    if (forGood && gone == null && child == this) {
                        gone = e;
                    }
                }
            }
            JsonNode exited = Json.object().put("op", "exited");
            waiting.values().forEach(q -> q.add(exited));
        }

        private void copyStderr() {
            try (BufferedReader reader =
                    new BufferedReader(new InputStreamReader(process.getErrorStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    System.err.println(line);
                    synchronized (lastStderr) {
                        lastStderr.addLast(line);
                        if (lastStderr.size() > STDERR_LINES) {
                            lastStderr.removeFirst();
                        }
                    }
                }
            } catch (IOException e) {
                // the child is gone
            }
        }

        void stop() {
            stopping = true;
            try {
                stdin.close();
            } catch (IOException e) {
                // already closed
            }
            try {
                if (!process.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                process.destroyForcibly();
            }
        }
    }

    /** A {@link LanguageModel} whose calls go to the child; registers itself again in a restarted child. */
    private final class ProcessModel implements LanguageModel {
        private final ObjectNode registration;
        private final Object registered = new Object();
        private @Nullable Child registeredIn; // guarded by registered
        private long modelId; // guarded by registered
        private volatile int contextSize = DEFAULT_CONTEXT_SIZE;
        private volatile boolean retries = true;
        private volatile List<String> warnings = List.of();

        ProcessModel(ObjectNode registration) {
            this.registration = registration;
        }

        /** The state lives in the child, which the save protocol does not reach (issue 40): said, never silent. */
        @Override
        public dev.oam.core.model.ModelState.Saved saveState(
                dev.oam.core.model.@Nullable ModelRequest lastStep, java.nio.file.Path file) {
            return dev.oam.core.model.ModelState.notSaved(
                    "The model's state cannot be saved while the model runs in a child process (host \"process\"):"
                            + " run it in-process to save it; the conversation is read again after a load.");
        }

        /** Registers this model in {@code in} (once per child); returns its id there. */
        long ready(Child in) throws AgentException {
            synchronized (registered) {
                if (registeredIn == in) {
                    return modelId;
                }
                BlockingQueue<JsonNode> queue = in.open(registration.deepCopy());
                JsonNode answer = in.next(queue);
                in.done(answer);
                if (!answer.path("op").asText().equals("ready")) {
                    ObjectNode data = Json.object();
                    String problem = answer.path("message").asText();
                    if (answer.has("member")) {
                        data.put("member", answer.path("member").asText())
                                .put("problem", answer.path("problem").asText())
                                .put("missing", answer.path("missing").asBoolean());
                        problem = "'" + answer.path("member").asText() + "' "
                                + answer.path("problem").asText();
                    }
                    throw new AgentException(
                            ErrorCode.MODEL_UNAVAILABLE, "The model host could not open the model: " + problem, data);
                }
                contextSize = answer.path("contextSize").intValue();
                retries = answer.path("retries").booleanValue();
                List<String> list = new ArrayList<>();
                answer.path("warnings").forEach(w -> list.add(w.asText()));
                warnings = List.copyOf(list);
                registeredIn = in;
                modelId = answer.path("id").asLong();
                return modelId;
            }
        }

        @Override
        public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
                throws AgentException {
            token.check();
            Child in = current();
            long model = ready(in);
            ObjectNode message = Json.object().put("op", "respond").put("model", model);
            message.set("request", HostWire.request(request));
            BlockingQueue<JsonNode> queue = in.open(message);
            long id = message.get("id").asLong();
            Runnable cancel = () -> {
                try {
                    in.send(Json.object().put("op", "cancel").put("id", id));
                } catch (AgentException e) {
                    // the child is gone: the request fails with that
                }
            };
            token.onCancel(cancel);
            try {
                while (true) {
                    JsonNode answer = in.next(queue);
                    switch (answer.path("op").asText()) {
                        case "text" -> listener.onText(answer.path("text").asText());
                        case "reset" -> listener.onReset(answer.path("text").asText());
                        case "partial" -> listener.onPartial(answer.get("value"));
                        case "response" -> {
                            in.loaded = true;
                            return HostWire.response(answer.get("response"));
                        }
                        default -> {
                            in.loaded = true;
                            throw HostWire.error(answer.get("error"));
                        }
                    }
                }
            } finally {
                token.removeListener(cancel);
                in.waiting.remove(id);
            }
        }

        private JsonNode query(ObjectNode message) throws AgentException {
            Child in = current();
            message.put("model", ready(in));
            BlockingQueue<JsonNode> queue = in.open(message);
            JsonNode answer = in.next(queue);
            in.done(answer);
            if (!answer.path("op").asText().equals("answer")) {
                throw new AgentException(
                        ErrorCode.GENERATION_FAILED, answer.path("message").asText());
            }
            return answer.get("value");
        }

        @Override
        public ModelAvailability availability() {
            try {
                ModelAvailability availability =
                        HostWire.availability(query(Json.object().put("op", "availability")));
                if (availability.available()) {
                    synchronized (lock) {
                        if (child != null) {
                            child.loaded = true;
                        }
                    }
                }
                return availability;
            } catch (AgentException e) {
                return ModelAvailability.unavailable("model_not_ready", e.getMessage());
            }
        }

        @Override
        public int contextSize() {
            return contextSize;
        }

        @Override
        public int countTokens(String text) {
            try {
                return query(Json.object().put("op", "count").put("text", text)).intValue();
            } catch (AgentException e) {
                return Tokens.estimate(text);
            }
        }

        @Override
        public int countTokens(TranscriptEntry entry) {
            try {
                ObjectNode message = Json.object().put("op", "count");
                message.set("entry", HostWire.entry(entry));
                return query(message).intValue();
            } catch (AgentException e) {
                return Tokens.estimate(entry);
            }
        }

        @Override
        public boolean retriesInvalidOutput() {
            return retries;
        }

        @Override
        public List<String> warnings() {
            return warnings;
        }
    }
}
