package dev.oam.ffi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.core.Environment;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import dev.oam.core.model.ModelBackends;
import dev.oam.core.model.ModelSpec;
import dev.oam.core.model.pull.ModelCache;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The Java side of {@code libOpenAppleModelsFFI}: one instance per {@code oam_bridge}. The C library calls
 * {@link #create}, {@link #send}, {@link #callBlocking} and {@link #destroy} through JNI, and registers
 * {@link #deliver} (the way out to the host's callback) with RegisterNatives.
 *
 * <p>Outgoing lines reach {@code deliver} on the engine's single writer thread only, so the host's callback is never
 * re-entered. {@link #destroy} clears the handle under the lock that every delivery holds, so no delivery can reach
 * freed native memory afterwards.
 */
public final class NativeBridge {
    /** The same limit as {@code oam stdio}: longer lines are answered {@code -32600} and dropped. */
    static final int MAX_LINE_BYTES = 64 * 1024 * 1024;

    private static final BigDecimal MAX_SAFE_INTEGER = BigDecimal.valueOf(9_007_199_254_740_991L);
    private static final AtomicLong LOCAL_IDS = new AtomicLong();

    private final BridgeEngine engine;
    private final Object deliverLock = new Object();
    private long handle; // guarded by deliverLock; 0 once destroyed

    private NativeBridge(long handle, BridgeConfiguration configuration) {
        this.handle = handle;
        this.engine = new BridgeEngine(configuration, this::deliverLine);
    }

    /**
     * The variables the C side resolves for each bridge ({@code oam_bridge.c}'s {@code settings_array}: the setting of
     * {@code oam_bridge_create_with_settings}, else the C runtime's {@code getenv}) and passes when set and not empty.
     * The bridge's {@link Environment} never reads these from the JVM's environment again: one the C side left out is
     * unset, as it was for the C side.
     */
    static final Set<String> RESOLVED_BY_C = Set.of(
            "OAM_BRIDGE_LOG",
            "OAM_FFI_OWNS_JVM",
            "OAM_BRIDGE_MAX_SESSIONS",
            "OAM_BRIDGE_TOOL_TIMEOUT",
            "OAM_BRIDGE_SCRIPTED_MODELS",
            ModelSpec.MODEL_VARIABLE,
            ModelSpec.NAME_VARIABLE,
            ModelSpec.API_KEY_VARIABLE,
            ModelCache.CACHE_VARIABLE,
            ModelCache.HUB_VARIABLE,
            ModelCache.TOKEN_VARIABLE,
            ModelCache.PYPI_VARIABLE,
            Environment.CACHE_DIR_VARIABLE,
            Environment.XDG_CACHE_VARIABLE);

    /**
     * Called by {@code oam_bridge_create}. {@code settings} are {@code NAME=value} pairs the C side read from its
     * settings or the environment ({@link #RESOLVED_BY_C}: {@code OAM_BRIDGE_LOG}, {@code OAM_BRIDGE_MAX_SESSIONS},
     * {@code OAM_BRIDGE_TOOL_TIMEOUT}, {@code OAM_BRIDGE_SCRIPTED_MODELS}, {@code OAM_FFI_OWNS_JVM}, the system model's
     * {@code OAM_MODEL}, {@code OAM_MODEL_NAME}, {@code OAM_API_KEY} and the model cache's variables). A bad value
     * throws {@link IllegalArgumentException} naming the variable.
     */
    static NativeBridge create(long handle, String[] settings) {
        if (handle == 0) {
            throw new IllegalArgumentException("the native handle must not be 0");
        }
        return new NativeBridge(handle, configure(settings));
    }

    static BridgeConfiguration configure(String[] settings) {
        return configure(settings, Environment.system());
    }

    /**
     * The environment of one bridge: {@code settings} over {@code process}, in which the variables the C side resolved
     * ({@link #RESOLVED_BY_C}) are unset. The system model, the model cache and every variable a backend reads for the
     * system model (such as {@code OAM_MODEL_HOST}, {@code OAM_LLAMA_SERVER}) come from it.
     */
    static Environment environment(String[] settings, Environment process) {
        return Environment.of(named(settings)).over(process.without(RESOLVED_BY_C));
    }

    /** {@code NAME=value} pairs by name, in their order; the value stripped, empty without {@code =}. */
    private static Map<String, String> named(String[] settings) {
        Map<String, String> named = new LinkedHashMap<>();
        for (String setting : settings) {
            int eq = setting.indexOf('=');
            named.put(
                    eq < 0 ? setting : setting.substring(0, eq),
                    eq < 0 ? "" : setting.substring(eq + 1).strip());
        }
        return named;
    }

    static BridgeConfiguration configure(String[] settings, Environment process) {
        Log.toConsole(); // a native host: its stderr, as oam stdio writes it (OAM_BRIDGE_LOG sets the level)
        BridgeConfiguration.Builder builder = BridgeConfiguration.builder();
        for (Map.Entry<String, String> setting : named(settings).entrySet()) {
            String name = setting.getKey();
            String value = setting.getValue();
            switch (name) {
                case "OAM_BRIDGE_LOG" -> Log.setLevel(Log.parseLevel(value));
                case "OAM_BRIDGE_MAX_SESSIONS" -> {
                    int max;
                    try {
                        max = Integer.parseInt(value);
                    } catch (NumberFormatException e) {
                        max = 0;
                    }
                    if (max < 1) {
                        throw new IllegalArgumentException(
                                "OAM_BRIDGE_MAX_SESSIONS=" + value + " must be a whole number of at least 1");
                    }
                    builder.maxSessions(max);
                }
                case "OAM_BRIDGE_TOOL_TIMEOUT" -> {
                    double seconds;
                    try {
                        seconds = Double.parseDouble(value);
                    } catch (NumberFormatException e) {
                        seconds = Double.NaN;
                    }
                    if (!(seconds >= 0 && seconds <= 86_400)) {
                        throw new IllegalArgumentException("OAM_BRIDGE_TOOL_TIMEOUT=" + value
                                + " must be a number of seconds from 0 to 86400 (0 means no limit)");
                    }
                    builder.defaultToolTimeout(Duration.ofNanos((long) (seconds * 1e9)));
                }
                case "OAM_BRIDGE_SCRIPTED_MODELS" ->
                    builder.allowsScriptedModels(
                            switch (value.toLowerCase(java.util.Locale.ROOT)) {
                                case "1", "true", "yes", "on" -> true;
                                case "0", "false", "no", "off" -> false;
                                default ->
                                    throw new IllegalArgumentException(
                                            "OAM_BRIDGE_SCRIPTED_MODELS=" + value + " must be 1 or 0");
                            });
                case "OAM_FFI_OWNS_JVM" -> keepStdoutPrivate();
                default -> {
                    // The system model and the model cache (docs/MODELS.md) are read from the bridge's environment
                    // below; any other name is one this side does not know.
                    if (!RESOLVED_BY_C.contains(name)) {
                        Log.debug("ignored the unknown setting " + name);
                    }
                }
            }
        }
        // The backends are the process's discovered ones (ModelBackends.discovered()), shared by every bridge.
        Environment environment = environment(settings, process);
        builder.modelCache(ModelCache.fromEnvironment(environment));
        builder.systemModel(ModelSpec.fromEnvironment(environment));
        try {
            return builder.build();
        } catch (ModelBackends.ModelSetupException e) {
            throw new IllegalArgumentException(ModelSpec.MODEL_VARIABLE + ": " + e.getMessage(), e);
        }
    }

    /**
     * The JVM was started by the library inside someone else's process: whatever Java code prints to {@code System.out}
     * by mistake must not land in the host's stdout (which may carry a protocol).
     */
    private static void keepStdoutPrivate() {
        if (System.out != System.err) {
            System.setOut(System.err);
        }
    }

    /** Called by {@code oam_bridge_send} with a line the C side checked to be UTF-8. */
    void send(byte[] line) {
        if (line.length > MAX_LINE_BYTES) {
            engine.rejectLine(
                    "The line is longer than " + (MAX_LINE_BYTES / (1024 * 1024)) + " MiB; the message was dropped.");
            return;
        }
        engine.receive(line, 0, line.length);
    }

    /**
     * Called by {@code oam_call_blocking}: one request whose response line is returned instead of delivered. On timeout
     * the request is cancelled and a {@code -32024} error line is returned.
     */
    byte[] callBlocking(byte[] json, long timeoutMillis) {
        JsonNode root;
        try {
            root = Json.parse(json, 0, json.length);
        } catch (IOException | RuntimeException e) {
            return errorLine(null, ErrorCode.PARSE_ERROR, "Parse error: the message is not valid JSON.");
        }
        if (!(root instanceof ObjectNode request)) {
            return errorLine(
                    null,
                    ErrorCode.INVALID_MESSAGE,
                    root.isArray()
                            ? "Batches are not supported; send one JSON object."
                            : "A message must be a JSON object.");
        }
        if (!request.has("method")) {
            return errorLine(
                    request.get("id"),
                    ErrorCode.INVALID_MESSAGE,
                    "oam_call_blocking sends requests (with a 'method'); send responses with oam_bridge_send.");
        }
        JsonNode id = request.get("id");
        if (id == null) {
            // A private id of our own, so that a timeout can cancel exactly this request.
            id = TextNode.valueOf("local-ffi-" + LOCAL_IDS.incrementAndGet());
            request.set("id", id);
        }
        CompletableFuture<ObjectNode> future = engine.callMessage(request);
        try {
            ObjectNode response = timeoutMillis > 0 ? future.get(timeoutMillis, TimeUnit.MILLISECONDS) : future.get();
            return Json.write(response).getBytes(StandardCharsets.UTF_8);
        } catch (TimeoutException e) {
            JsonNode echoed = echoedId(id);
            engine.cancel(echoed);
            return errorLine(
                    echoed,
                    ErrorCode.TIMEOUT,
                    "No response within " + timeoutMillis + " ms; the request was cancelled.");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return errorLine(
                    echoedId(id), ErrorCode.INTERNAL_ERROR, "Internal error: the waiting thread was interrupted.");
        } catch (ExecutionException e) {
            Log.error("oam_call_blocking failed", e.getCause());
            return errorLine(echoedId(id), ErrorCode.INTERNAL_ERROR, "Internal error; see the bridge's log.");
        }
    }

    /**
     * Called by {@code oam_bridge_destroy} after the C side stopped its callbacks. From inside the callback (the writer
     * thread itself) the engine is closed on another thread, so the callback returns at once.
     */
    void destroy(boolean fromCallback) {
        synchronized (deliverLock) {
            handle = 0;
        }
        if (fromCallback) {
            Thread.ofVirtual().name("oam-ffi-close").start(engine::close);
        } else {
            engine.close();
        }
    }

    private void deliverLine(String line) {
        byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
        synchronized (deliverLock) {
            if (handle != 0) {
                deliver(handle, bytes);
            }
        }
    }

    /** The id as the engine echoes it: integral numbers as plain integers. */
    private static JsonNode echoedId(JsonNode id) {
        if (id.isNumber()) {
            BigDecimal value = id.decimalValue().stripTrailingZeros();
            if (value.scale() <= 0 && value.abs().compareTo(MAX_SAFE_INTEGER) <= 0) {
                return LongNode.valueOf(value.longValueExact());
            }
        }
        return id;
    }

    private static byte[] errorLine(@Nullable JsonNode id, ErrorCode code, String message) {
        ObjectNode line = Json.object();
        line.put("jsonrpc", "2.0");
        line.set("id", id == null || !(id.isTextual() || id.isNumber()) ? NullNode.getInstance() : id);
        line.set("error", new BridgeException(code, message).toJson());
        return Json.write(line).getBytes(StandardCharsets.UTF_8);
    }

    /** Hands one line to the host's callback (bound by the C library with RegisterNatives). */
    private static native void deliver(long handle, byte[] line);
}
