package dev.oam.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.MessageSink;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.cli.StdioTransport;
import dev.oam.core.json.Json;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * JSON-RPC framing (the stdio transport's line reader) and dispatch (the engine, with the game methods and scripted
 * models; no model that touches the network or native code). The input is the byte stream a game writes, cut into reads
 * at points derived from it. Properties:
 *
 * <ul>
 *   <li>every message the bridge writes is one valid JSON-RPC 2.0 object: a notification or request ({@code method}),
 *       or a response with exactly one of {@code result} and {@code error} (an integer {@code code}, a string
 *       {@code message} and a string {@code data.code});
 *   <li>no line gets more than one response: responses with a given id never outnumber the lines carrying that id, and
 *       responses with id {@code null} never outnumber the lines;
 *   <li>a request line whose id no other line uses is answered exactly once by the time a {@code shutdown} of the
 *       harness's own is answered and the engine closed;
 *   <li>after the input, the engine still answers {@code ping} (a result, or {@code shut_down} once the input sent
 *       {@code shutdown}).
 * </ul>
 *
 * The harness splits the stream into lines exactly as the transport does (LF; a CR before it is dropped), so its counts
 * are per transport line, whatever the bytes are (invalid UTF-8 included).
 */
class JsonRpcFuzzTest {
    @FuzzTest(maxDuration = "10m")
    void framingAndDispatch(byte[] data) throws Exception {
        List<String> out = new ArrayList<>();
        MessageSink sink = new MessageSink() {
            @Override
            public void send(String line) {
                synchronized (out) {
                    out.add(line);
                }
            }

            @Override
            public void flush() {}
        };
        BridgeConfiguration configuration =
                BridgeConfiguration.builder().backends(List.of()).build();
        BridgeEngine engine = BridgeEngine.withSink(configuration, sink);
        boolean sawShutdown;
        try {
            StdioTransport.pump(Inputs.split(data, Math.floorMod(Arrays_hash(data), Inputs.WAYS)), engine);
            sawShutdown = engine.isShutDown();
            try {
                JsonNode pong = engine.call("ping", null).get();
                assertThat(pong.isObject()).as("ping's result %s", pong).isTrue();
            } catch (ExecutionException e) {
                assertThat(e.getCause()).isInstanceOf(BridgeException.class);
                assertThat(((BridgeException) e.getCause()).dataCode())
                        .as("ping after the input")
                        .isEqualTo("shut_down");
                assertThat(sawShutdown || engine.isShutDown()).isTrue();
            }
            // A shutdown request of our own is the barrier: the bridge answers it only after every earlier request
            // was answered (those still running after its 2 s grace fail with -32023), and a local call completes
            // after everything queued before its response was written to the sink. close() alone is no such barrier:
            // it waits for the writer at most 2 s, which a loaded machine can miss (docs/RELIABILITY.md).
            ObjectNode shutdown = Json.object();
            shutdown.put("method", "shutdown");
            engine.callMessage(shutdown).get();
        } finally {
            engine.close();
        }

        List<FramedLine> lines = lines(data);
        Map<String, Integer> linesById = new HashMap<>();
        for (FramedLine line : lines) {
            if (line.id() != null) {
                linesById.merge(line.id(), 1, Integer::sum);
            }
        }
        Map<String, Integer> responsesById = new HashMap<>();
        int nullResponses = 0;
        List<String> written;
        synchronized (out) {
            written = List.copyOf(out);
        }
        for (String message : written) {
            JsonNode node = Json.parse(message);
            assertThat(node.isObject()).as("written %s", message).isTrue();
            assertThat(node.path("jsonrpc").asText())
                    .as("jsonrpc of %s", message)
                    .isEqualTo("2.0");
            if (node.has("method")) {
                assertThat(node.get("method").isTextual()).as(message).isTrue();
                continue;
            }
            assertThat(node.has("id")).as("a response needs an id: %s", message).isTrue();
            assertThat(node.has("result") ^ node.has("error"))
                    .as("exactly one of result and error: %s", message)
                    .isTrue();
            if (node.has("error")) {
                JsonNode error = node.get("error");
                assertThat(error.path("code").isIntegralNumber()).as(message).isTrue();
                assertThat(error.path("message").isTextual()).as(message).isTrue();
                assertThat(error.path("data").path("code").isTextual())
                        .as(message)
                        .isTrue();
                assertThat(error.path("code").asInt())
                        .as("an internal error: %s", message)
                        .isNotEqualTo(-32603);
            }
            String key = key(node.get("id"));
            if (key == null) {
                assertThat(node.get("id").isNull())
                        .as("an id the bridge made up: %s", message)
                        .isTrue();
                nullResponses++;
            } else {
                responsesById.merge(key, 1, Integer::sum);
            }
        }
        assertThat(nullResponses)
                .as("responses with id null for %d lines", lines.size())
                .isLessThanOrEqualTo(lines.size());
        for (Map.Entry<String, Integer> entry : responsesById.entrySet()) {
            assertThat(entry.getValue())
                    .as("responses with id %s", entry.getKey())
                    .isLessThanOrEqualTo(linesById.getOrDefault(entry.getKey(), 0));
        }
        for (FramedLine line : lines) {
            if (line.request() && line.id() != null && linesById.get(line.id()) == 1) {
                assertThat(responsesById.getOrDefault(line.id(), 0))
                        .as("responses to the request %s", line.text())
                        .isEqualTo(1);
            }
        }
    }

    private static int Arrays_hash(byte[] data) {
        return java.util.Arrays.hashCode(data);
    }

    private static List<FramedLine> lines(byte[] data) {
        List<FramedLine> lines = new ArrayList<>();
        int start = 0;
        for (int i = 0; i <= data.length; i++) {
            if (i == data.length || data[i] == '\n') {
                int end = i;
                if (i < data.length && end > start && data[end - 1] == '\r') {
                    end--;
                } else if (i == data.length && end > start && data[end - 1] == '\r') {
                    end--;
                }
                if (end > start || i < data.length) {
                    lines.add(line(data, start, end));
                }
                start = i + 1;
            }
        }
        return lines;
    }

    private static FramedLine line(byte[] data, int from, int to) {
        String text = new String(data, from, to - from, java.nio.charset.StandardCharsets.UTF_8);
        JsonNode node;
        try {
            node = Json.parse(data, from, to - from);
        } catch (Exception notJson) {
            return new FramedLine(text, null, false);
        }
        if (!node.isObject() || !node.has("id")) {
            return new FramedLine(text, null, false);
        }
        String id = key(node.get("id"));
        boolean request = id != null
                && node.path("jsonrpc").isTextual()
                && node.path("jsonrpc").textValue().equals("2.0")
                && node.path("method").isTextual();
        return new FramedLine(text, id, request);
    }

    /** The id as the bridge echoes it (Envelope.normalizeId), or null for an id it refuses. */
    private static @Nullable String key(@Nullable JsonNode id) {
        if (id == null || id.isNull()) {
            return null;
        }
        if (id.isTextual()) {
            return "s:" + id.textValue();
        }
        if (!id.isNumber()) {
            return null;
        }
        if ((id.isDouble() || id.isFloat()) && !Double.isFinite(id.doubleValue())) {
            return null;
        }
        BigDecimal value = id.decimalValue();
        if (value.abs().compareTo(BigDecimal.valueOf(9_007_199_254_740_991L)) > 0) {
            return null;
        }
        BigDecimal stripped = value.stripTrailingZeros();
        if (stripped.scale() <= 0) {
            return "n:" + stripped.toBigInteger();
        }
        return "n:"
                + BigDecimal.valueOf(value.doubleValue()).stripTrailingZeros().toPlainString();
    }
}
