package dev.oam.core.schema;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Optional;

/**
 * A mark on a generation schema saying that its answer is a character's spoken reply, which a local engine may let
 * the model write as a line of dialogue instead of JSON and read back into the schema's object:
 *
 * <pre>
 * Gorm (happy): "Three iron swords, 45 gold each."
 * Player: "I will take one." | "Anything cheaper?" | "Maybe later, thanks."
 * Ends the conversation: no
 * </pre>
 *
 * The schema is an object with the string {@value #LINE} and, each optional, the enum {@value #EMOTION}, the string
 * list {@value #OPTIONS} and the boolean {@value #ENDS}. Small models write far better lines in this form than in
 * JSON: asked for JSON, SmolLM2-135M read the player's line back as its own in most turns and wrote schema words as
 * player options; asked for the same reply as dialogue, it answered in character. The mark lives in the schema under
 * {@value #KEY}, so it travels with the answer's schema through every layer; a backend that cannot use it
 * ({@link #strip}) sends the schema without it, and the answer is the same JSON object either way.
 *
 * @param speaker the character's name, which opens the line
 * @param listener who the character speaks to, which opens the list of replies
 * @param sentences the most sentences the line may have (1 or more)
 */
public record DialogueForm(String speaker, String listener, int sentences) {
    /** The schema key holding the mark. */
    public static final String KEY = "x-oam-dialogue";
    public static final String EMOTION = "emotion";
    public static final String LINE = "line";
    public static final String OPTIONS = "player_options";
    public static final String ENDS = "ends_conversation";

    public DialogueForm {
        if (speaker.isBlank() || listener.isBlank()) {
            throw new IllegalArgumentException("a dialogue needs a speaker and a listener");
        }
        speaker = speaker.strip();
        listener = listener.strip();
        sentences = Math.max(1, sentences);
    }

    /** {@code schema} marked with this form (in place), if it is an object with a string {@value #LINE}. */
    public ObjectNode mark(ObjectNode schema) {
        if ("string".equals(schema.path("properties").path(LINE).path("type").asText())) {
            ObjectNode mark = schema.putObject(KEY);
            mark.put("speaker", speaker);
            mark.put("listener", listener);
            mark.put("sentences", sentences);
        }
        return schema;
    }

    /** The form {@code schema} is marked with, if any. */
    public static Optional<DialogueForm> of(JsonNode schema) {
        JsonNode mark = schema.path(KEY);
        if (!mark.isObject() || !mark.path("speaker").isTextual() || mark.path("speaker").asText().isBlank()
                || !"string".equals(schema.path("properties").path(LINE).path("type").asText())) {
            return Optional.empty();
        }
        String listener = mark.path("listener").asText("");
        return Optional.of(new DialogueForm(mark.path("speaker").asText(), listener.isBlank() ? "Player" : listener,
                mark.path("sentences").asInt(2)));
    }

    /** A copy of {@code schema} without the mark, for a backend that sends the schema elsewhere. */
    public static ObjectNode strip(ObjectNode schema) {
        if (!schema.has(KEY)) {
            return schema;
        }
        ObjectNode copy = schema.deepCopy();
        copy.remove(KEY);
        return copy;
    }
}
