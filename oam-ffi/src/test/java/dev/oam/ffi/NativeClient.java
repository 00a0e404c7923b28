package dev.oam.ffi;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Inbox;
import dev.oam.testing.ProtocolClient;
import dev.oam.testing.StreamCapture;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A client of the C ABI: a child process ({@code oam-ffi-host}) hands each line it reads to {@code oam_bridge_send} and
 * prints each message of the callback as a line. The C ABI has no end of input and no process that stops after
 * {@code shutdown}; a host decides when to destroy. This client plays such a host: after {@link #endInput()} or the
 * answer to {@code shutdown} it waits until every request it sent was answered, then closes the child's stdin, which
 * makes the child call {@code oam_bridge_destroy} and exit.
 */
final class NativeClient implements ProtocolClient {
    private static final BigDecimal MAX_SAFE_INTEGER = BigDecimal.valueOf(9_007_199_254_740_991L);

    private final Process process;
    private final OutputStream stdin;
    private final Inbox inbox = new Inbox();
    private final StreamCapture stderr;
    private final Object lock = new Object();
    private final Map<String, Integer> outstanding = new HashMap<>(); // guarded by lock
    private final Set<String> shutdownIds = new HashSet<>(); // guarded by lock
    private boolean ending; // guarded by lock
    private boolean inputClosed; // guarded by lock

    private NativeClient(Process process) {
        this.process = process;
        this.stdin = process.getOutputStream();
        Thread.ofPlatform().daemon().name("native-client-out").start(this::readStdout);
        this.stderr = StreamCapture.start(process.getErrorStream(), "native-client-err");
    }

    /** Starts the host; {@code oam stdio} flags become the library's environment settings. */
    static NativeClient start(String... flags) throws IOException {
        return start(Map.of(), flags);
    }

    /** Starts the host with these environment variables too (the system model's {@code OAM_MODEL}, …). */
    static NativeClient start(Map<String, String> variables, String... flags) throws IOException {
        ProcessBuilder builder = host(variables);
        Map<String, String> env = builder.environment();
        for (int i = 0; i < flags.length; i++) {
            switch (flags[i]) {
                case "--max-sessions" -> env.put("OAM_BRIDGE_MAX_SESSIONS", flags[++i]);
                case "--tool-timeout" -> env.put("OAM_BRIDGE_TOOL_TIMEOUT", flags[++i]);
                case "--no-scripted-models" -> env.put("OAM_BRIDGE_SCRIPTED_MODELS", "0");
                case "--log-level" -> env.put("OAM_BRIDGE_LOG", flags[++i]);
                default -> throw new IllegalArgumentException("unknown flag " + flags[i]);
            }
        }
        return new NativeClient(builder.start());
    }

    /**
     * The host program with a quick JVM, llama.cpp small and its native library extracted under target/, and
     * {@code variables} on top (none of the system model's variables come from the environment of the build).
     */
    static ProcessBuilder host(Map<String, String> variables) {
        ProcessBuilder builder =
                new ProcessBuilder(NativeFiles.dir().resolve("oam-ffi-host").toString());
        Map<String, String> env = builder.environment();
        env.put("OAM_JAVA_HOME", NativeFiles.javaHome());
        env.remove("OAM_CLASSPATH");
        // Each case starts a JVM in a fresh host process; these options start it faster.
        env.put("OAM_JVM_OPTIONS", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1");
        for (String name : List.of("OAM_MODEL", "OAM_MODEL_NAME", "OAM_API_KEY", "GGML_NO_BACKTRACE")) {
            env.remove(name);
        }
        env.put(
                "OAM_NATIVE_DIR",
                NativeFiles.dir().resolveSibling("llama-native").toString());
        env.put("OAM_LLAMA_THREADS", "1");
        env.put("OAM_LLAMA_THREADS_BATCH", "1");
        env.put("OAM_LLAMA_CONTEXT", "2048");
        env.putAll(variables);
        return builder;
    }

    @Override
    public void send(byte[] line) {
        track(line);
        synchronized (lock) {
            if (inputClosed) {
                throw new IllegalStateException("the host's input is closed; stderr:\n" + stderr());
            }
            try {
                stdin.write(line);
                stdin.write('\n');
                stdin.flush();
            } catch (IOException e) {
                throw new IllegalStateException("the host closed its input; stderr:\n" + stderr(), e);
            }
        }
    }

    /** Remembers requests (a method and a usable id) until their answer arrives. */
    private void track(byte[] line) {
        JsonNode message;
        try {
            message = Json.parse(line, 0, line.length);
        } catch (IOException | RuntimeException e) {
            return;
        }
        JsonNode method = message.path("method");
        String key = message.isObject() && method.isTextual() ? key(message.get("id")) : null;
        if (key != null) {
            synchronized (lock) {
                outstanding.merge(key, 1, Integer::sum);
                if (method.textValue().equals("shutdown")) {
                    shutdownIds.add(key);
                }
            }
        }
    }

    /** The id as the bridge echoes it, or null when it would not be echoed. */
    private static @Nullable String key(@Nullable JsonNode id) {
        if (id == null) {
            return null;
        }
        if (id.isTextual()) {
            return "s:" + id.textValue();
        }
        if (id.isNumber()) {
            BigDecimal value = id.decimalValue();
            return value.abs().compareTo(MAX_SAFE_INTEGER) > 0
                    ? null
                    : "n:" + value.stripTrailingZeros().toPlainString();
        }
        return null;
    }

    private void answered(JsonNode response) {
        String key = key(response.get("id"));
        synchronized (lock) {
            if (key != null) {
                outstanding.computeIfPresent(key, (k, count) -> count > 1 ? count - 1 : null);
            }
            if (key != null && shutdownIds.contains(key)) {
                // Requests sent after the shutdown are answered -32023 at once; let them arrive first.
                ending = true;
            }
            if (ending && outstanding.isEmpty()) {
                closeInputLocked();
            }
        }
    }

    private void readStdout() {
        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                JsonNode node = inbox.accept(line);
                if (node != null && node.has("id") && !node.has("method")) {
                    answered(node);
                }
            }
        } catch (IOException e) {
            // the host ended
        }
    }

    String stderr() {
        return stderr.text();
    }

    private void closeInputLocked() {
        if (!inputClosed) {
            inputClosed = true;
            try {
                stdin.close();
            } catch (IOException e) {
                // already gone
            }
        }
    }

    @Override
    public JsonNode poll(Duration timeout) throws InterruptedException {
        return inbox.poll(timeout);
    }

    @Override
    public List<String> garbage() {
        return inbox.garbage();
    }

    @Override
    public void endInput() {
        synchronized (lock) {
            ending = true;
            if (outstanding.isEmpty()) {
                closeInputLocked();
            }
        }
    }

    @Override
    public boolean awaitStopped(Duration timeout) throws InterruptedException {
        return process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int exitCode() {
        return process.exitValue();
    }

    /** Destroys the bridge with whatever is still in flight (the host's stdin closes) and waits for the exit. */
    @Override
    public void close() {
        synchronized (lock) {
            closeInputLocked();
        }
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                System.err.println("oam-ffi-host did not exit after its input closed; stderr:\n" + stderr());
                process.destroyForcibly();
            } else if (process.exitValue() != 0) {
                System.err.println("oam-ffi-host exited with " + process.exitValue() + "; stderr:\n" + stderr());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
