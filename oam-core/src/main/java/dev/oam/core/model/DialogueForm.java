package dev.oam.core.model;

/**
 * An answer that is a character's spoken reply ({@link GenerationOptions#dialogue}), which a local engine may have the
 * model write as a line of dialogue and read back:
 *
 * <pre>
 * Gorm (happy): "Three iron swords, 45 gold each."
 * Player: "I will take one." | "Anything cheaper?" | "Maybe later, thanks."
 * Ends the conversation: no
 * </pre>
 *
 * On a structured step the answer's schema is an object with the string {@value #LINE} and, each optional, the enum
 * {@value #EMOTION}, the string list {@value #OPTIONS} and the boolean {@value #ENDS}, and the text reads back into
 * that object; on a text step the answer is the line alone ({@code Gorm: "…"}, the answer's text is what is between the
 * quotes). Small models write far better lines this way than in JSON: asked for JSON, SmolLM2-135M read the player's
 * line back as its own in most turns and wrote schema words as player options; asked for the same reply as dialogue, it
 * answered in character. Backends that cannot use it ignore it: the answer is the same either way.
 *
 * @param speaker the character's name, which opens the line
 * @param listener who the character speaks to, which opens the list of replies
 * @param sentences the most sentences the line may have (1 or more)
 */
public record DialogueForm(String speaker, String listener, int sentences) {
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
}
