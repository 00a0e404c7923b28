package dev.oam.core.model;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.transcript.TranscriptEntry;
import java.nio.file.Path;
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

    /**
     * Writes the model's state of the conversation whose last step was {@code lastStep} to {@code file} (an extension
     * of this edition, docs/GAMES.md "Saving the model's state"). The caller has checked that {@code file} lies in its
     * save folder. The default: nothing written, a warning that this model keeps no such state.
     */
    default ModelState.Saved saveState(ModelRequest lastStep, Path file) {
        return ModelState.notSaved(ModelState.NOT_AVAILABLE);
    }

    /**
     * Loads a state {@link #saveState} wrote to {@code file}, described by {@code reference}, so that the tokens it
     * covers are not read again. Everything is checked first (the file's size and hash, the model file, the library and
     * the context settings); any mismatch leaves the model as it was and answers with a warning naming why. Never
     * throws for a bad file or reference.
     */
    default ModelState.Restored restoreState(JsonNode reference, Path file) {
        return ModelState.notRestored(ModelState.NOT_AVAILABLE);
    }
}
