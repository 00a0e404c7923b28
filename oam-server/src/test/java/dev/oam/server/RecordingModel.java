package dev.oam.server;

import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * Records what each step sees and plays a scripted model. With {@code holdUntilCancelled} every step instead waits for
 * its token, which is how a test watches a disconnect or a timeout cancel generation.
 */
final class RecordingModel implements LanguageModel {
    final List<ModelRequest> requests = new CopyOnWriteArrayList<>();
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch cancelled = new CountDownLatch(1);
    private final LanguageModel script;
    private final boolean holdUntilCancelled;

    RecordingModel(LanguageModel script, boolean holdUntilCancelled) {
        this.script = script;
        this.holdUntilCancelled = holdUntilCancelled;
    }

    @Override
    public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
            throws AgentException {
        requests.add(request);
        if (holdUntilCancelled) {
            CountDownLatch wake = new CountDownLatch(1);
            token.onCancel(wake::countDown);
            started.countDown();
            try {
                wake.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            cancelled.countDown();
            throw AgentException.cancelled();
        }
        started.countDown();
        return script.respond(request, listener, token);
    }

    @Override
    public ModelAvailability availability() {
        return script.availability();
    }
}
