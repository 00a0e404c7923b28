package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.testing.RecordingListener;
import org.junit.jupiter.api.Test;

/**
 * Stream accumulation: text events carry the whole answer so far; schema turns get a partial value only when it
 * changed.
 */
class StreamAccumulatorTest {
    private final RecordingListener listener = new RecordingListener();

    @Test
    void textEventsCarryTheDeltaAndTheWholeAnswerSoFar() {
        StreamAccumulator text = new StreamAccumulator(listener, null);

        text.onText("Hel");
        text.onText("");
        text.onText("lo");
        text.onReset("Hi");

        assertThat(listener.texts())
                .containsExactly(
                        new TurnEvent.Text("Hel", "Hel", false),
                        new TurnEvent.Text("lo", "Hello", false),
                        new TurnEvent.Text("Hi", "Hi", true));
    }

    @Test
    void schemaTurnsGetAPartialValueOnlyWhenItChangedInSchemaOrder() throws Exception {
        GenerationSchema schema = GenerationSchema.convert(json("""
                {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}"""), "Response");
        StreamAccumulator text = new StreamAccumulator(listener, schema);

        text.onText("{\"b\": 1");
        text.onText(" ");
        text.onPartial(json("{\"b\": 1, \"a\": \"x\"}"));

        assertThat(listener.ofType(TurnEvent.Partial.class))
                .extracting(partial -> partial.value().toString())
                .containsExactly("{\"b\":1}", "{\"a\":\"x\",\"b\":1}");
        assertThat(listener.texts()).isEmpty();
    }

    @Test
    void resetBeforeAnotherAttemptClearsStreamedTextOnlyWhenSomethingWasStreamed() {
        StreamAccumulator text = new StreamAccumulator(listener, null);

        text.resetIfStreamed();
        text.onText("Hel");
        text.resetIfStreamed();
        text.onText("Yes");

        assertThat(listener.texts())
                .containsExactly(
                        new TurnEvent.Text("Hel", "Hel", false),
                        new TurnEvent.Text("", "", true),
                        new TurnEvent.Text("Yes", "Yes", false));
    }
}
