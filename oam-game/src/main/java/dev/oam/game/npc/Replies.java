package dev.oam.game.npc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Parsing of NPC replies: structured JSON and {@code [emotion] line} text (docs/GAMES.md, "The structured reply", "Text
 * replies").
 */
public final class Replies {
    /** A parsed reply. */
    public record Reply(Emotion emotion, String line, List<String> playerOptions, boolean endsConversation) {}

    /** A text reply split into its tag and line; {@code tagStreaming} while a tag may still be arriving. */
    public record TextSplit(@Nullable String tag, String line, boolean tagStreaming) {}

    /**
     * What a structured reply must be to be read: any JSON object. The model is held to the exact reply schema, but a
     * reply that misses it in a way {@link #structured} can read (an unknown emotion, fewer or more player options, a
     * missing or extra key) must not cost the turn (docs/GAMES.md, "What a model may get wrong").
     */
    public static ObjectNode acceptedSchema() {
        return Json.object().put("type", "object");
    }

    private static final int MAX_STREAMING_TAG = 24;
    private static final String OPENING_QUOTES = "\"“'‘«";
    private static final String CLOSING_QUOTES = "\"”'’»";

    private Replies() {}

    /** The shortest player line whose copy is taken out of the NPC's line: shorter ones are greetings said back. */
    static final int ECHO_FLOOR = 20;

    /**
     * {@code reply} without the player's line read back in its line (a small model opens its answer with the question
     * it was asked, or answers with it); the line is left empty (so the turn speaks its fallback line) when no word
     * remains. Player lines under {@value #ECHO_FLOOR} characters are left alone: "Good morning!" said back is a reply.
     */
    public static Reply withoutPlayerLine(Reply reply, String playerLine, String speaker) {
        String asked = playerLine.strip();
        String line = reply.line();
        int at = asked.length() < ECHO_FLOOR
                ? -1
                : line.toLowerCase(Locale.ROOT).indexOf(asked.toLowerCase(Locale.ROOT));
        if (at < 0) {
            return reply;
        }
        String rest = cleanLine(
                (line.substring(0, at) + " " + line.substring(at + asked.length()))
                        .strip()
                        .replaceAll("^[\\p{Punct}\\s]+", "")
                        .replaceAll("^" + Pattern.quote(speaker) + "[\\p{Punct}\\s]+", ""),
                speaker);
        boolean words = rest.codePoints().anyMatch(Character::isLetter);
        return new Reply(reply.emotion(), words ? rest : "", reply.playerOptions(), reply.endsConversation());
    }

    public static Reply structured(JsonNode value, Persona persona, NpcOptions options) {
        Emotion emotion = Emotion.match(value.path("emotion").asText("")).orElse(persona.defaultEmotion());
        String line = cleanLine(value.path("line").asText(""), persona.name());
        List<String> playerOptions = new ArrayList<>();
        int count = options.optionCount();
        Set<String> seen = new LinkedHashSet<>();
        seen.add(line.toLowerCase(Locale.ROOT));
        for (JsonNode option : value.path("player_options")) {
            String text = cleanLine(stripListMarker(option.asText("")), "Player");
            boolean mood =
                    Emotion.match(text.strip().replaceAll("\\p{Punct}+$", "")).isPresent()
                            && text.strip().indexOf(' ') < 0; // a mood word from the reply's own emotion list
            // A sentence of the NPC's own line is not what the player would say back.
            boolean echo = text.codePointCount(0, text.length()) >= Npc.OPTION_FLOOR
                    && line.toLowerCase(Locale.ROOT).contains(text.toLowerCase(Locale.ROOT));
            if (!text.isEmpty()
                    && !isSchemaWord(text)
                    && !mood
                    && !echo
                    && seen.add(text.toLowerCase(Locale.ROOT))
                    && playerOptions.size() < count) {
                playerOptions.add(text);
            }
        }
        boolean ends =
                options.canEndConversation() && value.path("ends_conversation").asBoolean(false);
        return new Reply(emotion, line, playerOptions, ends);
    }

    public static Reply text(String text, Persona persona) {
        TextSplit split = splitTag(text);
        Emotion emotion = split.tag() == null
                ? persona.defaultEmotion()
                : Emotion.match(split.tag()).orElse(persona.defaultEmotion());
        return new Reply(emotion, cleanLine(split.line(), persona.name()), List.of(), false);
    }

    /** Splits {@code [tag] rest} (docs/GAMES.md, "Text replies"). */
    public static TextSplit splitTag(String text) {
        String t = text.stripLeading();
        if (!t.startsWith("[")) {
            return new TextSplit(null, t, false);
        }
        int close = t.indexOf(']');
        if (close < 0) {
            return t.length() <= MAX_STREAMING_TAG ? new TextSplit(null, "", true) : new TextSplit(null, t, false);
        }
        return new TextSplit(t.substring(1, close), t.substring(close + 1).stripLeading(), false);
    }

    /**
     * Words of the reply's own JSON (its keys, JSON literals, JSON Schema words) that a small model sometimes writes as
     * a player option; such an option is no line a player could say, so it is left out.
     */
    private static final Set<String> SCHEMA_WORDS = Set.of(
            "line",
            "emotion",
            "player_options",
            "playeroptions",
            "ends_conversation",
            "endsconversation",
            "true",
            "false",
            "null",
            "items",
            "type",
            "string",
            "array",
            "object",
            "maxitems",
            "minitems",
            "properties",
            "required",
            "description",
            "enum");

    static boolean isSchemaWord(String option) {
        String bare = option.strip().toLowerCase(Locale.ROOT).replaceAll("^[\\p{Punct}\\s]+|[\\p{Punct}\\s]+$", "");
        if (bare.isEmpty()
                || SCHEMA_WORDS.contains(bare)
                || bare.startsWith("player_options")
                || bare.contains("\":")) {
            return true;
        }
        java.util.regex.Matcher key = KEY_LABEL.matcher(bare);
        if (key.lookingAt() && SCHEMA_WORDS.contains(key.group(1))) {
            return true; // the next key of the reply written as an option: "ends_conversation: true"
        }
        // An identifier ("happy_player_options_1"): no player says one.
        return bare.indexOf('_') >= 0 && bare.chars().noneMatch(Character::isWhitespace);
    }

    private static final java.util.regex.Pattern KEY_LABEL = java.util.regex.Pattern.compile("([a-z_]+)\\s*:");

    /**
     * {@code text} with sentences that repeat an earlier one left out, and a trailing fragment that merely starts one
     * again: small models decoding greedily loop ("I am glad. I am glad. I am"), and the player should hear it once.
     */
    static String withoutRepeats(String text) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("[^.!?…]+[.!?…]+[\"'”’)]*\\s*|[^.!?…]+$")
                .matcher(text);
        List<String> kept = new ArrayList<>();
        Set<String> seen = new LinkedHashSet<>();
        boolean changed = false;
        while (m.find()) {
            String sentence = m.group();
            String key = sentence.strip().toLowerCase(Locale.ROOT);
            boolean complete = key.matches(".*[.!?…][\"'”’)]*$");
            boolean repeat = !key.isEmpty()
                    && (complete ? !seen.add(key) : seen.stream().anyMatch(earlier -> earlier.startsWith(key)));
            if (repeat) {
                changed = true;
            } else {
                kept.add(sentence);
            }
        }
        return changed ? String.join("", kept).strip() : text;
    }

    /** Spoken-line cleanup: trim, drop one speaker label, unwrap one pair of quotes, drop repeated sentences. */
    public static String cleanLine(String text, String speaker) {
        String t = withoutRepeats(stripLabel(text.strip(), speaker).strip());
        if (t.length() >= 2
                && OPENING_QUOTES.indexOf(t.charAt(0)) >= 0
                && CLOSING_QUOTES.indexOf(t.charAt(t.length() - 1)) >= 0) {
            String inner = t.substring(1, t.length() - 1);
            if (inner.indexOf('"') < 0 && inner.indexOf('“') < 0 && inner.indexOf('”') < 0) {
                t = inner.strip();
            }
        }
        return t;
    }

    /**
     * The visible part of a line that is still streaming: nothing while it could still become a speaker label, the
     * label stripped once complete, a leading opening quote (other than ') dropped.
     */
    public static String streamingLine(String text, String speaker) {
        String t = text.stripLeading();
        String lower = t.toLowerCase(Locale.ROOT);
        for (String label : labels(speaker)) {
            if (label.startsWith(lower) && !lower.isEmpty()) {
                return "";
            }
        }
        t = stripLabel(t, speaker).stripLeading();
        if (!t.isEmpty() && OPENING_QUOTES.indexOf(t.charAt(0)) >= 0 && t.charAt(0) != '\'') {
            t = t.substring(1);
        }
        return t;
    }

    private static List<String> labels(String speaker) {
        String n = speaker.toLowerCase(Locale.ROOT);
        return List.of(n + " says:", "**" + n + "**:", "**" + n + ":**", "*" + n + "*:", n + ":");
    }

    private static String stripLabel(String text, String speaker) {
        String lower = text.toLowerCase(Locale.ROOT);
        for (String label : labels(speaker)) {
            if (lower.startsWith(label)) {
                return text.substring(label.length());
            }
        }
        return text;
    }

    private static String stripListMarker(String text) {
        String t = text.strip();
        if (t.startsWith("- ") || t.startsWith("* ") || t.startsWith("• ")) {
            return t.substring(2);
        }
        int i = 0;
        while (i < t.length() && Character.isDigit(t.charAt(i))) {
            i++;
        }
        if (i > 0
                && i + 1 < t.length() + 1
                && i < t.length()
                && (t.charAt(i) == '.' || t.charAt(i) == ')')
                && i + 1 < t.length()
                && t.charAt(i + 1) == ' ') {
            return t.substring(i + 2);
        }
        return t;
    }

    /** Barks: the first non-empty line, cleaned. */
    public static String bark(String text, String speaker) {
        for (String line : text.split("\\R")) {
            String cleaned = cleanLine(line, speaker);
            if (!cleaned.isEmpty()) {
                return cleaned;
            }
        }
        return "";
    }
}
