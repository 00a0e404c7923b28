package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.Sampling;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The process host's wire values read back to what was written (through JSON text, as on the pipe). */
class HostWireTest {
    private static ObjectNode throughText(ObjectNode node) throws Exception {
        return (ObjectNode) Json.parse(Json.write(node));
    }

    @Test
    void requestsRoundTrip() throws Exception {
        ObjectNode parameters =
                (ObjectNode) Json.parse("{\"type\":\"object\",\"properties\":{\"gate\":{\"type\":\"string\","
                        + "\"enum\":[\"north\",\"south\"]}},\"required\":[\"gate\"]}");
        ToolCall call = new ToolCall("call-1", "open_gate", (ObjectNode) Json.parse("{\"gate\":\"north\"}"));
        List<TranscriptEntry> entries = List.of(
                TranscriptEntry.Prompt.of("Who goes there?", null),
                TranscriptEntry.Response.text("A friend."),
                TranscriptEntry.Prompt.of("Open it.", Json.parse("{\"type\":\"object\"}")),
                TranscriptEntry.ToolCalls.of(List.of(call)),
                TranscriptEntry.ToolOutput.of("open_gate", "call-1", "{\"opened\":true}"),
                TranscriptEntry.Response.structured("{\"ok\":true}", Json.parse("{\"ok\":true}"), "Response"));
        List<ModelRequest> requests = List.of(
                new ModelRequest(
                        "You are a guard.",
                        "It is night.",
                        entries,
                        List.of(new ToolDefinition("open_gate", "Open a gate.", parameters, Duration.ofSeconds(5))),
                        ToolCallingMode.REQUIRED,
                        true,
                        GenerationSchema.convert(parameters, "T"),
                        new GenerationOptions(0.5, 64, new Sampling.TopP(0.9, 7L)),
                        123,
                        2),
                new ModelRequest(
                        null,
                        null,
                        entries.subList(0, 1),
                        List.of(),
                        ToolCallingMode.DISALLOWED,
                        false,
                        null,
                        new GenerationOptions(null, null, Sampling.GREEDY),
                        -1,
                        1),
                new ModelRequest(
                        null,
                        null,
                        entries.subList(0, 3),
                        List.of(),
                        ToolCallingMode.ALLOWED,
                        false,
                        null,
                        new GenerationOptions(null, 8, new Sampling.TopK(40, null)),
                        5,
                        1),
                new ModelRequest(
                        null,
                        null,
                        entries.subList(0, 1),
                        List.of(),
                        ToolCallingMode.ALLOWED,
                        false,
                        null,
                        GenerationOptions.DEFAULT,
                        5,
                        1),
                new ModelRequest(
                        null,
                        null,
                        entries.subList(0, 1),
                        List.of(),
                        ToolCallingMode.ALLOWED,
                        false,
                        null,
                        new GenerationOptions(
                                0.7,
                                null,
                                new Sampling.Chain(
                                        40,
                                        0.95,
                                        0.05,
                                        0.9,
                                        1.1,
                                        -1,
                                        0.1,
                                        0.2,
                                        new Sampling.Dry(0.8, 1.75, 2, 256, List.of("\n", "!")),
                                        new Sampling.Xtc(0.5, 0.1),
                                        9L)),
                        5,
                        1));
        for (ModelRequest request : requests) {
            assertThat(HostWire.request(throughText(HostWire.request(request)))).isEqualTo(request);
        }
    }

    /** A model's text can hold an unpaired surrogate (half a UTF-8 sequence); the pipe's lines keep it, as ASCII. */
    @Test
    void linesAreAsciiAndKeepUnpairedSurrogates() throws Exception {
        String text = "caf\u00e9 \ud83d\ude00 half \ud800 end \udc00";
        ModelResponse answer = new ModelResponse.Answer(text, null, Usage.ZERO);
        byte[] line = HostWire.line(HostWire.response(answer));
        for (byte b : line) {
            assertThat(b & 0xff).isLessThan(0x80);
        }
        assertThat(line[line.length - 1]).isEqualTo((byte) '\n');
        String read = new String(line, java.nio.charset.StandardCharsets.US_ASCII).strip();
        assertThat(HostWire.response(Json.parse(read))).isEqualTo(answer);
    }

    @Test
    void answersErrorsAndAvailabilityRoundTrip() throws Exception {
        ModelResponse calls = new ModelResponse.ToolCalls(
                List.of(new ToolCall("c", "open_gate", (ObjectNode) Json.parse("{\"gate\":\"south\"}"))),
                new Usage(10, 4, 3));
        ModelResponse answer = new ModelResponse.Answer("{\"a\":1}", Json.parse("{\"a\":1}"), new Usage(1, 0, 2));
        ModelResponse text = new ModelResponse.Answer("Hello.", null, Usage.ZERO);
        for (ModelResponse response : List.of(calls, answer, text)) {
            assertThat(HostWire.response(throughText(HostWire.response(response))))
                    .isEqualTo(response);
        }
        AgentException failure = new AgentException(
                        ErrorCode.CONTEXT_SIZE_EXCEEDED,
                        "Too long.",
                        Json.object().put("limit", 5))
                .withUsage(new Usage(3, 0, 0));
        AgentException back = HostWire.error(throughText(HostWire.error(failure)));
        assertThat(back.code()).isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED);
        assertThat(back.getMessage()).isEqualTo("Too long.");
        assertThat(back.data()).isEqualTo(failure.data());
        assertThat(back.usage()).isEqualTo(new Usage(3, 0, 0));
        AgentException invalid = HostWire.error(throughText(HostWire.error(AgentException.invalidOutput("Bad JSON."))));
        assertThat(invalid.isInvalidOutput()).isTrue();
        assertThat(invalid.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        for (ModelAvailability availability : List.of(
                ModelAvailability.ready(2048, "tiny", List.of("en")),
                ModelAvailability.ready(2048, "tiny", List.of("en")).withDevice("Vulkan0 (llvmpipe), 31/31 layers"),
                ModelAvailability.loading("tiny"),
                ModelAvailability.unavailable("model_not_ready", "No."))) {
            assertThat(HostWire.availability(throughText(HostWire.availability(availability))))
                    .isEqualTo(availability);
        }
    }
}
