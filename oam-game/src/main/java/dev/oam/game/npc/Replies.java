package dev.oam.game.npc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/** Parsing of NPC replies: structured JSON and {@code [emotion] line} text (GAME-LAYER.md §3.4–3.6). */
public final class Replies {
    /** A parsed reply. */
    public record Reply(Emotion emotion, String line, List<String> playerOptions, boolean endsConversation) {}

    /** A text reply split into its tag and line; {@code tagStreaming} while a tag may still be arriving. */
    public record TextSplit(@Nullable String tag, String line, boolean tagStreaming) {}

    /**
     * What a structured reply must be to be read: any JSON object. The model is held to the exact reply schema,
     * but a reply that misses it in a way {@link #structured} can read (an unknown emotion, fewer or more player
     * options, a missing or extra key) must not cost the turn (GAME-LAYER.md §3.4).
     */
    public static ObjectNode acceptedSchema() {
        return Json.object().put("type", "object");
    }

    private static final int MAX_STREAMING_TAG = 24;
    private static final String OPENING_QUOTES = "\"“'‘«";
    private static final String CLOSING_QUOTES = "\"”'’»";

    private Replies() {}

    public static Reply structured(JsonNode value, Persona persona, NpcOptions options) {
        Emotion emotion = Emotion.match(value.path("emotion").asText("")).orElse(persona.defaultEmotion());
        String line = cleanLine(value.path("line").asText(""), persona.name());
        List<String> playerOptions = new ArrayList<>();
        int count = options.optionCount();
        Set<String> seen = new LinkedHashSet<>();
        for (JsonNode option : value.path("player_options")) {
            String text = cleanLine(stripListMarker(option.asText("")), "Player");
            if (!text.isEmpty() && seen.add(text.toLowerCase(Locale.ROOT)) && playerOptions.size() < count) {
                playerOptions.add(text);
            }
        }
        boolean ends = options.canEndConversation() && value.path("ends_conversation").asBoolean(false);
        return new Reply(emotion, line, playerOptions, ends);
    }

    public static Reply text(String text, Persona persona) {
        TextSplit split = splitTag(text);
        Emotion emotion = split.tag() == null ? persona.defaultEmotion()
                : Emotion.match(split.tag()).orElse(persona.defaultEmotion());
        return new Reply(emotion, cleanLine(split.line(), persona.name()), List.of(), false);
    }

    /** §3.5: splits {@code [tag] rest}. */
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

    /** Spoken-line cleanup: trim, drop one speaker label, unwrap one pair of quotes. */
    public static String cleanLine(String text, String speaker) {
        String t = stripLabel(text.strip(), speaker).strip();
        if (t.length() >= 2 && OPENING_QUOTES.indexOf(t.charAt(0)) >= 0 && CLOSING_QUOTES.indexOf(t.charAt(t.length() - 1)) >= 0) {
            String inner = t.substring(1, t.length() - 1);
            if (inner.indexOf('"') < 0 && inner.indexOf('“') < 0 && inner.indexOf('”') < 0) {
                t = inner.strip();
            }
        }
        return t;
    }

    /**
     * The visible part of a line that is still streaming: nothing while it could still become a
     * speaker label, the label stripped once complete, a leading opening quote (other than ') dropped.
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
        if (i > 0 && i + 1 < t.length() + 1 && i < t.length() && (t.charAt(i) == '.' || t.charAt(i) == ')')
                && i + 1 < t.length() && t.charAt(i + 1) == ' ') {
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
