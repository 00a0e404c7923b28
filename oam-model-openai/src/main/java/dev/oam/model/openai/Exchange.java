package dev.oam.model.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One HTTP request to the server, abortable: cancelling the token or running out of time cancels the exchange and
 * closes the response body, which wakes a read blocked on it. Runs on the caller's thread (a session's virtual thread);
 * the abort runs on the canceller's thread or the timer thread.
 */
final class Exchange {
    /** Largest whole (non-streamed) response body read. */
    static final int MAX_BODY = 64 * 1024 * 1024;

    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private final HttpClient http;
    private final ScheduledExecutorService timers;
    private final Settings settings;

    Exchange(HttpClient http, ScheduledExecutorService timers, Settings settings) {
        this.http = http;
        this.timers = timers;
        this.settings = settings;
    }

    static HttpClient newClient() {
        return HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(CONNECT_TIMEOUT)
                .followRedirects(HttpClient.Redirect.NEVER)
                .build();
    }

    HttpRequest.Builder request(URI uri, Duration timeout) {
        HttpRequest.Builder builder = HttpRequest.newBuilder(uri);
        if (!timeout.isZero()) {
            builder.timeout(timeout);
        }
        settings.headers().forEach(builder::header);
        if (settings.apiKey().isPresent()) {
            builder.header("Authorization", "Bearer " + settings.apiKey().reveal());
        }
        return builder;
    }

    /** POSTs a chat completion and assembles the answer; streamed text goes to {@code onContent} as it arrives. */
    CompletionAnswer chat(ObjectNode body, boolean stream, Consumer<String> onContent, CancellationToken token)
            throws AgentException, HttpFailure {
        HttpRequest request = request(settings.resolve("/chat/completions"), settings.timeout())
                .header("Content-Type", "application/json")
                .header("Accept", stream ? "text/event-stream" : "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(
                        Json.write(body).getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                .build();
        Abort abort = new Abort();
        CompletableFuture<HttpResponse<InputStream>> future =
                http.sendAsync(request, HttpResponse.BodyHandlers.ofInputStream());
        abort.future = future;
        Runnable onCancel = abort::run;
        token.onCancel(onCancel);
        ScheduledFuture<?> timer = schedule(abort);
        try {
            HttpResponse<InputStream> response = await(future, abort, token);
            InputStream in = response.body();
            if (!abort.attach(in)) {
                throw interrupted(abort, token, null);
            }
            try (in) {
                if (response.statusCode() >= 400) {
                    throw failure(response.statusCode(), response.headers(), readBody(in));
                }
                CompletionAnswer completion = new CompletionAnswer();
                String type =
                        response.headers().firstValue("Content-Type").orElse("").toLowerCase(Locale.ROOT);
                if (type.contains("text/event-stream")) {
                    readStream(in, completion, onContent);
                } else {
                    JsonNode json = parse(readBody(in));
                    completion.applyResponse(json);
                    if (stream && !completion.content.isEmpty()) {
                        onContent.accept(completion.content.toString());
                    }
                }
                return completion;
            } catch (IOException e) {
                throw interrupted(abort, token, e);
            }
        } finally {
            token.removeListener(onCancel);
            if (timer != null) {
                timer.cancel(false);
            }
            abort.finish();
        }
    }

    /** GETs a JSON document (the model list) within {@code timeout}; not cancellable, so keep the timeout short. */
    CompletableFuture<HttpResponse<String>> get(String path, Duration timeout) {
        HttpRequest request = request(settings.resolve(path), timeout)
                .header("Accept", "application/json")
                .GET()
                .build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    private @Nullable ScheduledFuture<?> schedule(Abort abort) {
        if (settings.timeout().isZero()) {
            return null;
        }
        try {
            return timers.schedule(
                    () -> {
                        abort.timedOut = true;
                        abort.run();
                    },
                    settings.timeout().toNanos(),
                    TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            return null; // the backend is closing; the request is aborted by the client's shutdown
        }
    }

    private HttpResponse<InputStream> await(
            CompletableFuture<HttpResponse<InputStream>> future, Abort abort, CancellationToken token)
            throws AgentException {
        try {
            return future.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abort.run();
            throw AgentException.cancelled();
        } catch (CancellationException e) {
            throw interrupted(abort, token, null);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (abort.timedOut || token.isCancelled()) {
                throw interrupted(abort, token, null);
            }
            throw connectionFailure(cause);
        }
    }

    /** Why reading stopped: cancelled, timed out, or the connection broke. */
    private AgentException interrupted(Abort abort, CancellationToken token, @Nullable IOException error) {
        if (token.isCancelled()) {
            return AgentException.cancelled();
        }
        if (abort.timedOut) {
            return new AgentException(
                    ErrorCode.GENERATION_FAILED,
                    "The model server at " + settings.displayUrl()
                            + " did not finish answering within " + seconds(settings.timeout())
                            + " s; the model's timeoutSeconds sets this limit per request.");
        }
        return new AgentException(
                ErrorCode.GENERATION_FAILED,
                "The connection to the model server at " + settings.displayUrl()
                        + " broke before the answer was complete"
                        + (error == null || error.getMessage() == null
                                ? "."
                                : " (" + Failures.shorten(settings.apiKey().redact(error.getMessage())) + ")."));
    }

    AgentException connectionFailure(@Nullable Throwable cause) {
        if (cause instanceof HttpTimeoutException && !(cause instanceof HttpConnectTimeoutException)) {
            return new AgentException(
                    ErrorCode.GENERATION_FAILED,
                    "The model server at " + settings.displayUrl()
                            + " did not answer within " + seconds(settings.timeout())
                            + " s; the model's timeoutSeconds sets this limit per request.");
        }
        String why = cause instanceof ConnectException
                        || cause instanceof HttpConnectTimeoutException
                        || cause instanceof UnresolvedAddressException
                        || (cause != null && cause.getCause() instanceof UnresolvedAddressException)
                ? describe(cause)
                : "the connection failed: " + describe(cause);
        return new AgentException(
                ErrorCode.MODEL_UNAVAILABLE,
                "Cannot reach the model server at " + settings.displayUrl() + " (" + why
                        + "). Start the server, or check 'baseUrl'.");
    }

    private String describe(@Nullable Throwable cause) {
        if (cause == null) {
            return "unknown error";
        }
        if (cause instanceof ConnectException) {
            return "connection refused";
        }
        if (cause instanceof HttpConnectTimeoutException) {
            return "connect timed out";
        }
        if (cause instanceof UnresolvedAddressException || cause.getCause() instanceof UnresolvedAddressException) {
            return "unknown host";
        }
        String message = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
        return Failures.shorten(settings.apiKey().redact(message));
    }

    static void readStream(InputStream in, CompletionAnswer completion, Consumer<String> onContent)
            throws IOException, HttpFailure {
        SseReader reader = new SseReader(in);
        for (SseReader.Event event = reader.next(); event != null; event = reader.next()) {
            String data = event.data().strip();
            if (data.equals("[DONE]")) {
                completion.done = true;
                return;
            }
            if (data.isEmpty()) {
                continue;
            }
            JsonNode chunk;
            try {
                chunk = Json.parse(data);
            } catch (IOException e) {
                if (event.name().equals("error")) {
                    throw new HttpFailure(0, null, data, Failures.NO_HEADERS);
                }
                throw new HttpFailure(
                        0, null, "The server sent a stream chunk that is not JSON: " + data, Failures.NO_HEADERS);
            }
            completion.applyChunk(chunk, onContent);
        }
        if (completion.finishReason == null) {
            // No [DONE] and no finish_reason: the connection closed mid-answer.
            throw new IOException("the stream ended before the answer was complete");
        }
    }

    private static String readBody(InputStream in) throws IOException {
        byte[] bytes = in.readNBytes(MAX_BODY);
        return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
    }

    private static JsonNode parse(String body) throws HttpFailure {
        try {
            return Json.parse(body);
        } catch (IOException e) {
            throw new HttpFailure(0, null, "The server's answer is not JSON: " + body, Failures.NO_HEADERS);
        }
    }

    static HttpFailure failure(int status, java.net.http.HttpHeaders headers, String body) {
        String message = body.strip();
        String code = null;
        try {
            JsonNode json = Json.parse(body);
            JsonNode error = json.has("error") ? json.get("error") : json;
            message = CompletionAnswer.errorMessage(error);
            code = CompletionAnswer.errorCode(error);
            if (json.has("detail") && json.get("detail").isTextual()) {
                message = json.get("detail").textValue(); // FastAPI-style servers
            }
        } catch (IOException | RuntimeException e) {
            // not JSON: the text is the message
        }
        if (message.isBlank()) {
            message = "HTTP " + status;
        }
        return new HttpFailure(status, code, message, headers);
    }

    static String seconds(Duration duration) {
        return dev.oam.core.json.Durations.seconds(duration);
    }

    /**
     * Aborts the exchange from another thread: cancels the request and closes the body (which wakes a blocked read).
     */
    private static final class Abort implements Runnable {
        private final Object lock = new Object();
        volatile boolean timedOut;
        volatile @Nullable CompletableFuture<?> future;
        private @Nullable InputStream body; // guarded by lock
        private boolean aborted; // guarded by lock
        private boolean finished; // guarded by lock

        @Override
        public void run() {
            InputStream toClose;
            synchronized (lock) {
                if (aborted || finished) {
                    return;
                }
                aborted = true;
                toClose = body;
            }
            CompletableFuture<?> f = future;
            if (f != null) {
                f.cancel(true);
            }
            closeQuietly(toClose);
        }

        /** Hands over the body; false when the exchange was aborted already (the body is then closed). */
        boolean attach(InputStream in) {
            synchronized (lock) {
                if (!aborted) {
                    body = in;
                    return true;
                }
            }
            closeQuietly(in);
            return false;
        }

        void finish() {
            synchronized (lock) {
                finished = true;
            }
        }

        private static void closeQuietly(@Nullable InputStream in) {
            if (in == null) {
                return;
            }
            try {
                in.close();
            } catch (IOException | RuntimeException e) {
                // aborting anyway
            }
        }
    }
}
