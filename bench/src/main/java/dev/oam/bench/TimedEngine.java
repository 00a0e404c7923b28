package dev.oam.bench;

import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.prompt.ChatMessage;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The real engine behind {@code LlamaLanguageModel}, passed through with two additions for the benchmark: it notes when
 * the first delta reaches the adapter and what the last generation asked and returned, and in capture mode it records
 * the request the adapter built (prompt, grammar, sampling) and stops there, so the raw side can run exactly the same
 * request. Used by one benchmark thread at a time.
 */
final class TimedEngine implements Engine {
    /** Thrown in capture mode once the request is recorded; never escapes {@link #capture}. */
    private static final class Captured extends RuntimeException {
        Captured() {
            super(null, null, false, false);
        }
    }

    private final Engine delegate;
    private boolean capturing;
    private @Nullable EngineRequest lastRequest;
    private @Nullable EngineResult lastResult;
    private long firstDeltaNanos;
    private long lastDeltaNanos;

    TimedEngine(Engine delegate) {
        this.delegate = delegate;
    }

    /** Runs {@code step} (which calls the adapter) only up to the engine call; returns the request it would send. */
    EngineRequest capture(Step step) throws AgentException {
        capturing = true;
        lastRequest = null;
        try {
            step.run();
            throw new IllegalStateException("the adapter returned without calling the engine");
        } catch (Captured expected) {
            EngineRequest request = lastRequest;
            if (request == null) {
                throw new IllegalStateException("no request captured");
            }
            return request;
        } finally {
            capturing = false;
        }
    }

    @FunctionalInterface
    interface Step {
        void run() throws AgentException;
    }

    /** Forgets the last generation; call before each measured step. */
    void reset() {
        lastRequest = null;
        lastResult = null;
        firstDeltaNanos = 0;
        lastDeltaNanos = 0;
    }

    /** {@link System#nanoTime()} when the first delta of the last generation was handed to the adapter; 0 if none. */
    long firstDeltaNanos() {
        return firstDeltaNanos;
    }

    /** {@link System#nanoTime()} when the last delta of the last generation was handed to the adapter; 0 if none. */
    long lastDeltaNanos() {
        return lastDeltaNanos;
    }

    @Nullable
    EngineResult lastResult() {
        return lastResult;
    }

    @Nullable
    EngineRequest lastRequest() {
        return lastRequest;
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public int contextSize() {
        return delegate.contextSize();
    }

    @Override
    public int countTokens(String text) {
        return delegate.countTokens(text);
    }

    @Override
    public String renderChat(List<ChatMessage> messages) {
        return delegate.renderChat(messages);
    }

    @Override
    public Set<String> controlTokens() {
        return delegate.controlTokens();
    }

    @Override
    public EngineResult generate(
            EngineRequest request, Object sessionKey, Consumer<String> onDelta, CancellationToken token)
            throws AgentException {
        lastRequest = request;
        if (capturing) {
            throw new Captured();
        }
        EngineResult result = delegate.generate(
                request,
                sessionKey,
                delta -> {
                    long now = System.nanoTime();
                    if (firstDeltaNanos == 0) {
                        firstDeltaNanos = now;
                    }
                    lastDeltaNanos = now;
                    onDelta.accept(delta);
                },
                token);
        lastResult = result;
        return result;
    }
}
