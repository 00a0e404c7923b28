package dev.oam.bench.eval;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.InMemoryClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.Predicate;

/**
 * The evaluation's connection to its in-process bridge: requests and replies as JSON-RPC lines, the next message a case
 * waits for (with the running case's deadline, {@link CaseTimeout}), and the predicates cases wait on.
 */
final class EvalWire {
    private static final Duration WAIT = Duration.ofMinutes(10);

    final InMemoryClient client;
    private int ids;
    long caseDeadline = Long.MAX_VALUE; // System.nanoTime() when the running case times out
    String lastStreamed = "nothing"; // the running case's last streamed event, for a timeout's note

    /** The case ran past its timeout; it was cancelled and counts as failed. */
    static final class CaseTimeout extends RuntimeException {
        CaseTimeout() {
            super("timeout", null, false, false);
        }
    }

    EvalWire(InMemoryClient client) {
        this.client = client;
    }

    /** A fresh number for a request or session id. */
    int nextId() {
        return ++ids;
    }

    record Timed(long at, JsonNode message) {}

    void send(String id, String method, String params) {
        client.send(
                ("{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"" + method + "\",\"params\":" + params + "}")
                        .getBytes(StandardCharsets.UTF_8));
    }

    void reply(JsonNode request, String result) {
        client.send(("{\"jsonrpc\":\"2.0\",\"id\":" + Json.write(request.get("id")) + ",\"result\":" + result + "}")
                .getBytes(StandardCharsets.UTF_8));
    }

    JsonNode call(String method, String params) {
        String id = "c" + nextId();
        send(id, method, params);
        JsonNode response = await(x -> isFor(x, id)).message();
        if (response.has("error")) {
            throw new IllegalStateException(method + " failed: " + Json.write(response.get("error")));
        }
        return response.path("result");
    }

    /** The next message matching {@code wanted}, or streamed output (for the first-token time); others are dropped. */
    Timed next(Predicate<Timed> wanted) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            long now = System.nanoTime();
            boolean bounded = caseDeadline != Long.MAX_VALUE;
            if (bounded && now - caseDeadline >= 0) {
                throw new CaseTimeout();
            }
            long left = bounded ? Math.min(deadline - now, caseDeadline - now) : deadline - now;
            if (deadline - now <= 0) {
                throw new IllegalStateException("no answer within " + WAIT.toMinutes() + " minutes");
            }
            JsonNode message;
            try {
                message = client.poll(Duration.ofNanos(left));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            if (message == null) {
                continue;
            }
            Timed timed = new Timed(System.nanoTime(), message);
            if (isStreamed(message)) {
                String event = Json.write(message.path("params").path("event"));
                lastStreamed = event.length() > 300
                        ? event.substring(0, 150) + "…" + event.substring(event.length() - 150)
                        : event;
            }
            if (wanted.test(timed) || isStreamed(message)) {
                return timed;
            }
        }
    }

    /** The next message matching {@code wanted}, skipping everything else. */
    Timed await(Predicate<Timed> wanted) {
        while (true) {
            Timed timed = next(wanted);
            if (wanted.test(timed)) {
                return timed;
            }
        }
    }

    /** After a cancel: the request's answer (an error), waited for up to a minute beyond the case's timeout. */
    void drain(String id) {
        caseDeadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        try {
            await(x -> isFor(x, id));
        } catch (CaseTimeout again) {
            System.err.println("bench eval: request " + id + " did not end within a minute of its cancel");
        }
    }

    static boolean isFor(Timed timed, String id) {
        return isResponse(timed.message())
                && id.equals(timed.message().path("id").asText());
    }

    static boolean isMethod(Timed timed, String method) {
        return method.equals(timed.message().path("method").asText());
    }

    /** A session or NPC event of this type. */
    static boolean isEvent(Timed timed, String type) {
        String method = timed.message().path("method").asText();
        return (method.equals("session/event") || method.equals("npc/event"))
                && type.equals(timed.message()
                        .path("params")
                        .path("event")
                        .path("type")
                        .asText());
    }

    static boolean isResponse(JsonNode message) {
        return message.has("id") && !message.has("method");
    }

    /**
     * Streamed output: text, a partial value, a line delta or a tool call starting (not the modelStep announcement).
     */
    static boolean isStreamed(JsonNode message) {
        String method = message.path("method").asText();
        if (!method.equals("session/event") && !method.equals("npc/event")) {
            return false;
        }
        String type = message.path("params").path("event").path("type").asText();
        return type.equals("text")
                || type.equals("partial")
                || type.equals("lineDelta")
                || type.equals("toolCallStarted");
    }

    static double ms(long start, long at) {
        return (at - start) / 1e6;
    }

    static String quote(String text) {
        return Json.write(Json.mapper().valueToTree(text));
    }

    static JsonNode parse(String json) {
        try {
            return Json.parse(json);
        } catch (IOException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
