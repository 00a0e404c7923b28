package dev.oam.core.model;

import com.fasterxml.jackson.databind.JsonNode;

/** Streaming callbacks of one model step, on the step's thread. */
public interface ModelListener {
    ModelListener NONE = new ModelListener() {};

    /** Appends {@code delta} to the answer text. */
    default void onText(String delta) {}

    /** Replaces the answer text so far. */
    default void onReset(String text) {}

    /** A partially generated structured value. */
    default void onPartial(JsonNode value) {}
}
