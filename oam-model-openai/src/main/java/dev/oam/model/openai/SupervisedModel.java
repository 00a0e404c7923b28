package dev.oam.model.openai;

import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * A session's model on a {@link SupervisedServer}: each step waits for the server (starting it again if it died) and
 * runs through an {@link OpenAIModel} on its current address. A step whose server dies under it fails with
 * {@code model_unavailable} saying so; the next step runs on the new server.
 *
 * <p>Thread safety: steps of several sessions run at once; the delegate for the current server is swapped under
 * {@code this}.
 */
final class SupervisedModel implements LanguageModel {
    private final SupervisedServer server;
    private final Function<java.net.URI, OpenAIModel> models;
    private final int contextSize;
    private final List<String> warnings;
    private SupervisedServer.@Nullable Running current; // guarded by this
    private @Nullable OpenAIModel delegate; // guarded by this

    SupervisedModel(
            SupervisedServer server,
            Function<java.net.URI, OpenAIModel> models,
            int contextSize,
            List<String> warnings) {
        this.server = server;
        this.models = models;
        this.contextSize = contextSize;
        this.warnings = List.copyOf(warnings);
    }

    @Override
    public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
            throws AgentException {
        SupervisedServer.Running running = server.ready(token);
        OpenAIModel model = delegate(running);
        try {
            return model.respond(request, listener, token);
        } catch (AgentException e) {
            if (e.code() == ErrorCode.CANCELLED || token.isCancelled()) {
                throw e;
            }
            String died = server.died(running);
            if (died != null) {
                throw new AgentException(ErrorCode.MODEL_UNAVAILABLE, died);
            }
            throw e;
        }
    }

    private synchronized OpenAIModel delegate(SupervisedServer.Running running) {
        if (current != running || delegate == null) {
            current = running;
            delegate = models.apply(running.baseUrl());
        }
        return delegate;
    }

    @Override
    public dev.oam.core.model.ModelState.Saved saveState(
            dev.oam.core.model.@org.jspecify.annotations.Nullable ModelRequest lastStep, java.nio.file.Path file) {
        return dev.oam.core.model.ModelState.notSaved(OpenAIModel.STATE_NOT_AVAILABLE);
    }

    @Override
    public ModelAvailability availability() {
        boolean[] loading = {false};
        String why = server.notRunning(loading);
        if (why != null) {
            return loading[0] ? ModelAvailability.loading(why) : ModelAvailability.unavailable("model_not_ready", why);
        }
        OpenAIModel model;
        synchronized (this) {
            model = delegate;
        }
        // Running, but no step has run yet: the first step makes the delegate.
        return model != null
                ? model.availability()
                : ModelAvailability.ready(contextSize, server.alias(), OpenAIModel.LANGUAGES);
    }

    @Override
    public int contextSize() {
        return contextSize;
    }

    @Override
    public List<String> warnings() {
        return warnings;
    }

    /** For tests: the server this model runs on. */
    SupervisedServer server() {
        return server;
    }
}
