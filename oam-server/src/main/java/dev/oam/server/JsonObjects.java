package dev.oam.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import org.jspecify.annotations.Nullable;

/** Finds the JSON object in a free-text answer for {@code response_format: json_object}. */
final class JsonObjects {
    private JsonObjects() {}

    /** The object the text holds (bare, inside a code fence, or between prose), or {@code null}. */
    static @Nullable JsonNode extract(String text) {
        String trimmed = text.strip();
        JsonNode direct = parseObject(trimmed);
        if (direct != null) {
            return direct;
        }
        int fence = trimmed.indexOf("```");
        if (fence >= 0) {
            int bodyStart = trimmed.indexOf('\n', fence);
            int end = bodyStart < 0 ? -1 : trimmed.indexOf("```", bodyStart);
            if (end > bodyStart) {
                JsonNode fenced =
                        parseObject(trimmed.substring(bodyStart + 1, end).strip());
                if (fenced != null) {
                    return fenced;
                }
            }
        }
        int open = trimmed.indexOf('{');
        int close = trimmed.lastIndexOf('}');
        return open >= 0 && close > open ? parseObject(trimmed.substring(open, close + 1)) : null;
    }

    private static @Nullable JsonNode parseObject(String text) {
        if (!text.startsWith("{")) {
            return null;
        }
        try {
            JsonNode node = Json.parse(text);
            return node.isObject() ? node : null;
        } catch (Exception e) {
            return null;
        }
    }
}
