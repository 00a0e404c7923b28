package dev.oam.core.testing;

import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A model with a tiny context and exact, obvious token counts, so that context trimming can be tested cheaply: a piece
 * of text costs one token per character, and an entry costs the characters of its text (a tool-call step: each call's
 * name plus its compact JSON arguments), with no framing. Each step plays the next queued {@link Reply}; when none is
 * left it answers {@code "ok"}.
 *
 * <p>Thread-safe: it records every request and how often each entry was counted.
 */
public final class TinyContextModel implements LanguageModel {
    /** One inference step: streams through {@code listener} and returns the step's response. */
    @FunctionalInterface
    public interface Reply {
        ModelResponse play(ModelRequest request, ModelListener listener) throws AgentException;
    }

    private final int contextSize;
    private final boolean retriesInvalidOutput;
    private final Deque<Reply> replies = new ArrayDeque<>(); // guarded by this
    private final List<ModelRequest> requests = new ArrayList<>(); // guarded by this
    private final Map<TranscriptEntry, Integer> entryCounts = new IdentityHashMap<>(); // guarded by this

    private TinyContextModel(int contextSize, boolean retriesInvalidOutput) {
        this.contextSize = contextSize;
        this.retriesInvalidOutput = retriesInvalidOutput;
    }

    /** A model that, like the scripted one, never regenerates an answer that does not fit its schema. */
    public static TinyContextModel withContext(int contextSize) {
        return new TinyContextModel(contextSize, false);
    }

    /** A model whose invalid structured answers may be generated again (within {@code maxAttempts}). */
    public static TinyContextModel retryingInvalidOutput(int contextSize) {
        return new TinyContextModel(contextSize, true);
    }

    /** Queues the replies of the next steps, in order. */
    public synchronized TinyContextModel then(Reply... next) {
        replies.addAll(List.of(next));
        return this;
    }

    // ---- replies ----

    /** Answers {@code text} in one delta. */
    public static Reply answer(String text) {
        return streamed(text);
    }

    /** Answers the concatenation of {@code deltas}, streamed one delta at a time. */
    public static Reply streamed(String... deltas) {
        return (request, listener) -> {
            for (String delta : deltas) {
                listener.onText(delta);
            }
            return new ModelResponse.Answer(String.join("", deltas), null, usage(request));
        };
    }

    /** Calls tools. */
    public static Reply calls(ToolCall... calls) {
        return (request, listener) -> new ModelResponse.ToolCalls(List.of(calls), usage(request));
    }

    /** Fails the step. */
    public static Reply failure(ErrorCode code, String message) {
        return (request, listener) -> {
            throw new AgentException(code, message);
        };
    }

    private static Usage usage(ModelRequest request) {
        return new Usage(request.inputTokens(), 0, 1);
    }

    // ---- what the agent asked ----

    public synchronized List<ModelRequest> requests() {
        return List.copyOf(requests);
    }

    public synchronized ModelRequest lastRequest() {
        if (requests.isEmpty()) {
            throw new AssertionError("the model was never asked");
        }
        return requests.get(requests.size() - 1);
    }

    /** How often {@link #countTokens(TranscriptEntry)} was called for this very entry. */
    public synchronized int timesCounted(TranscriptEntry entry) {
        return entryCounts.getOrDefault(entry, 0);
    }

    /** The tokens of an entry as this model counts them. */
    public static int tokens(TranscriptEntry entry) {
        return switch (entry) {
            case TranscriptEntry.Prompt p -> p.text().length();
            case TranscriptEntry.Response r -> r.text().length();
            case TranscriptEntry.ToolOutput o -> o.text().length();
            case TranscriptEntry.ToolCalls c ->
                c.calls().stream()
                        .mapToInt(call -> call.name().length()
                                + Json.write(call.arguments()).length())
                        .sum();
        };
    }

    // ---- LanguageModel ----

    @Override
    public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
            throws AgentException {
        Reply reply;
        synchronized (this) {
            requests.add(request);
            reply = replies.poll();
        }
        token.check();
        return (reply == null ? answer("ok") : reply).play(request, listener);
    }

    @Override
    public ModelAvailability availability() {
        return ModelAvailability.ready(contextSize, "tiny", List.of());
    }

    @Override
    public int contextSize() {
        return contextSize;
    }

    @Override
    public int countTokens(String text) {
        return text.length();
    }

    @Override
    public int countTokens(TranscriptEntry entry) {
        synchronized (this) {
            entryCounts.merge(entry, 1, Integer::sum);
        }
        return tokens(entry);
    }

    @Override
    public boolean retriesInvalidOutput() {
        return retriesInvalidOutput;
    }
}
