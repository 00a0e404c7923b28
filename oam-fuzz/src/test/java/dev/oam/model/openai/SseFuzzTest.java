package dev.oam.model.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.tool.ToolCall;
import dev.oam.fuzz.Inputs;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The server-sent-event reader and the OpenAI stream parser on top of it (what a model server, possibly a broken or
 * hostile one, sends). Properties: however the bytes are cut into reads (whole, one byte at a time, at random points),
 * the reader yields the same events and the parser the same completion (text, the text deltas it streamed, refusal,
 * tool calls, finish reason, usage) or the same failure; the streamed text deltas add up to the content; and nothing
 * but {@link IOException} or {@link HttpFailure} escapes the stream parser, nothing but {@link AgentException} the
 * tool-call reader.
 */
class SseFuzzTest {
    @FuzzTest(maxDuration = "10m")
    void anySplitSameEvents(byte[] data) {
        String whole = null;
        String parsed = null;
        for (int way = 0; way < Inputs.WAYS; way++) {
            String events = events(Inputs.split(data, way));
            String completion = completion(Inputs.split(data, way));
            if (way == 0) {
                whole = events;
                parsed = completion;
            } else {
                assertThat(events).as("events with split way %d", way).isEqualTo(whole);
                assertThat(completion).as("completion with split way %d", way).isEqualTo(parsed);
            }
        }
    }

    private static String events(InputStream in) {
        SseReader reader = new SseReader(in);
        List<String> out = new ArrayList<>();
        try {
            for (SseReader.Event event = reader.next(); event != null; event = reader.next()) {
                out.add(event.name() + "\u0000" + event.data());
            }
            out.add("end");
        } catch (IOException e) {
            out.add("failed: " + e.getMessage());
        }
        return String.join("\n---\n", out);
    }

    private static String completion(InputStream in) {
        CompletionAnswer completion = new CompletionAnswer();
        StringBuilder streamed = new StringBuilder();
        String outcome;
        try {
            Exchange.readStream(in, completion, streamed::append);
            outcome = "ok";
        } catch (IOException e) {
            outcome = "io: " + e.getMessage();
        } catch (HttpFailure e) {
            outcome = "http " + e.status() + ": " + e.getMessage();
        }
        assertThat(streamed.toString())
                .as("the streamed deltas add up to the content")
                .isEqualTo(completion.content.toString());
        StringBuilder out = new StringBuilder(outcome);
        out.append("\ncontent=")
                .append(completion.content)
                .append("\nrefusal=")
                .append(completion.refusal)
                .append("\nfinish=")
                .append(completion.finishReason)
                .append("\ndone=")
                .append(completion.done)
                .append("\nmodel=")
                .append(completion.model)
                .append("\nusage=")
                .append(completion.usage == null ? null : Json.write(completion.usage));
        for (CompletionAnswer.RawCall call : completion.calls) {
            out.append("\ncall id=")
                    .append(call.id)
                    .append(" name=")
                    .append(call.name)
                    .append(" args=")
                    .append(call.arguments)
                    .append(" value=")
                    .append(call.argumentsValue == null ? null : Json.write(call.argumentsValue));
        }
        try {
            for (ToolCall call : Outputs.calls(completion)) {
                out.append("\ntool ").append(call.name()).append(' ').append(Json.write(call.arguments()));
            }
        } catch (AgentException e) {
            out.append("\ntools refused: ").append(e.getMessage());
        }
        return out.toString();
    }
}
