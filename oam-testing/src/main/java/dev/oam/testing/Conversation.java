package dev.oam.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/**
 * A test's view of a bridge connection: sends JSON text, records every message from the bridge in arrival order, and
 * waits for messages by predicate (never by sleeping).
 */
public final class Conversation implements AutoCloseable {
    /** Longest wait for any expected message. */
    public static final Duration WAIT = Duration.ofSeconds(30);

    private final ProtocolClient client;
    private final Duration wait;
    private final List<JsonNode> log = new ArrayList<>();
    private int toolCallsTaken;
    private final AtomicLong syncIds = new AtomicLong();

    public Conversation(ProtocolClient client) {
        this(client, WAIT);
    }

    /**
     * @param wait the longest wait for any expected message, a guard against a hung peer, never a speed check (a real
     *     model on a loaded CPU needs minutes where a scripted one needs milliseconds)
     */
    public Conversation(ProtocolClient client, Duration wait) {
        this.client = client;
        this.wait = wait;
    }

    public ProtocolClient client() {
        return client;
    }

    /** Sends a raw line. */
    public Conversation send(String line) {
        client.send(line);
        return this;
    }

    public Conversation sendBytes(byte[] line) {
        client.send(line);
        return this;
    }

    /** Sends a request; {@code id} is written as JSON ({@code 1}, {@code "a"}). */
    public Conversation request(Object id, String method, String paramsJson) {
        return send("{\"jsonrpc\":\"2.0\",\"id\":" + Json.write(Json.mapper().valueToTree(id)) + ",\"method\":\""
                + method + "\"" + (paramsJson == null ? "" : ",\"params\":" + paramsJson) + "}");
    }

    public Conversation notification(String method, String paramsJson) {
        return send("{\"jsonrpc\":\"2.0\",\"method\":\"" + method + "\""
                + (paramsJson == null ? "" : ",\"params\":" + paramsJson) + "}");
    }

    /** Waits for the response with this id (result or error). */
    public JsonNode response(Object id) {
        String key = Json.write(Json.mapper().valueToTree(id));
        return await(m -> isResponse(m) && Json.write(m.get("id")).equals(key), "the response to id " + key);
    }

    public JsonNode result(Object id) {
        JsonNode response = response(id);
        assertThat(response.has("error"))
                .as("expected a result but got %s", response)
                .isFalse();
        return response.get("result");
    }

    public JsonNode error(Object id) {
        JsonNode response = response(id);
        assertThat(response.has("error"))
                .as("expected an error but got %s", response)
                .isTrue();
        return response.get("error");
    }

    /** Sends a request and waits for its result. */
    public JsonNode call(Object id, String method, String paramsJson) {
        request(id, method, paramsJson);
        return result(id);
    }

    /** The next {@code tool/call} request not taken yet. */
    public JsonNode toolCall() {
        int[] seen = {0};
        JsonNode call = await(
                m -> "tool/call".equals(m.path("method").asText()) && seen[0]++ == toolCallsTaken,
                "tool/call number " + (toolCallsTaken + 1));
        toolCallsTaken++;
        return call;
    }

    /** Answers a {@code tool/call} with {@code "result": resultJson}. */
    public void reply(JsonNode toolCall, String resultJson) {
        send("{\"jsonrpc\":\"2.0\",\"id\":" + Json.write(toolCall.get("id")) + ",\"result\":" + resultJson + "}");
    }

    /** The first message (in arrival order) matching {@code predicate}, waiting for it if needed. */
    public JsonNode await(Predicate<JsonNode> predicate, String what) {
        long deadline = System.nanoTime() + wait.toNanos();
        int checked = 0;
        while (true) {
            synchronized (log) {
                for (; checked < log.size(); checked++) {
                    if (predicate.test(log.get(checked))) {
                        return log.get(checked);
                    }
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                fail("timed out waiting for " + what + "; received so far:\n" + describe());
            }
            pollOnce(Duration.ofNanos(Math.min(left, Duration.ofMillis(200).toNanos())));
        }
    }

    /**
     * Round-trips a {@code ping} and returns every message received before its response: since the bridge answers in
     * order, anything the earlier lines caused at once is in the list.
     */
    public List<JsonNode> sync() {
        String id = "sync-" + syncIds.incrementAndGet();
        int before = size();
        request(id, "ping", null);
        response(id);
        synchronized (log) {
            List<JsonNode> between = new ArrayList<>(log.subList(before, log.size()));
            between.removeIf(m -> isResponse(m) && m.get("id").asText().equals(id));
            return between;
        }
    }

    public int size() {
        synchronized (log) {
            return log.size();
        }
    }

    /** Every message received so far, in order. */
    public List<JsonNode> messages() {
        synchronized (log) {
            return List.copyOf(log);
        }
    }

    /** Messages received so far from index {@code from}. */
    public List<JsonNode> messagesFrom(int from) {
        synchronized (log) {
            return List.copyOf(log.subList(from, log.size()));
        }
    }

    /** Index of a message in the log (by identity). */
    public int indexOf(JsonNode message) {
        synchronized (log) {
            for (int i = 0; i < log.size(); i++) {
                if (log.get(i) == message) {
                    return i;
                }
            }
        }
        return -1;
    }

    /** Reads whatever arrives within {@code duration} (for checks that nothing more comes). */
    public void drain(Duration duration) {
        long deadline = System.nanoTime() + duration.toNanos();
        while (System.nanoTime() < deadline) {
            pollOnce(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
        }
    }

    private void pollOnce(Duration timeout) {
        try {
            JsonNode message = client.poll(timeout);
            if (message != null) {
                synchronized (log) {
                    log.add(message);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("interrupted");
        }
    }

    public static boolean isResponse(JsonNode message) {
        return message.has("id") && !message.has("method");
    }

    public static boolean isEvent(JsonNode message, String method) {
        return method.equals(message.path("method").asText()) && !message.has("id");
    }

    /** Events of one request, in order ({@code session/event} by default). */
    public List<JsonNode> events(Object requestId) {
        String key = Json.write(Json.mapper().valueToTree(requestId));
        return messages().stream()
                .filter(m -> isEvent(m, "session/event")
                        && Json.write(m.path("params").path("requestId")).equals(key))
                .map(m -> m.path("params").path("event"))
                .toList();
    }

    private String describe() {
        StringBuilder out = new StringBuilder();
        synchronized (log) {
            int from = Math.max(0, log.size() - 40);
            for (int i = from; i < log.size(); i++) {
                String line = Json.write(log.get(i));
                out.append("  ")
                        .append(line.length() > 400 ? line.substring(0, 400) + "…" : line)
                        .append('\n');
            }
        }
        if (client instanceof StdioClient stdio) {
            String err = stdio.stderr();
            out.append("stderr:\n").append(err.length() > 4000 ? err.substring(err.length() - 4000) : err);
        }
        return out.toString();
    }

    public static ObjectNode object(String json) {
        try {
            return (ObjectNode) Json.parse(json);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    @Override
    public void close() {
        client.close();
    }
}
