package dev.oam.testing;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/** Reading the events of a streamed turn. */
public final class Events {
    private Events() {}

    /** The concatenated deltas of a streamed turn's {@code text} events, applying resets. */
    public static String streamedText(List<JsonNode> events) {
        StringBuilder text = new StringBuilder();
        for (JsonNode event : events) {
            if (event.path("type").asText().equals("text")) {
                if (event.path("isReset").asBoolean()) {
                    text.setLength(0);
                }
                text.append(event.path("delta").asText());
            }
        }
        return text.toString();
    }
}
