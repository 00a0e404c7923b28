package dev.oam.testing;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/** What a test client received: the JSON-RPC messages to poll, and every output line that was not one. */
public final class Inbox {
    private final LinkedBlockingQueue<JsonNode> messages = new LinkedBlockingQueue<>();
    private final List<String> garbage = new CopyOnWriteArrayList<>();

    /** An empty inbox. */
    public Inbox() {}

    /** Files one output line: a single-line JSON object is queued and returned, anything else kept as garbage. */
    public @Nullable JsonNode accept(String line) {
        JsonNode node;
        try {
            node = Json.parse(line);
        } catch (Exception e) {
            garbage.add(line);
            return null;
        }
        if (!node.isObject() || line.indexOf('\n') >= 0) {
            garbage.add(line);
            return null;
        }
        messages.add(node);
        return node;
    }

    /** The next message, or {@code null} after {@code timeout}. */
    public @Nullable JsonNode poll(Duration timeout) throws InterruptedException {
        return messages.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** Lines that were not JSON-RPC messages, in order. */
    public List<String> garbage() {
        return garbage;
    }
}
