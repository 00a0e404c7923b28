package dev.oam.core.model;

import dev.oam.core.agent.AgentException;
import dev.oam.core.agent.CancellationToken;

/**
 * The SPI every model backend implements. One call runs one inference step. Implementations
 * must be safe to call from several sessions' threads at once and must honour the token promptly.
 */
public interface LanguageModel {
    /** The context size used when nothing else is known, as on the original's on-device model. */
    int DEFAULT_CONTEXT_SIZE = 8192;

    ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token) throws AgentException;

    ModelAvailability availability();

    /** Tokens the model's context holds (instructions, tools, history and the answer together). */
    default int contextSize() {
        return DEFAULT_CONTEXT_SIZE;
    }

    /** Input tokens of a step: exact for models with a tokenizer, {@link Tokens#estimate(ModelRequest)} otherwise. */
    default int countTokens(ModelRequest request) {
        return Tokens.estimate(request);
    }

    /** Whether an answer that does not fit its schema may be generated again (within {@code maxAttempts}). */
    default boolean retriesInvalidOutput() {
        return true;
    }
}
