package dev.oam.game.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The small text rules every game prompt shares (docs/GAMES.md, "The persona instructions"; docs/PROTOCOL.md,
 * "Decisions and content").
 */
public final class PromptText {
    private PromptText() {}

    /**
     * {@code text} stripped and ending with terminal punctuation: a period is added unless one of {@code .!?"'} ends
     * it.
     */
    public static String sentence(String text) {
        String stripped = text.strip();
        if (stripped.isEmpty()) {
            return stripped;
        }
        char last = stripped.charAt(stripped.length() - 1);
        return ".!?\"'".indexOf(last) >= 0 ? stripped : stripped + ".";
    }

    /**
     * Items stripped, one trailing period of each dropped, empty ones skipped, joined with {@code "; "} and ended with
     * a period: {@code "a; b; c."}. An empty list gives {@code ""}.
     */
    public static String list(List<String> items) {
        List<String> parts = new ArrayList<>();
        for (String item : items) {
            String part = item.strip();
            if (part.endsWith(".")) {
                part = part.substring(0, part.length() - 1).strip();
            }
            if (!part.isEmpty()) {
                parts.add(part);
            }
        }
        return parts.isEmpty() ? "" : String.join("; ", parts) + ".";
    }

    /**
     * A facts value for a prompt line, or {@code null} when there is nothing to say (absent, JSON null, an empty
     * object, list or blank string). Strings are used as they are; anything else as compact JSON.
     */
    public static @Nullable String facts(@Nullable JsonNode value) {
        if (value == null || value.isNull() || value.isMissingNode()) {
            return null;
        }
        if (value.isTextual()) {
            String text = value.textValue().strip();
            return text.isEmpty() ? null : text;
        }
        if (value.isContainerNode() && value.isEmpty()) {
            return null;
        }
        return Json.write(value);
    }
}
