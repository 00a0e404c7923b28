package dev.oam.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A real llama.cpp {@code llama-server} child on a free loopback port, serving one GGUF file, for the real-server
 * suites and {@code bench/run eval}. It always runs with {@code --jinja}, which it needs for tools. The Gemma 3 270M
 * file is the base model and has no chat template, so the server is given Gemma's turn format as a Jinja template
 * ({@code gemma-turns.jinja}, the same turns the embedded backend writes for such a file); a file with its own template
 * (SmolLM2-135M-Instruct) is served with that one.
 *
 * <p>{@link #close} always stops the child (SIGTERM, then SIGKILL); a JVM that exits without closing it stops it from a
 * shutdown hook.
 */
@SuppressWarnings("try") // close() waits for the server to exit, so it may be interrupted
public final class LlamaServer implements AutoCloseable {
    /** Loading a 250 MB model on a busy 2-core machine: a guard against a hung start, not a speed check. */
    static final Duration START = Duration.ofMinutes(5);

    private final Process process;
    private final int port;
    private final StringBuilder log = new StringBuilder();
    private final CountDownLatch settled = new CountDownLatch(1);
    private volatile boolean listening;
    private final Thread hook;

    private LlamaServer(Process process, int port) {
        this.process = process;
        this.port = port;
        hook = new Thread(process::destroyForcibly, "llama-server-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        Thread.ofPlatform().daemon().name("llama-server-log").start(() -> read(process.getInputStream()));
    }

    /**
     * Starts {@code binary} on {@code model}, a file in Gemma's turns without a template of its own, with a context of
     * {@code contextSize} tokens in {@code slots} parallel slots and {@code threads} threads, and waits until it
     * listens (the model loaded).
     */
    public static LlamaServer start(Path binary, Path model, int contextSize, int slots, int threads, String... extra)
            throws IOException, InterruptedException {
        return start(binary, model, gemmaTurns(), contextSize, slots, threads, extra);
    }

    /**
     * The same for one of the real models: Gemma's turns for a file without a template, the file's own otherwise
     * ({@code --jinja} alone).
     */
    public static LlamaServer start(
            Path binary, RealModel model, int contextSize, int slots, int threads, String... extra)
            throws IOException, InterruptedException {
        return start(
                binary, model.path(), model.hasTemplate() ? null : gemmaTurns(), contextSize, slots, threads, extra);
    }

    private static Path gemmaTurns() throws IOException {
        Path template = Files.createTempFile("oam-gemma-turns", ".jinja");
        try (InputStream in = LlamaServer.class.getResourceAsStream("gemma-turns.jinja")) {
            if (in == null) {
                throw new IllegalStateException("gemma-turns.jinja is missing from oam-testing");
            }
            Files.write(template, in.readAllBytes());
        }
        template.toFile().deleteOnExit();
        return template;
    }

    /** {@link #start(Path, Path, Path, int, int, int, String...)} under the name the evaluation uses. */
    public static LlamaServer startWithTemplate(
            Path binary, Path model, @Nullable Path template, int contextSize, int slots, int threads, String... extra)
            throws IOException, InterruptedException {
        return start(binary, model, template, contextSize, slots, threads, extra);
    }

    /**
     * Starts {@code binary} with {@code --jinja} on {@code model}; {@code template}: a Jinja file for
     * {@code --chat-template-file}, or null for the model file's own template.
     */
    public static LlamaServer start(
            Path binary, Path model, @Nullable Path template, int contextSize, int slots, int threads, String... extra)
            throws IOException, InterruptedException {
        IOException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            int port = freePort();
            List<String> command = new ArrayList<>(List.of(
                    binary.toString(),
                    "-m",
                    model.toString(),
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
                    Integer.toString(contextSize),
                    "-np",
                    Integer.toString(slots),
                    "-t",
                    Integer.toString(threads),
                    "--no-webui"));
            command.addAll(List.of(extra));
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
            builder.environment().put("GGML_NO_BACKTRACE", "1");
            Process process = builder.start();
            process.getOutputStream().close();
            LlamaServer server = new LlamaServer(process, port);
            try {
                server.awaitListening();
                return server;
            } catch (IOException e) {
                server.close();
                if (!server.log().contains("bind") && !server.log().contains("address already in use")) {
                    throw e;
                }
                last = e; // another process took the port between probing and binding: another port
            }
        }
        throw last;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return socket.getLocalPort();
        }
    }

    /** {@code http://127.0.0.1:PORT/v1}: the OpenAI-compatible API root. */
    public String baseUrl() {
        return "http://127.0.0.1:" + port + "/v1";
    }

    public int port() {
        return port;
    }

    /** The server's output so far (stdout and stderr), for failure messages. */
    public String log() {
        synchronized (log) {
            return log.toString();
        }
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    private void awaitListening() throws IOException, InterruptedException {
        // Counted down by the "listening" line (printed once the model loaded) or by the end of the output.
        if (!settled.await(START.toNanos(), TimeUnit.NANOSECONDS)) {
            throw new IOException("llama-server did not start within " + START.toMinutes() + " minutes:\n" + tail());
        }
        if (!listening) {
            process.waitFor(10, TimeUnit.SECONDS);
            throw new IOException("llama-server stopped while starting"
                    + (process.isAlive() ? "" : " (exit " + process.exitValue() + ")") + ":\n" + tail());
        }
    }

    private String tail() {
        List<String> lines = log().lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    }

    private void read(InputStream in) {
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            for (String line = reader.readLine(); line != null; line = reader.readLine()) {
                synchronized (log) {
                    if (log.length() < (8 << 20)) {
                        log.append(line).append('\n');
                    }
                }
                if (line.contains("listening on http://")) {
                    listening = true;
                    settled.countDown();
                }
            }
        } catch (IOException e) {
            // the process ended
        } finally {
            settled.countDown();
        }
    }

    /** Stops the server: SIGTERM, up to 30 s for it to finish, then SIGKILL. */
    @Override
    public void close() throws InterruptedException {
        try {
            if (process.isAlive()) {
                process.destroy();
                if (!process.waitFor(30, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(30, TimeUnit.SECONDS);
                }
            }
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is exiting: the hook runs anyway
            }
        }
    }
}
