package dev.oam.model.llama;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.model.DialogueForm;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.schema.PartialJson;
import dev.oam.model.llama.prompt.CallFormat;
import dev.oam.model.llama.prompt.DialogueAnswer;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Forwards a step's output to the listener as it is generated, on the generating thread:
 *
 * <ul>
 *   <li>text answers as {@code onText} deltas, leading white space dropped. In an {@code allowed} step the
 *       first other character decides (the grammar lets a text answer start with anything but {@code {}),
 *       so nothing more than white space is ever held back;
 *   <li>structured answers as {@code onPartial} values ({@link PartialJson}); in an {@code allowed} step
 *       only once the output can no longer become a call ({@link CallFormat});
 *   <li>tool calls: nothing.
 * </ul>
 *
 * {@link #finish} reconciles the listener with the parsed result: retracts text if the step turned out
 * to call tools (only possible when the grammar was ignored), and makes the streamed text equal the
 * answer's text.
 */
final class StepStream implements Consumer<String> {
    private enum State {
        UNDECIDED,
        ANSWER,
        CALLS
    }

    private final ModelListener listener;
    private final boolean structured;
    private final @Nullable DialogueAnswer dialogue;
    private final StringBuilder raw = new StringBuilder();
    private final StringBuilder shown = new StringBuilder();
    private State state;
    private @Nullable JsonNode lastPartial;

    StepStream(ModelRequest request, ModelListener listener) {
        this.listener = listener;
        this.structured = request.schema() != null;
        this.dialogue = DialogueAnswer.of(request);
        this.state = request.mode() == ToolCallingMode.REQUIRED ? State.CALLS : State.UNDECIDED;
        if (request.mode() == ToolCallingMode.DISALLOWED) {
            this.state = State.ANSWER;
        }
    }

    @Override
    public void accept(String delta) {
        if (state == State.CALLS || delta.isEmpty()) {
            return;
        }
        raw.append(delta);
        String sofar = raw.toString().stripLeading();
        if (sofar.isEmpty()) {
            return;
        }
        if (state == State.UNDECIDED) {
            if (structured) {
                if (CallFormat.looksLikeCalls(sofar)) {
                    state = State.CALLS;
                    return;
                }
                if (CallFormat.mayBecomeCalls(sofar)) {
                    return; // may still become a call
                }
            } else if (sofar.charAt(0) == '{') {
                state = State.CALLS;
                return;
            }
            state = State.ANSWER;
        }
        if (structured) {
            JsonNode partial = dialogue != null ? dialogue.partial(sofar) : PartialJson.parse(sofar);
            if (partial != null && !partial.equals(lastPartial)) {
                lastPartial = partial;
                listener.onPartial(partial);
            }
        } else {
            if (dialogue != null) {
                // The line as far as written: what is between the quotes.
                JsonNode partial = dialogue.partial(sofar);
                if (partial == null) {
                    return;
                }
                sofar = partial.path(DialogueForm.LINE).asText();
            }
            String delta2 = sofar.substring(shown.length());
            if (!delta2.isEmpty()) {
                shown.append(delta2);
                listener.onText(delta2);
            }
        }
    }

    void finish(ModelResponse response) {
        if (structured) {
            return;
        }
        if (response instanceof ModelResponse.Answer answer) {
            String text = answer.text();
            if (!text.contentEquals(shown)) {
                if (text.startsWith(shown.toString())) {
                    listener.onText(text.substring(shown.length()));
                } else {
                    listener.onReset(text);
                }
            }
        } else if (!shown.isEmpty()) {
            listener.onReset("");
        }
    }
}
