package dev.oam.core.model;

import dev.oam.core.agent.AgentException;
import dev.oam.core.agent.CancellationToken;

/**
 * The SPI every model backend implements. One call runs one inference step. Implementations
 * must be safe to call from several sessions' threads at once and must honour the token promptly.
 */
public interface LanguageModel {
    ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token) throws AgentException;

    ModelAvailability availability();
}
