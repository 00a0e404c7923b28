package dev.oam.model.llama.engine;

import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.prompt.ChatMessage;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A loaded GGUF model as {@code LlamaLanguageModel} sees it. {@code jni.JniEngine} and {@code ffm.FfmEngine} are the
 * real ones (one per model file per process, shared by every session naming that file); unit tests use a pure-Java
 * fake. Every method is safe to call from several threads at once.
 */
public interface Engine {
    /** The model's name: GGUF {@code general.name}, else the file name without {@code .gguf}. */
    String name();

    /** Tokens one session's prompt and answer may take together (the context of one slot). */
    int contextSize();

    /** Exact token count of {@code text} as it would appear inside a prompt (no BOS). */
    int countTokens(String text);

    /**
     * The prompt for {@code messages} in the model's chat template (ChatML when the file has none), ending with the
     * opening of the assistant's reply. Message contents are placed verbatim: they never pass through the template
     * engine, so callers escape control tokens themselves ({@link #controlTokens()}).
     */
    String renderChat(List<ChatMessage> messages);

    /** The texts of the model's control tokens (e.g. {@code <|im_start|>}), which untrusted text must not contain. */
    Set<String> controlTokens();

    /**
     * Runs one generation. Streams decoded text to {@code onDelta} (never an empty delta, never a split UTF-8 sequence)
     * on the calling thread, and returns when the model stops, {@code maxTokens} are generated or the grammar is
     * complete.
     *
     * @param sessionKey identifies the conversation, so its prompt cache is reused on its next step
     * @throws AgentException {@code cancelled} when {@code token} is cancelled (generation stops within about one
     *     token; no slot stays busy), {@code context_size_exceeded} when the prompt does not fit
     */
    EngineResult generate(EngineRequest request, Object sessionKey, Consumer<String> onDelta, CancellationToken token)
            throws AgentException;

    /**
     * Where the model runs, when the engine knows (the FFM engine reads llama.cpp's load log): the device, its free
     * memory and the layers it holds, for {@code model/availability}; null when unknown.
     */
    default @org.jspecify.annotations.Nullable String device() {
        return null;
    }

    /**
     * Whether a constrained generation is closed within its {@code maxTokens} (the engine steers the last tokens toward
     * the grammar's end) rather than cut there. Then a step's strings need no cap sized in advance for the worst case.
     */
    default boolean closesGrammarsAtBudget() {
        return false;
    }

    /**
     * Writes the state of the lane holding the conversation whose last prompt was {@code lastPrompt} to {@code file}
     * (issue 40, docs/GAMES.md "Saving the model's state"). Only the FFM engine can; the JNI binding has no call for
     * it.
     */
    default dev.oam.core.model.ModelState.Saved saveState(String lastPrompt, java.nio.file.Path file) {
        return dev.oam.core.model.ModelState.notSaved(
                "The model's state cannot be saved on the JNI engine (its binding has no call for a sequence's state):"
                        + " the conversation is read again after a load. The FFM engine (the default on Java 22+) can.");
    }

    /** Loads a state {@link #saveState} wrote, after checking it against {@code reference} and this engine. */
    default dev.oam.core.model.ModelState.Restored restoreState(
            com.fasterxml.jackson.databind.JsonNode reference, java.nio.file.Path file) {
        return dev.oam.core.model.ModelState.notRestored(
                "The model's state cannot be restored on the JNI engine: the conversation is read again.");
    }
}
