package dev.oam.model.llama;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Environment;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelParameterException;
import dev.oam.core.os.NativeAbort;
import dev.oam.core.os.Posix;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The child side of the process model host ({@link ModelHost}): a JVM that runs llama.cpp for one model file and serves
 * {@link LanguageModel} calls over its stdin and stdout, one JSON object per line (see {@link ModelHost} for the
 * messages). Standard output is kept for the protocol as in {@code oam stdio}: fd 1 is pointed at stderr before
 * anything native loads, and a native abort is reported by {@link NativeAbort} (exit code 134). The child ends when its
 * stdin ends (the parent closed it, or died).
 */
public final class ModelHostMain {
    private final OutputStream out;
    private final Object writeLock = new Object();
    private final Map<Integer, LanguageModel> models = new ConcurrentHashMap<>();
    private final Map<Long, CancellationToken> running = new ConcurrentHashMap<>();
    private LlamaBackend backend;

    private final LlamaSettings settings; // this process's, read once in main

    private ModelHostMain(OutputStream out, LlamaSettings settings) {
        this.out = out;
        this.settings = settings;
    }

    public static void main(String[] args) throws Exception {
        OutputStream protocol = protocolOut();
        System.setOut(System.err);
        String abort = NativeAbort.install("the oam model host");
        Environment system = Environment.system(); // the entry point: read once, typed below
        String level = system.property("oam.host.log");
        Log.setLevel(Log.parseLevel(level != null ? level : "warning"));
        Log.debug("model host: " + abort);
        new ModelHostMain(protocol, LlamaSettings.read(system)).serve();
        System.exit(0);
    }

    /** A duplicate of fd 1 for the protocol, with fd 1 itself pointed at stderr; without POSIX calls, fd 1. */
    private static OutputStream protocolOut() {
        if (Posix.isAvailable()) {
            try {
                int fd = Posix.dup(1);
                Posix.dup2(2, 1);
                return new OutputStream() {
                    @Override
                    public void write(int b) throws IOException {
                        Posix.write(fd, new byte[] {(byte) b});
                    }

                    @Override
                    public void write(byte[] bytes, int offset, int length) throws IOException {
                        Posix.write(
                                fd,
                                offset == 0 && length == bytes.length
                                        ? bytes
                                        : java.util.Arrays.copyOfRange(bytes, offset, offset + length));
                    }
                };
            } catch (IOException | RuntimeException e) {
                System.err.println("oam model host: cannot guard stdout: " + e.getMessage());
            }
        }
        return new FileOutputStream(FileDescriptor.out);
    }

    private void serve() throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode message = Json.parse(line);
            String op = message.path("op").asText();
            long id = message.path("id").asLong();
            switch (op) {
                case "start" -> start(message);
                case "model" -> model(id, message);
                case "respond" -> {
                    CancellationToken token = CancellationToken.create();
                    running.put(id, token);
                    Thread.ofVirtual().name("oam-host-step-" + id).start(() -> respond(id, message, token));
                }
                case "cancel" -> {
                    CancellationToken token = running.get(id);
                    if (token != null) {
                        token.cancel();
                    }
                }
                case "count", "availability" -> Thread.ofVirtual().start(() -> query(id, op, message));
                default -> Log.warning("model host: unknown message " + op);
            }
        }
        running.values().forEach(CancellationToken::cancel);
        if (backend != null) {
            backend.close();
        }
    }

    /** {@code {"op":"start","defaults":[slots,threads,threadsBatch,context,gpuLayers],"languages":[…],"log":…}}. */
    private void start(JsonNode message) {
        JsonNode d = message.path("defaults");
        List<String> languages = new ArrayList<>();
        message.path("languages").forEach(l -> languages.add(l.asText()));
        // the sizes are the parent's; the engine, library and tuning this process's own (the library is per process)
        backend = new LlamaBackend(
                settings.sized(
                                d.path(0).intValue(),
                                d.path(1).intValue(),
                                d.path(2).intValue(),
                                d.path(3).intValue())
                        .withGpuLayers(d.path(4).intValue()),
                languages);
    }

    /** {@code {"op":"model","id","spec"|"location","name"?}}: answers {@code ready} or {@code failed}. */
    private void model(long id, JsonNode message) {
        ObjectNode reply = Json.object().put("id", id);
        try {
            LanguageModel model;
            if (message.hasNonNull("spec")) {
                model = backend.create(
                        (ObjectNode) message.get("spec"), message.path("where").asText("model"));
            } else {
                String name = message.hasNonNull("name") ? message.get("name").asText() : null;
                model = backend.systemModel(message.get("location").asText(), name);
            }
            models.put((int) id, model);
            reply.put("op", "ready")
                    .put("contextSize", model.contextSize())
                    .put("retries", model.retriesInvalidOutput())
                    .set("warnings", Json.strings(model.warnings()));
        } catch (ModelParameterException e) {
            reply.put("op", "failed")
                    .put("member", e.member())
                    .put("problem", e.problem())
                    .put("missing", e.isMissing());
        } catch (Exception e) {
            reply.put("op", "failed").put("message", String.valueOf(e.getMessage()));
        }
        send(reply);
    }

    private void respond(long id, JsonNode message, CancellationToken token) {
        ObjectNode reply = Json.object().put("id", id);
        try {
            LanguageModel model = model(message);
            ModelListener listener = new ModelListener() {
                @Override
                public void onText(String delta) {
                    send(Json.object().put("id", id).put("op", "text").put("text", delta));
                }

                @Override
                public void onReset(String text) {
                    send(Json.object().put("id", id).put("op", "reset").put("text", text));
                }

                @Override
                public void onPartial(JsonNode value) {
                    ObjectNode partial = Json.object().put("id", id).put("op", "partial");
                    partial.set("value", value);
                    send(partial);
                }
            };
            reply.put("op", "response")
                    .set(
                            "response",
                            HostWire.response(
                                    model.respond(HostWire.request(message.get("request")), listener, token)));
        } catch (AgentException e) {
            reply.put("op", "error").set("error", HostWire.error(e));
        } catch (RuntimeException e) {
            reply.put("op", "error")
                    .set(
                            "error",
                            HostWire.error(
                                    new AgentException(ErrorCode.GENERATION_FAILED, "The model host failed: " + e)));
        } finally {
            running.remove(id);
        }
        send(reply);
    }

    private void query(long id, String op, JsonNode message) {
        ObjectNode reply = Json.object().put("id", id).put("op", "answer");
        try {
            LanguageModel model = model(message);
            if (op.equals("availability")) {
                reply.set("value", HostWire.availability(model.availability()));
            } else if (message.has("text")) {
                reply.put("value", model.countTokens(message.get("text").asText()));
            } else {
                reply.put("value", model.countTokens(HostWire.entry(message.get("entry"))));
            }
        } catch (RuntimeException e) {
            reply.put("op", "error").put("message", e.toString());
        }
        send(reply);
    }

    private LanguageModel model(JsonNode message) {
        LanguageModel model = models.get(message.path("model").intValue());
        if (model == null) {
            throw new IllegalStateException("no model " + message.path("model"));
        }
        return model;
    }

    private void send(ObjectNode message) {
        byte[] bytes = HostWire.line(message);
        synchronized (writeLock) {
            try {
                out.write(bytes);
                out.flush();
            } catch (IOException e) {
                // the parent is gone; stdin ends too and serve() returns
            }
        }
    }
}
