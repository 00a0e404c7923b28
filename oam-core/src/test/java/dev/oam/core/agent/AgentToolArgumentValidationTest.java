package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.context;
import static dev.oam.core.testing.Fixtures.json;
import static dev.oam.core.testing.Fixtures.object;
import static dev.oam.core.testing.Fixtures.scripted;
import static dev.oam.core.testing.TestOptions.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.model.AgentException;
import dev.oam.core.testing.RecordingListener;
import dev.oam.core.testing.RecordingToolChannel;
import dev.oam.core.testing.TestOptions;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Tool arguments are checked against the tool's parameters before a {@code tool/call} is sent. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AgentToolArgumentValidationTest {
    private static final ToolDefinition OPEN_GATE = new ToolDefinition("open_gate", "Opens a gate.", object("""
            {"type": "object",
             "properties": {"gate": {"type": "string", "enum": ["north", "south"]}, "force": {"type": "integer"},
                            "target": {"$ref": "#/$defs/Target"}},
             "required": ["gate"], "additionalProperties": false,
             "$defs": {"Target": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}"""), null);
    private static final ToolDefinition RING_BELL =
            new ToolDefinition("ring_bell", "Rings.", object("{\"type\": \"object\"}"), null);

    private final RecordingListener listener = new RecordingListener();
    private final RecordingToolChannel channel =
            RecordingToolChannel.answeringWith(ToolReply.output(TextNode.valueOf("done")));

    private Agent agent;

    private TurnResult respond(String script, TestOptions options) throws AgentException {
        agent = new Agent(scripted(script), null, List.of(OPEN_GATE, RING_BELL), options.build(), List.of());
        return agent.respond(TurnRequest.of("Open."), context(listener, channel));
    }

    private static String oneCall(String arguments) {
        return "{\"steps\": [{\"toolCalls\": [{\"name\": \"open_gate\", \"id\": \"c1\", \"arguments\": " + arguments
                + "}]}, {\"text\": \"Done.\"}]}";
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            {"gate": 5}                           | #/gate: expected a string but got the number 5
            {}                                    | #: missing required property 'gate'
            {"gate": "east"}                      | #/gate: "east" is not one of ["north","south"]
            {"gate": "north", "speed": 1}         | #/speed: unknown property 'speed'
            {"gate": "north", "force": 1.5}       | #/force: expected an integer but got the number 1.5
            {"gate": "north", "target": {}}       | #/target: missing required property 'name'
            {"gate": "north", "target": {"name": 1}} | #/target/name: expected a string but got the number 1
            """)
    void invalidArgumentsAreAnsweredWithAnErrorAndNeverSent(String arguments, String violation) throws Exception {
        TurnResult result = respond(oneCall(arguments), options());

        String message = "Invalid arguments for 'open_gate': " + violation
                + ". Call it again with arguments that match its parameters.";
        assertThat(channel.sent()).isEmpty();
        assertThat(result.toolCalls()).singleElement().satisfies(record -> {
            assertThat(record.call().arguments()).isEqualTo(json(arguments));
            assertThat(record.isError()).isTrue();
            assertThat(record.output()).isEqualTo(TextNode.valueOf(message));
        });
        assertThat(agent.history().get(2))
                .isInstanceOfSatisfying(
                        TranscriptEntry.ToolOutput.class,
                        output -> assertThat(output.text()).isEqualTo("Error: " + message));
        assertThat(listener.ofType(TurnEvent.ToolCallStarted.class))
                .singleElement()
                .satisfies(started -> assertThat(started.execution()).isEqualTo("client"));
        assertThat(listener.completedTools()).isEqualTo(result.toolCalls());
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', textBlock = """
            {"gate": "north"}
            {"gate": "south", "force": 3}
            {"gate": "south", "force": 3.0}
            {"gate": "south", "force": -2, "target": {"name": "Bob"}}
            """)
    void validArgumentsAreSentUnchanged(String arguments) throws Exception {
        TurnResult result = respond(oneCall(arguments), options());

        assertThat(channel.sent()).singleElement().satisfies(call -> {
            assertThat(call.id()).isEqualTo("c1");
            assertThat(call.arguments()).isEqualTo(json(arguments));
        });
        assertThat(result.toolCalls())
                .singleElement()
                .satisfies(record -> assertThat(record.isError()).isFalse());
    }

    @Test
    void onlyTheInvalidCallOfAStepIsHeldBackAndItsErrorComesFirst() throws Exception {
        TurnResult result = respond("""
                {"steps": [{"toolCalls": [{"name": "ring_bell", "id": "c1"},
                                          {"name": "open_gate", "id": "c2", "arguments": {"gate": "west"}}]},
                           {"text": "Done."}]}""", options());

        assertThat(channel.sent()).extracting(ToolCall::id).containsExactly("c1");
        assertThat(result.toolCalls()).extracting(record -> record.call().id()).containsExactly("c2", "c1");
        assertThat(result.toolCalls()).extracting(ToolRecord::isError).containsExactly(true, false);
        assertThat(agent.history())
                .extracting(Object::getClass)
                .containsExactly(
                        TranscriptEntry.Prompt.class,
                        TranscriptEntry.ToolCalls.class,
                        TranscriptEntry.ToolOutput.class,
                        TranscriptEntry.ToolOutput.class,
                        TranscriptEntry.Response.class);
        assertThat(((TranscriptEntry.ToolOutput) agent.history().get(2)).callId())
                .isEqualTo("c2");
    }

    @Test
    void modelThatCallsAgainWithValidArgumentsGetsTheCallSent() throws Exception {
        TurnResult result = respond("""
                {"steps": [{"toolCalls": [{"name": "open_gate", "id": "c1", "arguments": {"gate": "North"}}]},
                           {"toolCalls": [{"name": "open_gate", "id": "c2", "arguments": {"gate": "north"}}]},
                           {"template": "{toolOutputs}"}]}""", options());

        assertThat(channel.sent()).extracting(ToolCall::id).containsExactly("c2");
        assertThat(result.text())
                .isEqualTo("Error: Invalid arguments for 'open_gate': #/gate: \"North\" is not one of "
                        + "[\"north\",\"south\"]. Call it again with arguments that match its parameters.\ndone");
    }

    @Test
    void unavailableToolIsReportedBeforeItsArgumentsAreChecked() throws Exception {
        TurnResult result = respond(oneCall("{\"gate\": 5}"), options().enabledTools("ring_bell"));

        assertThat(channel.sent()).isEmpty();
        assertThat(result.toolCalls().get(0).output())
                .isEqualTo(TextNode.valueOf("Tool 'open_gate' is not available. Available tools: ring_bell."));
    }

    @Test
    void callLimitIsReportedBeforeTheArgumentsAreChecked() throws Exception {
        TurnResult result = respond("""
                {"steps": [{"toolCalls": [{"name": "ring_bell", "id": "c1"},
                                          {"name": "open_gate", "id": "c2", "arguments": {"gate": 5}}]},
                           {"text": "Done."}]}""", options().maxToolCalls(1));

        assertThat(channel.sent()).extracting(ToolCall::id).containsExactly("c1");
        assertThat(result.toolCalls().get(0).output())
                .isEqualTo(
                        TextNode.valueOf(
                                "Tool call limit reached (maxToolCalls is 1); 'open_gate' was not run. Answer with what you have."));
    }
}
