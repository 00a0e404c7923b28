package dev.oam.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.LinkedBlockingQueue;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;

/**
 * One streamed completion ({@code stream: true}). The model's text callbacks only queue events; a writer thread of this
 * request sends them, so a slow client never stalls the thread that generates (llama.cpp's engine serves every slot
 * from one thread). The 200 status goes out with the first event: a failure before it is an ordinary HTTP error, a
 * later one a {@code data: {"error": …}} event, and every stream ends with {@code data: [DONE]}.
 */
final class SseStream {
    private static final byte[] END = new byte[0];

    private final Response response;
    private final Callback callback;
    private final @Nullable String origin;
    private final ChatRequest chat;
    private final CompletionCall completion;
    private final String id;
    private final long created;
    private final OpenAIServer.CorsHeaders cors;
    private final DisconnectProbe probe;
    private final LinkedBlockingQueue<byte[]> events = new LinkedBlockingQueue<>();
    private volatile boolean started;
    private boolean finished;
    private volatile @Nullable IOException writeFailure;

    SseStream(
            Response response,
            Callback callback,
            @Nullable String origin,
            ChatRequest chat,
            CompletionCall completion,
            String id,
            long created,
            OpenAIServer.CorsHeaders cors,
            DisconnectProbe probe) {
        this.probe = probe;
        this.response = response;
        this.callback = callback;
        this.origin = origin;
        this.chat = chat;
        this.completion = completion;
        this.id = id;
        this.created = created;
        this.cors = cors;
    }

    void run() throws ApiError, CompletionCall.ClientGone, InterruptedException {
        try {
            stream();
        } finally {
            if (started && !finished) {
                // The step failed in a way that is not the client's business (client gone, a bug): stop the writer.
                events.add(END);
            }
        }
    }

    private void stream() throws ApiError, CompletionCall.ClientGone, InterruptedException {
        CompletionCall.Result result;
        try {
            result = completion.run(delta -> {
                if (!started) {
                    start();
                }
                event(content(delta));
            });
        } catch (ApiError e) {
            if (!started) {
                throw e;
            }
            event(Json.write(e.envelope()));
            finish();
            return;
        }
        if (!started) {
            start();
        }
        if (result.refusal() != null) {
            ObjectNode delta = Json.object();
            delta.put("refusal", result.refusal());
            event(chunk(delta, null));
        }
        for (int i = 0; i < result.toolCalls().size(); i++) {
            ToolCall call = result.toolCalls().get(i);
            // As OpenAI sends them: id and name first, then the arguments, each delta naming its index.
            ObjectNode opening = Json.object();
            opening.putArray("tool_calls").add(Chunks.toolCall(call, i, false));
            event(chunk(opening, null));
            ObjectNode arguments = Json.object();
            ObjectNode part = arguments.putArray("tool_calls").addObject();
            part.put("index", i);
            part.putObject("function").put("arguments", Json.write(call.arguments()));
            event(chunk(arguments, null));
        }
        event(chunk(Json.object(), result.finishReason()));
        if (chat.includeUsage()) {
            event(Json.write(Chunks.usageChunk(id, created, chat.model(), result.usage())));
        }
        finish();
    }

    private Thread writerThread;

    /** Commits the 200 and starts the writer; the role chunk is the first event. */
    private void start() {
        started = true;
        // From here on a write that fails tells of a client gone.
        probe.close();
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream; charset=utf-8");
        response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
        response.getHeaders().put("X-Accel-Buffering", "no");
        cors.apply(response.getHeaders(), origin);
        ObjectNode role = Json.object();
        role.put("role", "assistant");
        role.put("content", "");
        event(chunk(role, null));
        writerThread = Thread.ofVirtual().name("oam-serve-sse").start(this::write);
    }

    private String content(String delta) {
        ObjectNode node = Json.object();
        node.put("content", delta);
        return chunk(node, null);
    }

    private String chunk(ObjectNode delta, @Nullable String finishReason) {
        return Json.write(Chunks.chunk(id, created, chat.model(), chat.includeUsage(), delta, finishReason));
    }

    private void event(String json) {
        events.add(("data: " + json + "\n\n").getBytes(StandardCharsets.UTF_8));
    }

    /** Queues {@code [DONE]}, waits for the writer and completes the response. */
    private void finish() throws InterruptedException, CompletionCall.ClientGone {
        event("[DONE]");
        events.add(END);
        finished = true;
        writerThread.join();
        if (writeFailure != null) {
            throw new CompletionCall.ClientGone();
        }
        callback.succeeded();
    }

    private void write() {
        try (OutputStream out = OpenAIServer.body(response)) {
            while (true) {
                byte[] event = events.take();
                if (event == END) {
                    break;
                }
                out.write(event);
                if (events.isEmpty()) {
                    out.flush();
                }
            }
        } catch (IOException e) {
            writeFailure = e;
            completion.interrupt(CompletionCall.Interruption.CLIENT_GONE);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
