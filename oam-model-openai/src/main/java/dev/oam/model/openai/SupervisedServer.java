package dev.oam.model.openai;

import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One {@code llama-server} child process serving one GGUF file on a free loopback port, shared by every session whose
 * settings have the same {@link ServerSettings#key()}. It is started on first use, counted ready when {@code /health}
 * answers 200, started again when it has died (the turn that was running fails, the next one starts it), and stopped by
 * {@link #close()} (SIGTERM, then SIGKILL) or, when the JVM exits without closing it, by a shutdown hook.
 *
 * <p>Threads: a start runs on its own virtual thread ({@code oam-llama-server-start}) and callers wait on its future;
 * each process has a platform daemon thread reading its output ({@code oam-llama-server-log}), which keeps the last
 * lines for error messages and logs them at debug level (never on stdout). State is guarded by {@code lock}.
 */
final class SupervisedServer {
    static final String TYPE = "llama-server";
    private static final int TAIL_LINES = 200;
    private static final Duration HEALTH_REQUEST = Duration.ofSeconds(5);
    private static final Duration STOP_WAIT = Duration.ofSeconds(10);
    /**
     * How long a failed request waits for the process to exit before it is counted alive (a dying server first drops
     * its connections).
     */
    private static final Duration EXIT_WAIT = Duration.ofSeconds(5);

    private static final Pattern UNKNOWN_ARCHITECTURE = Pattern.compile("unknown model architecture: '([^']*)'");

    /** A running server. */
    record Running(Process process, int port, Tail log, Thread hook) {
        URI baseUrl() {
            return URI.create("http://127.0.0.1:" + port + "/v1");
        }
    }

    private final ServerSettings settings;
    private final String alias;
    private final @Nullable Path template;
    private final HttpClient http;
    private final Object lock = new Object();
    private @Nullable Running running; // guarded by lock
    private @Nullable CompletableFuture<Running> starting; // guarded by lock
    private @Nullable Process launching; // guarded by lock: the process a start is waiting on
    private @Nullable String failure; // guarded by lock: why the last start failed
    private int starts; // guarded by lock
    private boolean closed; // guarded by lock

    SupervisedServer(ServerSettings settings, String alias, @Nullable Path template, HttpClient http) {
        this.settings = settings;
        this.alias = alias;
        this.template = template;
        this.http = http;
    }

    String alias() {
        return alias;
    }

    /** For messages: "llama-server on model.gguf". */
    String title() {
        return "llama-server on " + settings.model().getFileName();
    }

    /** Starts the server in the background unless it runs or is starting (session/create calls this). */
    void startSoon() {
        synchronized (lock) {
            if (!closed && (running == null || !running.process().isAlive())) {
                startLocked();
            }
        }
    }

    /** The running server, started (or started again) first when needed; waits for it, honouring {@code token}. */
    Running ready(CancellationToken token) throws AgentException {
        CompletableFuture<Running> future;
        synchronized (lock) {
            if (closed) {
                throw new AgentException(
                        ErrorCode.MODEL_UNAVAILABLE, "The " + title() + " was stopped with the bridge.");
            }
            if (running != null && running.process().isAlive()) {
                return running;
            }
            if (running != null) {
                Log.warning(title() + " exited (" + exit(running.process()) + "); starting it again");
                forget(running);
            }
            future = startLocked();
        }
        while (true) {
            token.check();
            try {
                return future.get(100, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                // still starting: check the token again
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw AgentException.cancelled();
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                throw new AgentException(
                        ErrorCode.MODEL_UNAVAILABLE,
                        cause == null || cause.getMessage() == null
                                ? title() + " could not be started."
                                : cause.getMessage());
            }
        }
    }

    /**
     * Whether {@code server} died (a failed request's cause); if so, forgets it and starts a new one in the background,
     * and returns the message the failed turn carries.
     */
    @Nullable
    String died(Running server) {
        try {
            server.process().onExit().get(EXIT_WAIT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException e) {
            return null; // alive: the failure was something else
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
        synchronized (lock) {
            if (running == server) {
                forget(server);
                if (!closed) {
                    startLocked();
                }
            }
        }
        String message = title() + " stopped during this turn (" + exit(server.process()) + ")"
                + diagnosis(server.log()) + "; it is being started again, and the next turn uses the new server.";
        Log.warning(message + lastLines(server.log(), 10));
        return message;
    }

    /** What {@code model/availability} says while the server is not running; null once it runs. */
    @Nullable
    String notRunning(boolean[] loading) {
        synchronized (lock) {
            if (closed) {
                return "The " + title() + " was stopped with the bridge.";
            }
            if (running != null && running.process().isAlive()) {
                return null;
            }
            loading[0] = starting != null || failure == null;
            return failure != null && starting == null ? failure : title();
        }
    }

    /** Stops the process (and any start under way); later turns fail. */
    void close() {
        Running stop;
        Process pending;
        synchronized (lock) {
            closed = true;
            stop = running;
            running = null;
            pending = launching;
        }
        if (pending != null) {
            terminate(pending);
        }
        if (stop != null) {
            forget(stop);
        }
    }

    private CompletableFuture<Running> startLocked() {
        if (starting != null) {
            return starting;
        }
        CompletableFuture<Running> future = new CompletableFuture<>();
        starting = future;
        starts++;
        Thread.ofVirtual().name("oam-llama-server-start").start(() -> {
            try {
                Running server = launch();
                boolean stop;
                synchronized (lock) {
                    starting = null;
                    stop = closed;
                    if (!stop) {
                        running = server;
                        failure = null;
                    }
                }
                if (stop) {
                    forget(server); // outside the lock: stopping waits for the process
                    throw new StartFailure("The " + title() + " was stopped with the bridge.");
                }
                future.complete(server);
            } catch (StartFailure | RuntimeException e) {
                synchronized (lock) {
                    starting = null;
                    failure = e.getMessage();
                }
                Log.warning(String.valueOf(e.getMessage()));
                future.completeExceptionally(e);
            }
        });
        return future;
    }

    private Running launch() throws StartFailure {
        for (int attempt = 0; ; attempt++) {
            int port = freePort();
            List<String> command = command(port);
            Log.info("starting " + title() + " on 127.0.0.1:" + port + ": " + String.join(" ", command));
            Process process;
            try {
                ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
                builder.environment().putIfAbsent("GGML_NO_BACKTRACE", "1");
                process = builder.start();
                process.getOutputStream().close();
            } catch (IOException e) {
                throw new StartFailure("Could not start " + settings.binary() + ": " + e.getMessage());
            }
            Tail tail = new Tail();
            Thread.ofPlatform()
                    .daemon()
                    .name("oam-llama-server-log")
                    .start(() -> read(process.getInputStream(), tail, port));
            Thread hook = new Thread(process::destroyForcibly, "oam-llama-server-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            Running server = new Running(process, port, tail, hook);
            synchronized (lock) {
                if (closed) {
                    forget(server);
                    throw new StartFailure("The " + title() + " was stopped with the bridge.");
                }
                launching = process;
            }
            long begun = System.nanoTime();
            try {
                awaitHealthy(server);
                Log.info(title() + " is ready on " + server.baseUrl() + " (pid " + process.pid() + ", "
                        + Duration.ofNanos(System.nanoTime() - begun).toMillis() + " ms)");
                return server;
            } catch (StartFailure e) {
                forget(server);
                if (attempt < 2 && tail.contains("address already in use")) {
                    continue; // another process took the port between probing and binding
                }
                throw e;
            } finally {
                synchronized (lock) {
                    launching = null;
                }
            }
        }
    }

    private List<String> command(int port) {
        List<String> command = new ArrayList<>(List.of(
                settings.binary().toString(),
                "-m",
                settings.model().toString(),
                "--host",
                "127.0.0.1",
                "--port",
                Integer.toString(port),
                "--jinja"));
        if (template != null) {
            command.addAll(List.of("--chat-template-file", template.toString()));
        }
        command.addAll(List.of(
                "-c",
                Long.toString((long) settings.contextSize() * settings.slots()),
                "-np",
                Integer.toString(settings.slots()),
                "--alias",
                alias,
                "--no-webui"));
        if (settings.threads() > 0) {
            command.addAll(List.of("-t", Integer.toString(settings.threads())));
        }
        if (settings.gpuLayers() != null) {
            // -1 (every layer) as the count every llama.cpp version reads as "all"
            command.addAll(List.of("-ngl", Integer.toString(settings.gpuLayers() < 0 ? 999 : settings.gpuLayers())));
        }
        return command;
    }

    private void awaitHealthy(Running server) throws StartFailure {
        long deadline = System.nanoTime() + settings.startTimeout().toNanos();
        URI health = URI.create("http://127.0.0.1:" + server.port() + "/health");
        while (true) {
            synchronized (lock) {
                if (closed) {
                    throw new StartFailure("The " + title() + " was stopped with the bridge.");
                }
            }
            if (!server.process().isAlive()) {
                throw new StartFailure(startFailure(server));
            }
            try {
                HttpResponse<Void> response = http.send(
                        HttpRequest.newBuilder(health)
                                .timeout(HEALTH_REQUEST)
                                .GET()
                                .build(),
                        HttpResponse.BodyHandlers.discarding());
                if (response.statusCode() == 200) {
                    return;
                }
            } catch (IOException e) {
                // not listening yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StartFailure(title() + " was interrupted while starting.");
            }
            if (System.nanoTime() - deadline > 0) {
                throw new StartFailure(title() + " did not answer /health within "
                        + settings.startTimeout().toSeconds() + " s (startTimeoutSeconds), so it was stopped"
                        + lastLines(server.log(), 10));
            }
            try {
                server.process().waitFor(100, TimeUnit.MILLISECONDS); // returns at once when it exits
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StartFailure(title() + " was interrupted while starting.");
            }
        }
    }

    private String startFailure(Running server) {
        try {
            server.process().waitFor(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        server.log().drained(STOP_WAIT);
        return title() + " (" + settings.binary() + ") exited before it was ready (" + exit(server.process()) + ")"
                + diagnosis(server.log()) + "." + lastLines(server.log(), 10);
    }

    /** A reason read from the server's output, or "". */
    private String diagnosis(Tail log) {
        Matcher unknown = UNKNOWN_ARCHITECTURE.matcher(log.text());
        if (unknown.find()) {
            return ": its llama.cpp cannot run the model architecture '" + unknown.group(1) + "' of "
                    + settings.model().getFileName() + "; a newer llama-server (a current llama.cpp release) can";
        }
        return "";
    }

    private static String lastLines(Tail log, int count) {
        List<String> lines = log.lines();
        if (lines.isEmpty()) {
            return "";
        }
        return " Its last output:\n"
                + String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
    }

    private static String exit(Process process) {
        if (process.isAlive()) {
            return "still running";
        }
        int status = process.exitValue();
        return status > 128 ? "killed by signal " + (status - 128) : "exit status " + status;
    }

    /** Stops {@code server}'s process and drops its hook; must not be called with the lock held for long (it waits). */
    private void forget(Running server) {
        synchronized (lock) {
            if (running == server) {
                running = null;
            }
        }
        terminate(server.process());
        try {
            Runtime.getRuntime().removeShutdownHook(server.hook());
        } catch (IllegalStateException e) {
            // the JVM is exiting: the hook runs anyway
        }
    }

    private static void terminate(Process process) {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                process.waitFor(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    /** The pid of the running server, for tests; -1 when none. */
    long pid() {
        synchronized (lock) {
            return running == null ? -1 : running.process().pid();
        }
    }

    int starts() {
        synchronized (lock) {
            return starts;
        }
    }

    private void read(InputStream in, Tail tail, int port) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                tail.add(line);
                // What the server chose to run on is worth an info line; the rest is debug.
                if (line.contains("offloaded")
                        || line.contains("using device")
                        || line.contains("ggml_vulkan: ")
                        || line.contains("ggml_cuda_init")
                        || line.contains("unknown model architecture")) {
                    Log.info("llama-server[" + port + "]: " + line.strip());
                } else {
                    Log.debug("llama-server[" + port + "]: " + line);
                }
            }
        } catch (IOException e) {
            // the process ended
        } finally {
            tail.close();
        }
    }

    private static int freePort() throws StartFailure {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new StartFailure("No free loopback port for llama-server: " + e.getMessage());
        }
    }

    /** The last lines of a process's output. Thread-safe. */
    static final class Tail {
        private final ArrayDeque<String> lines = new ArrayDeque<>(); // guarded by this
        private final CompletableFuture<Void> ended = new CompletableFuture<>();

        synchronized void add(String line) {
            if (lines.size() == TAIL_LINES) {
                lines.removeFirst();
            }
            lines.addLast(line.length() > 2000 ? line.substring(0, 2000) + "…" : line);
        }

        synchronized List<String> lines() {
            return List.copyOf(lines);
        }

        synchronized String text() {
            return String.join("\n", lines);
        }

        boolean contains(String text) {
            return text().toLowerCase(java.util.Locale.ROOT).contains(text);
        }

        void close() {
            ended.complete(null);
        }

        /** Waits until the output has been read to its end (the process exited), up to {@code wait}. */
        void drained(Duration wait) {
            try {
                ended.get(wait.toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException | ExecutionException e) {
                // a grandchild keeps the pipe open: what was read so far
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A start that failed, with the message the turn carries. */
    static final class StartFailure extends Exception {
        private static final long serialVersionUID = 1L;

        StartFailure(String message) {
            super(message);
        }
    }
}
