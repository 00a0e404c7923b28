package dev.oam.bench.eval;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.schema.GenerationSchema;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The program rules of the evaluation: protocol text, words, strings cut mid-word, facts named, argument values and
 * schema violations.
 */
final class EvalRules {
    /** Text no answer, line or string value should carry: the wire format, chat markers, tool results read back. */
    static final List<String> PROTOCOL = List.of(
            "tool_calls",
            "tool_call",
            "tool_response",
            "{\"",
            "\"name\":",
            "\"arguments\"",
            "Output of",
            "\uFFFD",
            "<|im_start|>",
            "<|im_end|>",
            "<start_of_turn>",
            "<end_of_turn>");

    /** Short words a value may end with (so "a", "of" at the end do not count as a cut). */
    private static final Set<String> SHORT = Set.of(
            "a", "i", "an", "as", "at", "be", "by", "do", "go", "he", "if", "in", "is", "it", "me", "my", "no", "of",
            "oh", "ok", "on", "or", "so", "to", "up", "us", "we", "ye", "ii", "iv", "vi", "xp", "hp");

    private EvalRules() {}

    /**
     * The first protocol marker in {@code text}, "You are" opening the text or a line (instructions read back), or the
     * opening of {@code instructions} anywhere; null when there is none.
     */
    static String protocolText(String text, String instructions) {
        for (String marker : PROTOCOL) {
            if (text.contains(marker)) {
                return marker;
            }
        }
        if (text.strip().startsWith("You are") || text.contains("\nYou are")) {
            return "You are";
        }
        if (instructions != null && instructions.length() >= 24 && text.contains(instructions.substring(0, 24))) {
            return "the instructions";
        }
        return null;
    }

    /** Words holding at least one letter. */
    static int words(String text) {
        int n = 0;
        for (String word : text.trim().split("\\s+")) {
            if (word.codePoints().anyMatch(Character::isLetter)) {
                n++;
            }
        }
        return n;
    }

    /** Clean text: some words, and no protocol text. */
    static boolean clean(String text, String instructions) {
        return words(text) > 0 && protocolText(text, instructions) == null;
    }

    /**
     * A value cut mid-word: it ends in a separator, or its last piece (after a space, '_' or '-') is one or two letters
     * that are not a short word ("Magic_S", "The great sw" but not "Sword of a").
     */
    static boolean cut(String value) {
        String trimmed = value.strip();
        if (trimmed.isEmpty()) {
            return false;
        }
        char last = trimmed.charAt(trimmed.length() - 1);
        if (last == '_' || last == '-') {
            return true;
        }
        String[] pieces = trimmed.split("[\\s_\\-]+");
        String end = pieces[pieces.length - 1];
        return pieces.length > 1
                && end.length() <= 2
                && end.chars().allMatch(Character::isLetter)
                && !SHORT.contains(end.toLowerCase(Locale.ROOT));
    }

    /** Every string value in {@code node}, depth first. */
    static List<String> strings(JsonNode node) {
        List<String> out = new ArrayList<>();
        collect(node, out);
        return out;
    }

    private static void collect(JsonNode node, List<String> out) {
        if (node.isTextual()) {
            out.add(node.asText());
        }
        node.forEach(child -> collect(child, out));
    }

    /** Whether {@code text} contains any of {@code facts} (case-insensitive). */
    static boolean namesFact(String text, JsonNode facts) {
        String lower = text.toLowerCase(Locale.ROOT);
        for (JsonNode fact : facts) {
            if (lower.contains(fact.asText().toLowerCase(Locale.ROOT))) {
                return true;
            }
        }
        return false;
    }

    /**
     * The half of the evaluation a case belongs to, fixed by its id: {@code held-out} when the first byte of the id's
     * SHA-256 is odd, else {@code tuning}. Prompts are tuned on the tuning half only; the held-out half is reported
     * once after the tuning, so its figures say how the bridge does on cases it was not tuned on.
     */
    static String split(String id) {
        try {
            byte[] hash = java.security.MessageDigest.getInstance("SHA-256")
                    .digest(id.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            return (hash[0] & 1) == 1 ? "held-out" : "tuning";
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Whether {@code line} repeats itself: a word 3-gram (case and punctuation ignored) that occurs twice, as in "I'm
     * glad you're here, I'm glad you're here", or a line equal to one of {@code earlier}.
     */
    static boolean repeats(String line, List<String> earlier) {
        String normal = line.toLowerCase(Locale.ROOT)
                .replaceAll("[^\\p{L}\\p{N}' ]+", " ")
                .strip();
        for (String before : earlier) {
            if (!normal.isEmpty()
                    && normal.equals(before.toLowerCase(Locale.ROOT)
                            .replaceAll("[^\\p{L}\\p{N}' ]+", " ")
                            .strip())) {
                return true;
            }
        }
        String[] words = normal.split("\\s+");
        Set<String> seen = new java.util.HashSet<>();
        for (int i = 0; i + 3 <= words.length; i++) {
            if (!seen.add(words[i] + " " + words[i + 1] + " " + words[i + 2])) {
                return true;
            }
        }
        return false;
    }

    /** Enum values and numbers equal, names contained (case-insensitive); every expected argument present. */
    static boolean argumentsRight(JsonNode expected, JsonNode actual) {
        for (Iterator<Map.Entry<String, JsonNode>> it = expected.properties().iterator(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> rule = it.next();
            JsonNode value = actual.get(rule.getKey());
            if (value == null) {
                return false;
            }
            JsonNode equals = rule.getValue().get("equals");
            if (equals != null) {
                boolean same = equals.isNumber()
                        ? value.isNumber() && value.decimalValue().compareTo(equals.decimalValue()) == 0
                        : value.asText().equalsIgnoreCase(equals.asText());
                if (!same) {
                    return false;
                }
            }
            JsonNode has = rule.getValue().get("has"); // an array holding each word in some item
            if (has != null) {
                for (JsonNode word : has) {
                    boolean found = false;
                    for (JsonNode item : value) {
                        found |= item.asText()
                                .toLowerCase(Locale.ROOT)
                                .contains(word.asText().toLowerCase(Locale.ROOT));
                    }
                    if (!found) {
                        return false;
                    }
                }
            }
            JsonNode contains = rule.getValue().get("contains");
            if (contains != null
                    && !value.asText()
                            .toLowerCase(Locale.ROOT)
                            .contains(contains.asText().toLowerCase(Locale.ROOT))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether {@code text} contains one of {@code phrases} (case-insensitive): the reply schema's descriptions read
     * back.
     */
    static boolean containsAny(String text, JsonNode phrases) {
        return EvalRules.namesFact(text, phrases);
    }

    static String violation(JsonNode schema, JsonNode value) {
        try {
            return GenerationSchema.convert(schema, "eval")
                    .firstViolation(value)
                    .orElse(null);
        } catch (Exception e) {
            return "schema: " + e.getMessage();
        }
    }

    /** An error answer as a case's note: its code and message ("error -32012: The model's output is …"). */
    static String errorNote(JsonNode error) {
        String message = error.path("message").asText("");
        return "error " + error.path("code").asInt() + (message.isEmpty() ? "" : ": " + message);
    }
}
