package dev.oam.core.model;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The model's own state of one conversation (what a local engine computed from the tokens it read), saved to a file
 * beside a game's save so that a restored NPC does not read its whole conversation again (docs/GAMES.md, "Saving the
 * model's state"). Only the embedded llama.cpp engine on FFM keeps such a state; other backends answer with a warning.
 */
public final class ModelState {
    private ModelState() {}

    /**
     * What a save wrote.
     *
     * @param reference what the save's JSON keeps of the file (size, SHA-256, the tokens it covers, what it depends
     *     on), or {@code null} when nothing was written
     * @param warnings why nothing was written (empty when written, or when the model has no state and says nothing)
     */
    public record Saved(@Nullable ObjectNode reference, List<String> warnings) {
        public Saved {
            warnings = List.copyOf(warnings);
        }
    }

    /**
     * What a restore loaded.
     *
     * @param tokens the tokens of the conversation the state covers, now held by the model (0: nothing restored, the
     *     next turn reads everything)
     * @param warnings why nothing was restored
     */
    public record Restored(int tokens, List<String> warnings) {
        public Restored {
            warnings = List.copyOf(warnings);
        }
    }

    /** Nothing saved, for {@code why}. */
    public static Saved notSaved(String why) {
        return new Saved(null, List.of(why));
    }

    /** Nothing restored, for {@code why}. */
    public static Restored notRestored(String why) {
        return new Restored(0, List.of(why));
    }

    /** The warning of a backend that keeps no state of its own a client could save. */
    public static final String NOT_AVAILABLE = "The model's state cannot be saved with this model: only the embedded "
            + "llama.cpp engine (FFM) keeps one; the conversation is read again after a load.";
}
