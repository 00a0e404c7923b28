package dev.oam.game.npc;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.function.Consumer;

/**
 * Turns streamed reply snapshots into {@code emotion}, {@code lineDelta} and {@code lineReset} events whose replay
 * (reset replaces, delta appends) always ends exactly at the final line.
 */
public final class LineTracker {
    /** One event for {@code npc/event}. */
    public sealed interface Event {
        record EmotionChanged(Emotion emotion) implements Event {}

        record LineDelta(String delta) implements Event {}

        record LineReset(String line) implements Event {}
    }

    private final Persona persona;
    private final Consumer<Event> sink;
    private String shown = "";
    private Emotion lastEmotion;

    public LineTracker(Persona persona, Consumer<Event> sink) {
        this.persona = persona;
        this.sink = sink;
    }

    /** A partial structured reply ({@code {"emotion", "line", …}} so far). */
    public void partial(JsonNode value) {
        if (!value.isObject()) {
            return;
        }
        if (value.has("line")) {
            Emotion.match(value.path("emotion").asText("")).ifPresent(this::emotion);
            show(Replies.streamingLine(value.path("line").asText(""), persona.name()));
        }
    }

    /** The text of a text-mode reply so far. */
    public void text(String soFar) {
        Replies.TextSplit split = Replies.splitTag(soFar);
        if (split.tagStreaming()) {
            return;
        }
        if (split.tag() != null) {
            emotion(Emotion.match(split.tag()).orElse(persona.defaultEmotion()));
        }
        show(Replies.streamingLine(split.line(), persona.name()));
    }

    /** Makes the shown state end exactly at the final emotion and line. */
    public void finish(Emotion emotion, String line) {
        emotion(emotion);
        show(line);
    }

    private void emotion(Emotion emotion) {
        if (emotion != lastEmotion) {
            lastEmotion = emotion;
            sink.accept(new Event.EmotionChanged(emotion));
        }
    }

    private void show(String visible) {
        if (visible.equals(shown)) {
            return;
        }
        if (visible.startsWith(shown)) {
            String delta = visible.substring(shown.length());
            shown = visible;
            sink.accept(new Event.LineDelta(delta));
        } else {
            shown = visible;
            sink.accept(new Event.LineReset(visible));
        }
    }
}
