package dev.oam.core.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.model.ModelListener;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.PartialJson;
import org.jspecify.annotations.Nullable;

/**
 * Turns one generation's text callbacks into turn events: {@code text} events carrying the delta and the whole answer
 * so far, or, in schema turns, {@code partial} events with the value the JSON so far implies, in the schema's member
 * order (a value equal to the previous one is not sent again).
 *
 * <p>One accumulator per attempt; not thread-safe (a model streams from the thread that called it).
 */
final class StreamAccumulator implements ModelListener {
    private final TurnListener listener;
    private final @Nullable GenerationSchema schema;
    private final StringBuilder text = new StringBuilder();
    private @Nullable JsonNode lastPartial;
    private boolean streamed;

    StreamAccumulator(TurnListener listener, @Nullable GenerationSchema schema) {
        this.listener = listener;
        this.schema = schema;
    }

    @Override
    public void onText(String delta) {
        if (delta.isEmpty()) {
            return;
        }
        text.append(delta);
        streamed = true;
        if (schema == null) {
            listener.onEvent(new TurnEvent.Text(delta, text.toString(), false));
        } else {
            partial(PartialJson.parse(text.toString()));
        }
    }

    @Override
    public void onReset(String whole) {
        text.setLength(0);
        text.append(whole);
        streamed = true;
        if (schema == null) {
            listener.onEvent(new TurnEvent.Text(whole, whole, true));
        } else {
            lastPartial = null;
            partial(PartialJson.parse(whole));
        }
    }

    @Override
    public void onPartial(JsonNode value) {
        partial(value);
    }

    private void partial(@Nullable JsonNode value) {
        if (value == null || value.equals(lastPartial)) {
            return;
        }
        lastPartial = value;
        listener.onEvent(new TurnEvent.Partial(schema == null ? value : schema.reorder(value)));
    }

    /**
     * Before the step is asked again: a text turn that streamed something is told to start over (a reset to
     * {@code ""}), and the accumulated text and last partial value are forgotten.
     */
    void resetIfStreamed() {
        if (streamed && schema == null) {
            onReset("");
        }
        streamed = false;
        lastPartial = null;
        text.setLength(0);
    }
}
