package dev.oam.core.model;

import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;

/**
 * The SPI every model backend implements. One call runs one inference step. Implementations must be safe to call from
 * several sessions' threads at once and must honour the token promptly.
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

    /** Tokens of a piece of text: exact for models with a tokenizer, {@link Tokens#estimate(String)} otherwise. */
    default int countTokens(String text) {
        return Tokens.estimate(text);
    }

    /**
     * Tokens one transcript entry takes in a prompt, framing included. Callers cache the answer per entry, so an
     * implementation may be slow.
     */
    default int countTokens(TranscriptEntry entry) {
        return Tokens.estimate(entry);
    }

    /** Whether an answer that does not fit its schema may be generated again (within {@code maxAttempts}). */
    default boolean retriesInvalidOutput() {
        return true;
    }

    /**
     * What a client should know about this model before using it (a file without a chat template, say); the bridge adds
     * them to {@code session/create}'s {@code warnings}. Must not block.
     */
    default List<String> warnings() {
        return List.of();
    }
}
