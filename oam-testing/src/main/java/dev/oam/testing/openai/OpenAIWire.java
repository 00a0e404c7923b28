package dev.oam.testing.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.oam.core.json.Json;
import dev.oam.testing.openai.FakeOpenAIServer.Call;
import dev.oam.testing.openai.FakeOpenAIServer.Quirk;
import dev.oam.testing.openai.FakeOpenAIServer.Recorded;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntSupplier;

/**
 * The wire form of {@link FakeOpenAIServer}'s answers: chat completions as one JSON body or as an SSE stream written in
 * awkward byte pieces, usage, call ids and error bodies, shaped by the server's quirks.
 */
final class OpenAIWire {
    private final Set<Quirk> quirks;
    private final IntSupplier chatCount;
    private volatile int[] pieces = {1, 2, 3, 5, 8, 13};
    private volatile int promptTokens = 120;
    private volatile int cachedTokens = 96;

    /** @param chatCount the number of chat requests so far, which call ids carry */
    OpenAIWire(Set<Quirk> quirks, IntSupplier chatCount) {
        this.quirks = quirks;
        this.chatCount = chatCount;
    }

    /** The sizes of the byte pieces a stream is written in, used in turn. */
    void pieces(int... sizes) {
        this.pieces = sizes;
    }

    /** The prompt and cached token counts every answer reports. */
    void usage(int prompt, int cached) {
        this.promptTokens = prompt;
        this.cachedTokens = cached;
    }

    /**
     * Answers a chat request with this content, calls and finish reason (and a refusal when not null): one JSON body,
     * or an SSE stream when the request asked for one.
     */
    void answer(
            HttpExchange exchange, Recorded request, String content, List<Call> calls, String finish, String refusal)
            throws IOException {
        int completion = Math.max(1, content.length() / 4 + calls.size() * 8);
        if (!request.streamed()) {
            ObjectNode response = Json.object();
            response.put("id", "chatcmpl-fake");
            response.put("object", "chat.completion");
            response.put("model", request.body().path("model").asText());
            ObjectNode choice = response.putArray("choices").addObject();
            choice.put("index", 0);
            ObjectNode message = choice.putObject("message");
            message.put("role", "assistant");
            if (calls.isEmpty()) {
                message.put("content", content);
            } else {
                message.putNull("content");
                ArrayNode toolCalls = message.putArray("tool_calls");
                for (int i = 0; i < calls.size(); i++) {
                    ObjectNode call = toolCalls.addObject();
                    call.put("id", id(i));
                    call.put("type", "function");
                    call.putObject("function")
                            .put("name", calls.get(i).name())
                            .put("arguments", calls.get(i).arguments());
                }
            }
            if (refusal != null) {
                message.put("refusal", refusal);
            }
            choice.put("finish_reason", finish);
            response.set("usage", usage(completion));
            send(exchange, 200, response, Map.of());
            return;
        }
        startStream(exchange);
        List<String> events = new ArrayList<>();
        ObjectNode role = chunk(request);
        role.withArray("choices").addObject().put("index", 0).putObject("delta").put("role", "assistant");
        events.add(Json.write(role));
        events.addAll(textChunks(content));
        if (refusal != null) {
            for (String piece : split(refusal, 5)) {
                ObjectNode c = chunk(request);
                c.withArray("choices")
                        .addObject()
                        .put("index", 0)
                        .putObject("delta")
                        .put("refusal", piece);
                events.add(Json.write(c));
            }
        }
        for (int i = 0; i < calls.size(); i++) {
            Call call = calls.get(i);
            ObjectNode first = chunk(request);
            ObjectNode delta =
                    first.withArray("choices").addObject().put("index", 0).putObject("delta");
            ObjectNode item = delta.putArray("tool_calls").addObject();
            if (!quirks.contains(Quirk.NO_INDEX)) {
                item.put("index", i);
            }
            item.put("id", id(i));
            item.put("type", "function");
            item.putObject("function").put("name", call.name()).put("arguments", "");
            events.add(Json.write(first));
            for (String piece : split(call.arguments(), 4)) {
                ObjectNode c = chunk(request);
                ObjectNode d =
                        c.withArray("choices").addObject().put("index", 0).putObject("delta");
                ObjectNode part = d.putArray("tool_calls").addObject();
                if (!quirks.contains(Quirk.NO_INDEX)) {
                    part.put("index", i);
                }
                part.putObject("function").put("arguments", piece);
                events.add(Json.write(c));
            }
        }
        ObjectNode end = chunk(request);
        end.withArray("choices")
                .addObject()
                .put("index", 0)
                .put("finish_reason", finish)
                .putObject("delta");
        events.add(Json.write(end));
        if (request.body().path("stream_options").path("include_usage").asBoolean(false)) {
            ObjectNode usage = chunk(request);
            usage.putArray("choices");
            usage.set("usage", usage(completion));
            events.add(Json.write(usage));
        }
        events.add("[DONE]");
        try (OutputStream out = exchange.getResponseBody()) {
            write(out, events);
        }
    }

    private String id(int i) {
        return quirks.contains(Quirk.EMPTY_IDS) ? "" : "call_fake" + (chatCount.getAsInt()) + "_" + i;
    }

    private ObjectNode usage(int completion) {
        ObjectNode usage = Json.object();
        usage.put("prompt_tokens", promptTokens);
        usage.put("completion_tokens", completion);
        usage.put("total_tokens", promptTokens + completion);
        usage.putObject("prompt_tokens_details").put("cached_tokens", cachedTokens);
        return usage;
    }

    private static ObjectNode chunk(Recorded request) {
        ObjectNode chunk = Json.object();
        chunk.put("id", "chatcmpl-fake");
        chunk.put("object", "chat.completion.chunk");
        chunk.put("model", request.body().path("model").asText());
        return chunk;
    }

    static List<String> textChunks(String content) {
        List<String> events = new ArrayList<>();
        for (String piece : split(content, 3)) {
            ObjectNode c = Json.object();
            c.put("object", "chat.completion.chunk");
            c.putArray("choices").addObject().put("index", 0).putObject("delta").put("content", piece);
            events.add(Json.write(c));
        }
        return events;
    }

    /** Splits by code points so a piece never cuts a surrogate pair (the byte writer cuts characters instead). */
    static List<String> split(String text, int size) {
        List<String> pieces = new ArrayList<>();
        int[] cps = text.codePoints().toArray();
        for (int i = 0; i < cps.length; i += size) {
            pieces.add(new String(cps, i, Math.min(size, cps.length - i)));
        }
        return pieces;
    }

    static void startStream(HttpExchange exchange) throws IOException {
        exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
        exchange.getResponseHeaders().add("Cache-Control", "no-cache");
        exchange.sendResponseHeaders(200, 0);
    }

    /** Writes SSE events in small byte pieces (cutting lines, CRLFs and UTF-8 characters), flushing each. */
    void write(OutputStream out, List<String> events) throws IOException {
        String eol = quirks.contains(Quirk.CRLF) ? "\r\n" : "\n";
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (String event : events) {
            if (quirks.contains(Quirk.CRLF)) {
                all.writeBytes((": keep-alive" + eol).getBytes(StandardCharsets.UTF_8));
            }
            all.writeBytes(("data: " + event + eol + eol).getBytes(StandardCharsets.UTF_8));
        }
        byte[] bytes = all.toByteArray();
        int[] sizes = pieces;
        int k = 0;
        for (int i = 0; i < bytes.length; ) {
            int n = Math.min(sizes[k++ % sizes.length], bytes.length - i);
            out.write(bytes, i, n);
            out.flush();
            i += n;
        }
    }

    static ObjectNode error(String code, String message) {
        ObjectNode error = Json.object();
        error.putObject("error")
                .put("message", message)
                .put("type", "invalid_request_error")
                .put("code", code);
        return error;
    }

    static void send(HttpExchange exchange, int status, JsonNode body, Map<String, String> headers) throws IOException {
        byte[] bytes = Json.write(body).getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        headers.forEach((k, v) -> exchange.getResponseHeaders().add(k, v));
        exchange.sendResponseHeaders(status, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
