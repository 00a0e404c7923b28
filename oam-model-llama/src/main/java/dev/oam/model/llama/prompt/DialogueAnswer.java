package dev.oam.model.llama.prompt;

import static dev.oam.model.llama.grammar.Term.between;
import static dev.oam.model.llama.grammar.Term.chars;
import static dev.oam.model.llama.grammar.Term.choice;
import static dev.oam.model.llama.grammar.Term.group;
import static dev.oam.model.llama.grammar.Term.literal;
import static dev.oam.model.llama.grammar.Term.optional;
import static dev.oam.model.llama.grammar.Term.sequence;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.DialogueForm;
import dev.oam.core.model.ModelRequest;
import dev.oam.model.llama.grammar.Term;
import dev.oam.model.llama.grammar.Term.CharClass.Span;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * An answer spoken by a character ({@link DialogueForm}, {@code GenerationOptions.dialogue}) written as dialogue
 * instead of JSON or free text. A structured answer:
 *
 * <pre>
 * Gorm (happy): "Three iron swords, 45 gold each."
 * Player: "I will take one." | "Anything cheaper?" | "Maybe later, thanks."
 * Ends the conversation: no
 * </pre>
 *
 * The first line opens with the speaker's name, the mood (the schema's {@value DialogueForm#EMOTION} enum) and the line
 * in quotes; the replies and the ending follow only where the schema has {@value DialogueForm#OPTIONS} and
 * {@value DialogueForm#ENDS}. A text answer is the first line alone, without a mood ({@code Gorm: "…"}), and its text
 * is the line. The grammar holds the line to its sentences (each opens with neither a digit, a space nor punctuation,
 * so a line always has words, and ends in {@code .}, {@code !} or {@code ?}) and each reply to one sentence of at least
 * the schema's {@code minLength}; neither may hold a quote or a line break, so the text reads back without any
 * escaping. A structured answer is shown the same way in the history, so an engine's cache of the tokens it generated
 * still matches on the next turn.
 */
public final class DialogueAnswer {
    /** Where the grammar's rules go: the step grammar's builder. */
    public interface Rules {
        /** Defines a rule for {@code body} (named after {@code hint}) and returns a reference to it. */
        Term rule(String hint, Term body);
    }

    /** The most characters of one sentence of the line, and of one reply. */
    static final int SENTENCE = 100;

    static final int REPLY = 90;
    /** The most replies a list may have (the step grammar's default for arrays). */
    static final int MAX_REPLIES = 8;
    /**
     * Characters no sentence holds: the quote that closes it, line breaks and control characters, the marks that end
     * it, and what only markup uses (braces, brackets, backslashes, angle brackets): SmolLM2-135M wrote replies such as
     * "{Mira 2} (nun)." and "\\nYou're going…" when they were allowed.
     */
    private static final List<Span> NOT_INSIDE = List.of(
            Span.of('"'),
            Span.of('\n'),
            Span.of('.'),
            Span.of('!'),
            Span.of('?'),
            Span.of('{'),
            Span.of('}'),
            Span.of('['),
            Span.of(']'),
            Span.of('\\'),
            Span.of('<'),
            Span.of('>'),
            Span.range(0x00, 0x1F),
            Span.of(0x7F));
    /**
     * What a sentence opens with: a letter (of the Latin, Greek and Cyrillic alphabets, kana, CJK ideographs or
     * Hangul), so a line always has words. Gemma 3 270M opened player options with a full-width comma and a run of
     * digits ("， 10000000000000."), each digit a token of its own.
     */
    private static final Term FIRST = chars(
            Span.range('A', 'Z'),
            Span.range('a', 'z'),
            Span.range(0x00C0, 0x024F),
            Span.range(0x0370, 0x03FF),
            Span.range(0x0400, 0x04FF),
            Span.range(0x3040, 0x30FF),
            Span.range(0x4E00, 0x9FFF),
            Span.range(0xAC00, 0xD7AF));
    /** What a sentence holds after its first character. */
    private static final Term INSIDE = new Term.CharClass(true, NOT_INSIDE);
    /** What a reply holds after its first character: no {@code |} either, which separates replies. */
    private static final Term INSIDE_REPLY = new Term.CharClass(
            true,
            java.util.stream.Stream.concat(java.util.stream.Stream.of(Span.of('|')), NOT_INSIDE.stream())
                    .toList());

    static final String ENDS_LABEL = "Ends the conversation: ";

    private final DialogueForm form;
    private final List<String> emotions;
    private final int minReplies;
    private final int maxReplies;
    private final int replyFloor;
    private final boolean ends;
    private final boolean text;

    private DialogueAnswer(
            DialogueForm form,
            List<String> emotions,
            int minReplies,
            int maxReplies,
            int replyFloor,
            boolean ends,
            boolean text) {
        this.text = text;
        this.form = form;
        this.emotions = emotions;
        this.minReplies = minReplies;
        this.maxReplies = maxReplies;
        this.replyFloor = replyFloor;
        this.ends = ends;
    }

    /**
     * The dialogue of {@code request}: its options' form, on a text step or on a structured step whose schema is an
     * object with a string {@value DialogueForm#LINE}; else {@code null}.
     */
    public static @Nullable DialogueAnswer of(ModelRequest request) {
        DialogueForm form = request.options().dialogue();
        if (form == null) {
            return null;
        }
        if (request.schema() == null) {
            return new DialogueAnswer(form, List.of(), 0, 0, 2, false, true);
        }
        JsonNode schema = request.schema().json();
        if (!"string"
                .equals(schema.path("properties")
                        .path(DialogueForm.LINE)
                        .path("type")
                        .asText())) {
            return null;
        }
        JsonNode properties = schema.path("properties");
        List<String> emotions = new ArrayList<>();
        properties.path(DialogueForm.EMOTION).path("enum").forEach(value -> {
            if (value.isTextual() && !value.asText().isBlank() && value.asText().indexOf(')') < 0) {
                emotions.add(value.asText());
            }
        });
        JsonNode options = properties.path(DialogueForm.OPTIONS);
        int min = 0;
        int max = 0;
        int floor = 2;
        if ("array".equals(options.path("type").asText())
                && "string".equals(options.path("items").path("type").asText())) {
            max = Math.max(0, Math.min(options.path("maxItems").asInt(3), MAX_REPLIES));
            min = Math.max(0, Math.min(options.path("minItems").asInt(0), max));
            floor = Math.max(2, Math.min(options.path("items").path("minLength").asInt(2), REPLY));
        }
        boolean ends =
                "boolean".equals(properties.path(DialogueForm.ENDS).path("type").asText());
        return new DialogueAnswer(form, List.copyOf(emotions), min, max, floor, ends, false);
    }

    /**
     * What the system message says of the answer's form: only the moods to choose from, or nothing. The grammar writes
     * the form itself, and the history shows earlier replies in it. Describing the form as well ("Gorm (mood): \"what
     * you say\"", example replies) makes a small model's line worse: it reads the description or the player's question
     * back, or repeats a word, where the bare list of moods gives answers in character.
     */
    public @Nullable String instructions() {
        return emotions.isEmpty() ? null : "Moods: " + String.join(", ", emotions) + ".";
    }

    /** The grammar rule of the answer, added to {@code gbnf}; returns a reference to it. */
    public Term rule(Rules gbnf) {
        Term end = gbnf.rule("end", choice(literal("..."), chars(Span.of('.'), Span.of('!'), Span.of('?'))));
        Term sentence = gbnf.rule("sentence", sequence(FIRST, between(INSIDE, 1, SENTENCE - 2), end));
        Term line = gbnf.rule(
                "line",
                form.sentences() == 1
                        ? sentence
                        : sequence(
                                sentence, between(group(sequence(literal(" "), sentence)), 0, form.sentences() - 1)));
        List<Term> body = new ArrayList<>();
        if (emotions.isEmpty()) {
            body.add(literal(form.speaker() + ": \""));
        } else {
            Term mood = gbnf.rule(
                    "mood", choice(emotions.stream().map(Term::literal).toList()));
            body.add(sequence(literal(form.speaker() + " ("), mood, literal("): \"")));
        }
        body.add(line);
        body.add(literal("\""));
        if (maxReplies > 0) {
            Term reply = gbnf.rule("reply", sequence(FIRST, between(INSIDE_REPLY, replyFloor - 2, REPLY - 2), end));
            Term quoted = sequence(literal("\""), reply, literal("\""));
            Term more = group(sequence(literal(" | "), quoted));
            int least = Math.max(1, minReplies);
            Term list = sequence(quoted, maxReplies > 1 ? between(more, least - 1, maxReplies - 1) : null);
            Term replies = sequence(literal("\n" + form.listener() + ": "), list);
            body.add(minReplies == 0 ? optional(group(replies)) : replies);
        }
        if (ends) {
            body.add(sequence(literal("\n" + ENDS_LABEL), group(choice(literal("no"), literal("yes")))));
        }
        return gbnf.rule("dialogue", sequence(body));
    }

    /** Whether the answer is text (the line alone) rather than the schema's object. */
    public boolean isText() {
        return text;
    }

    /** A text answer's line, or {@code null} when the text is not in the form. */
    public @Nullable String line(String written) {
        Matcher m = whole().matcher(written.strip());
        return m.matches() ? m.group("line") : null;
    }

    /** The answer's object read from the whole text, or {@code null} when the text is not in the form. */
    public @Nullable ObjectNode parse(String text) {
        Matcher m = whole().matcher(text.strip());
        if (!m.matches()) {
            return null;
        }
        ObjectNode value = Json.object();
        if (!emotions.isEmpty()) {
            value.put(DialogueForm.EMOTION, m.group("mood"));
        }
        value.put(DialogueForm.LINE, m.group("line"));
        if (maxReplies > 0) {
            ArrayNode replies = value.putArray(DialogueForm.OPTIONS);
            String list = m.group("replies");
            if (list != null) {
                Matcher item = QUOTED.matcher(list);
                while (item.find()) {
                    replies.add(item.group(1));
                }
            }
        }
        if (ends) {
            value.put(DialogueForm.ENDS, "yes".equals(m.group("ends")));
        }
        return value;
    }

    /** What {@code soFar} shows of the answer: the mood once written, the line as far as written; else {@code null}. */
    public @Nullable ObjectNode partial(String soFar) {
        String text = soFar.stripLeading();
        String open = form.speaker() + (emotions.isEmpty() ? ": \"" : " (");
        if (!text.startsWith(open)) {
            return null;
        }
        int at = open.length();
        ObjectNode value = Json.object();
        if (!emotions.isEmpty()) {
            int close = text.indexOf("): \"", at);
            if (close < 0) {
                return null;
            }
            value.put(DialogueForm.EMOTION, text.substring(at, close));
            at = close + 4;
        }
        int end = text.indexOf('"', at);
        value.put(DialogueForm.LINE, end < 0 ? text.substring(at) : text.substring(at, end));
        return value;
    }

    /** {@code value} (an answer of this form) as the text the grammar makes the model write. */
    public @Nullable String text(JsonNode value) {
        if (!value.isObject() || !value.path(DialogueForm.LINE).isTextual()) {
            return null;
        }
        StringBuilder out = new StringBuilder(form.speaker());
        if (!emotions.isEmpty()) {
            out.append(" (")
                    .append(value.path(DialogueForm.EMOTION).asText(emotions.get(0)))
                    .append(')');
        }
        out.append(": \"").append(value.path(DialogueForm.LINE).asText()).append('"');
        if (maxReplies > 0
                && value.path(DialogueForm.OPTIONS).isArray()
                && !value.path(DialogueForm.OPTIONS).isEmpty()) {
            out.append('\n').append(form.listener()).append(": ");
            boolean first = true;
            for (JsonNode reply : value.path(DialogueForm.OPTIONS)) {
                out.append(first ? "" : " | ")
                        .append('"')
                        .append(reply.asText())
                        .append('"');
                first = false;
            }
        }
        if (ends) {
            out.append('\n')
                    .append(ENDS_LABEL)
                    .append(value.path(DialogueForm.ENDS).asBoolean(false) ? "yes" : "no");
        }
        return out.toString();
    }

    /** The directive after a tool round. */
    public String afterTools() {
        return "Now answer as " + form.speaker() + ", using what the tools returned.";
    }

    private static final Pattern QUOTED = Pattern.compile("\"([^\"\\n]*)\"");

    private Pattern whole() {
        StringBuilder regex = new StringBuilder(Pattern.quote(form.speaker()));
        if (!emotions.isEmpty()) {
            regex.append(" \\((?<mood>[^)\\n]*)\\)");
        }
        regex.append(": \"(?<line>[^\"\\n]*)\"");
        if (maxReplies > 0) {
            regex.append("(?:\\n")
                    .append(Pattern.quote(form.listener()))
                    .append(": (?<replies>\"[^\"\\n]*\"(?: \\| \"[^\"\\n]*\")*))?");
        }
        if (ends) {
            regex.append("(?:\\n").append(Pattern.quote(ENDS_LABEL)).append("(?<ends>yes|no))?");
        }
        return Pattern.compile(regex.toString());
    }
}
