package dev.oam.core.model;

import dev.oam.core.ErrorCode;

/** Stands in for a model that cannot run: every step fails with {@code -32001 model_unavailable}. */
public record UnavailableModel(ModelAvailability availability) implements LanguageModel {
    @Override
    public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
            throws AgentException {
        throw new AgentException(
                ErrorCode.MODEL_UNAVAILABLE,
                availability.message() != null ? availability.message() : "The model is not available.");
    }
}
