package dev.oam.core.testing;

import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import java.util.ArrayList;
import java.util.List;

/** Wraps a model and records every request it saw and every response or failure it produced. */
public final class RecordingModel implements LanguageModel {
    private final LanguageModel delegate;
    private final List<ModelRequest> requests = new ArrayList<>(); // guarded by this
    private final List<ModelResponse> responses = new ArrayList<>(); // guarded by this
    private final List<AgentException> failures = new ArrayList<>(); // guarded by this

    public RecordingModel(LanguageModel delegate) {
        this.delegate = delegate;
    }

    @Override
    public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
            throws AgentException {
        synchronized (this) {
            requests.add(request);
        }
        try {
            ModelResponse response = delegate.respond(request, listener, token);
            synchronized (this) {
                responses.add(response);
            }
            return response;
        } catch (AgentException e) {
            synchronized (this) {
                failures.add(e);
                notifyAll();
            }
            throw e;
        }
    }

    @Override
    public ModelAvailability availability() {
        return delegate.availability();
    }

    public synchronized List<ModelRequest> requests() {
        return List.copyOf(requests);
    }

    public synchronized List<ModelResponse> responses() {
        return List.copyOf(responses);
    }

    public synchronized List<AgentException> failures() {
        return List.copyOf(failures);
    }

    /** Waits until the model has failed {@code count} times. */
    public synchronized void awaitFailures(int count) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (failures.size() < count) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("expected " + count + " model failures, got " + failures.size());
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }
}
