package dev.oam.core.model;

import static dev.oam.core.testing.Fixtures.json;
import static dev.oam.core.testing.Fixtures.scripted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.oam.core.ErrorCode;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Reading a scripted model: every mistake is rejected with the bad field's path in single quotes. */
class ScriptedModelParsingTest {

    static Stream<Arguments> badScripts() {
        return Stream.of(
                Arguments.of("{\"steps\": {}}", "Parameter 'model.steps' must be an array of steps."),
                Arguments.of("{\"steps\": [1]}", "Parameter 'model.steps[0]' must be an object."),
                Arguments.of(
                        "{\"steps\": [{\"text\": \"a\", \"chunks\": 0}]}",
                        "Parameter 'model.steps[0].chunks' must be an integer ≥ 1."),
                Arguments.of(
                        "{\"steps\": [{\"text\": \"a\", \"chunks\": 1.5}]}",
                        "Parameter 'model.steps[0].chunks' must be an integer ≥ 1."),
                Arguments.of(
                        "{\"steps\": [{\"text\": \"a\", \"chunks\": \"3\"}]}",
                        "Parameter 'model.steps[0].chunks' must be an integer ≥ 1."),
                Arguments.of(
                        "{\"steps\": [{\"text\": \"ok\"}, {\"text\": \"a\", \"delayMs\": -1}]}",
                        "Parameter 'model.steps[1].delayMs' must be a number of milliseconds from 0 to 86400000."),
                Arguments.of(
                        "{\"steps\": [{\"text\": \"a\", \"delayMs\": 86400001}]}",
                        "Parameter 'model.steps[0].delayMs' must be a number of milliseconds from 0 to 86400000."),
                Arguments.of(
                        "{\"steps\": [{\"text\": \"a\", \"delayMs\": \"5\"}]}",
                        "Parameter 'model.steps[0].delayMs' must be a number of milliseconds from 0 to 86400000."),
                Arguments.of("{\"steps\": [{\"text\": 5}]}", "Parameter 'model.steps[0].text' must be a string."),
                Arguments.of(
                        "{\"steps\": [{\"template\": true}]}", "Parameter 'model.steps[0].template' must be a string."),
                Arguments.of(
                        "{\"steps\": [{\"toolCalls\": []}]}",
                        "Parameter 'model.steps[0].toolCalls' must be a non-empty array of calls."),
                Arguments.of(
                        "{\"steps\": [{\"toolCalls\": {\"name\": \"a\"}}]}",
                        "Parameter 'model.steps[0].toolCalls' must be a non-empty array of calls."),
                Arguments.of(
                        "{\"steps\": [{\"toolCalls\": [1]}]}",
                        "Parameter 'model.steps[0].toolCalls[0]' must be an object."),
                Arguments.of(
                        "{\"steps\": [{\"toolCalls\": [{\"name\": \"a\"}, {}]}]}",
                        "Parameter 'model.steps[0].toolCalls[1].name' must be a string."),
                Arguments.of(
                        "{\"steps\": [{\"toolCalls\": [{\"name\": \"a\", \"arguments\": [1]}]}]}",
                        "Parameter 'model.steps[0].toolCalls[0].arguments' must be an object."),
                Arguments.of(
                        "{\"steps\": [{\"toolCalls\": [{\"name\": \"a\", \"id\": 5}]}]}",
                        "Parameter 'model.steps[0].toolCalls[0].id' must be a string."),
                Arguments.of("{\"steps\": [{\"error\": 5}]}", "Parameter 'model.steps[0].error' must be a string."),
                Arguments.of(
                        "{\"steps\": [{\"error\": \"refusal\", \"message\": 3}]}",
                        "Parameter 'model.steps[0].message' must be a string."),
                Arguments.of(
                        "{\"steps\": [{\"say\": \"hi\"}]}",
                        "Parameter 'model.steps[0]' must have one of 'text', 'toolCalls', 'json', 'template' or 'error'."),
                Arguments.of(
                        "{\"steps\": [{\"text\": null}]}",
                        "Parameter 'model.steps[0]' must have one of 'text', 'toolCalls', 'json', 'template' or 'error'."),
                Arguments.of(
                        "{\"fallback\": {\"chunks\": 2}}",
                        "Parameter 'model.fallback' must have one of 'text', 'toolCalls', 'json', 'template' or 'error'."),
                Arguments.of(
                        "{\"fallback\": {\"text\": \"x\", \"chunks\": -1}}",
                        "Parameter 'model.fallback.chunks' must be an integer ≥ 1."),
                Arguments.of("{\"fallback\": []}", "Parameter 'model.fallback' must be an object."));
    }

    @ParameterizedTest
    @MethodSource("badScripts")
    void badScriptIsRejectedNamingThePath(String spec, String message) {
        assertThatThrownBy(() -> scripted(spec))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage(message);
    }

    @Test
    void pathStartsWithTheGivenParameterName() {
        assertThatThrownBy(() -> ScriptedModel.fromJson(
                        json("{\"steps\": [{\"text\": \"a\", \"chunks\": 0}]}"), "requests[1].model"))
                .hasMessageContaining("'requests[1].model.steps[0].chunks'");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "boom",
                "GUARDRAIL_VIOLATION",
                "session_not_found",
                "parse_error",
                "internal_error",
                "npc_not_found",
                "timeout"
            })
    void errorCodeThatIsNoAgentErrorIsRejected(String code) {
        assertThatThrownBy(() -> scripted("{\"steps\": [{\"error\": \"" + code + "\"}]}"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("Parameter 'model.steps[0].error' must be an agent error code")
                .hasMessageContaining("\"" + code + "\"");
    }

    static Stream<ErrorCode> agentErrors() {
        return Arrays.stream(ErrorCode.values()).filter(ErrorCode::isAgentError);
    }

    @ParameterizedTest
    @MethodSource("agentErrors")
    void everyAgentErrorCodeCanBeScripted(ErrorCode code) {
        ScriptedModel model = scripted("{\"steps\": [{\"error\": \"" + code.dataCode() + "\"}]}");
        ModelRequest request = new ModelRequest(
                null,
                null,
                List.<TranscriptEntry>of(TranscriptEntry.Prompt.of("Hi", null)),
                List.of(),
                ToolCallingMode.DISALLOWED,
                false,
                null,
                GenerationOptions.DEFAULT);

        AgentException error = catchThrowableOfType(
                AgentException.class, () -> model.respond(request, ModelListener.NONE, CancellationToken.create()));

        assertThat(error.code()).isEqualTo(code);
    }

    @Test
    void agentErrorsAreExactlyTheTwelveTurnCodes() {
        assertThat(agentErrors().map(ErrorCode::code))
                .containsExactlyInAnyOrder(
                        -32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009, -32010, -32011, -32012);
    }

    @Test
    void optionalFieldsMayBeNullOrAtTheirLimits() {
        ScriptedModel model = scripted("""
                {"steps": [{"text": "a", "chunks": null, "delayMs": null},
                           {"text": "b", "delayMs": 0}, {"text": "c", "delayMs": 86400000},
                           {"toolCalls": [{"name": "x", "arguments": null, "id": null}]},
                           {"json": null}],
                 "fallback": null}""");

        assertThat(model.remainingSteps()).isEqualTo(5);
    }

    @Test
    void missingOrNullStepsMakeAnEmptyScript() {
        assertThat(scripted("{\"type\": \"scripted\"}").remainingSteps()).isZero();
        assertThat(scripted("{\"type\": \"scripted\", \"steps\": null}").remainingSteps())
                .isZero();
    }
}
