package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.context;
import static dev.oam.core.testing.Fixtures.json;
import static dev.oam.core.testing.Fixtures.object;
import static dev.oam.core.testing.Fixtures.scripted;
import static dev.oam.core.testing.Fixtures.tool;
import static dev.oam.core.testing.TestOptions.options;
import static dev.oam.core.testing.TinyContextModel.answer;
import static dev.oam.core.testing.TinyContextModel.calls;
import static dev.oam.core.testing.TinyContextModel.streamed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ScriptedModel;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.testing.RecordingListener;
import dev.oam.core.testing.RecordingToolChannel;
import dev.oam.core.testing.TinyContextModel;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Structured turns: partial events, schema key order, validation, and regenerating invalid answers. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AgentSchemaTurnTest {
    private static final JsonNode SCHEMA = json("""
            {"type": "object",
             "properties": {"reasoning": {"type": "string"},
                            "choice": {"type": "string", "enum": ["open", "refuse"]},
                            "confidence": {"type": "integer", "minimum": 0, "maximum": 100}},
             "required": ["reasoning", "choice"]}""");
    private static final String VALID = "{\"choice\": \"open\", \"reasoning\": \"Friend.\"}";
    private static final String INVALID = "{\"reasoning\": \"Hmm.\", \"choice\": \"maybe\"}";

    private final RecordingListener listener = new RecordingListener();
    private final RecordingToolChannel channel =
            RecordingToolChannel.answeringWith(ToolReply.output(TextNode.valueOf("done")));

    private Agent agent(LanguageModel model, int maxAttempts) {
        return new Agent(
                model,
                "You are a guard.",
                List.of(tool("open_gate")),
                options().maxAttempts(maxAttempts).build(),
                List.of());
    }

    private TurnResult respond(Agent agent) throws AgentException {
        return respond(agent, SCHEMA);
    }

    private TurnResult respond(Agent agent, JsonNode schema) throws AgentException {
        return agent.respond(TurnRequest.of("Open?").withSchema(schema), context(listener, channel));
    }

    private List<String> partials() {
        return listener.ofType(TurnEvent.Partial.class).stream()
                .map(partial -> Json.write(partial.value()))
                .toList();
    }

    @Test
    void streamedJsonArrivesAsPartialValuesInSchemaOrderWithoutRepeats() throws Exception {
        TinyContextModel model = TinyContextModel.withContext(8192)
                .then(streamed(
                        "{\"choice\": \"ref",
                        "use\"",
                        ", \"reas",
                        "oning\": \"Too",
                        " late.\", \"confidence\": 8",
                        "5}"));

        TurnResult result = respond(agent(model, 2));

        assertThat(partials())
                .containsExactly(
                        "{\"choice\":\"ref\"}",
                        "{\"choice\":\"refuse\"}",
                        "{\"reasoning\":\"Too\",\"choice\":\"refuse\"}",
                        "{\"reasoning\":\"Too late.\",\"choice\":\"refuse\",\"confidence\":8}",
                        "{\"reasoning\":\"Too late.\",\"choice\":\"refuse\",\"confidence\":85}");
        assertThat(listener.texts()).isEmpty();
        assertThat(result.text()).isEqualTo("{\"reasoning\":\"Too late.\",\"choice\":\"refuse\",\"confidence\":85}");
        assertThat(Json.write(result.structured())).isEqualTo(result.text());
    }

    @Test
    void answerInAnotherKeyOrderIsStoredAndReturnedInSchemaOrder() throws Exception {
        TinyContextModel model = TinyContextModel.withContext(8192)
                .then(answer("{\"extra\": 1, \"confidence\": 70, \"choice\": \"open\", \"reasoning\": \"Friend.\"}"));
        Agent agent = agent(model, 2);

        TurnResult result = respond(agent);

        String ordered = "{\"reasoning\":\"Friend.\",\"choice\":\"open\",\"confidence\":70,\"extra\":1}";
        assertThat(result.text()).isEqualTo(ordered);
        assertThat(Json.write(result.structured())).isEqualTo(ordered);
        assertThat(agent.history().get(1)).isInstanceOfSatisfying(TranscriptEntry.Response.class, response -> {
            assertThat(response.text()).isEqualTo(ordered);
            assertThat(Json.write(response.structured())).isEqualTo(ordered);
            assertThat(response.schemaName()).isEqualTo("Response");
        });
    }

    @Test
    void structuredValueOfTheModelWinsOverItsText() throws Exception {
        TinyContextModel model = TinyContextModel.withContext(8192)
                .then((request, listener) -> new ModelResponse.Answer("not json at all", json(VALID), Usage.ZERO));

        TurnResult result = respond(agent(model, 2));

        assertThat(result.text()).isEqualTo("{\"reasoning\":\"Friend.\",\"choice\":\"open\"}");
    }

    @Test
    void partialValuesOfTheModelAreReorderedToo() throws Exception {
        TinyContextModel model = TinyContextModel.withContext(8192).then((request, listener) -> {
            listener.onPartial(json("{\"choice\": \"open\"}"));
            listener.onPartial(json("{\"choice\": \"open\"}"));
            listener.onPartial(json("{\"choice\": \"open\", \"reasoning\": \"Fr\"}"));
            return new ModelResponse.Answer(VALID, null, Usage.ZERO);
        });

        respond(agent(model, 2));

        assertThat(partials()).containsExactly("{\"choice\":\"open\"}", "{\"reasoning\":\"Fr\",\"choice\":\"open\"}");
    }

    @Test
    void resetTextStartsThePartialValueAfresh() throws Exception {
        TinyContextModel model = TinyContextModel.withContext(8192).then((request, listener) -> {
            listener.onText("{\"choice\": \"refuse\", \"reasoning\": \"No");
            listener.onReset("{\"choice\": \"open\"");
            listener.onText(", \"reasoning\": \"Friend.\"}");
            return new ModelResponse.Answer(VALID, null, Usage.ZERO);
        });

        respond(agent(model, 2));

        assertThat(partials())
                .containsExactly(
                        "{\"reasoning\":\"No\",\"choice\":\"refuse\"}",
                        "{\"choice\":\"open\"}",
                        "{\"reasoning\":\"Friend.\",\"choice\":\"open\"}");
    }

    @Test
    void aSchemaTheCallerConvertedAlreadyIsTheOneEveryStepIsHeldTo() throws Exception {
        TinyContextModel model = TinyContextModel.withContext(8192)
                .then(calls(new ToolCall("c1", "open_gate", object("{\"gate\": \"north\"}"))), answer(VALID));
        GenerationSchema converted = GenerationSchema.convert(SCHEMA, "Response");

        TurnResult result = agent(model, 2)
                .respond(TurnRequest.of("Open?").withSchema(SCHEMA, converted), context(listener, channel));

        assertThat(result.structured()).isEqualTo(json(VALID));
        assertThat(model.requests())
                .hasSize(2)
                .allSatisfy(request -> assertThat(request.schema()).isSameAs(converted));
        assertThatThrownBy(() -> new TurnRequest("Open?", null, null, null, null, null, null, null, converted))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void schemaTurnMayCallToolsBeforeItsStructuredAnswer() throws Exception {
        TinyContextModel model = TinyContextModel.withContext(8192)
                .then(calls(new ToolCall("c1", "open_gate", object("{\"gate\": \"north\"}"))), answer(VALID));
        Agent agent = agent(model, 2);

        TurnResult result = respond(agent);

        assertThat(result.toolCalls()).hasSize(1);
        assertThat(result.structured()).isEqualTo(json(VALID));
        assertThat(agent.history()).hasSize(4);
        assertThat(model.requests())
                .allSatisfy(request -> assertThat(request.schema()).isNotNull());
    }

    @Test
    void integralDecimalIsAnIntegerAndKeepsItsForm() throws Exception {
        TinyContextModel model = TinyContextModel.withContext(8192)
                .then(answer("{\"reasoning\": \"r\", \"choice\": \"open\", \"confidence\": 85.0}"));

        TurnResult result = respond(agent(model, 2));

        assertThat(result.text()).isEqualTo("{\"reasoning\":\"r\",\"choice\":\"open\",\"confidence\":85.0}");
    }

    @Test
    void nonObjectSchemaTakesAJsonScalar() throws Exception {
        TinyContextModel model = TinyContextModel.withContext(8192).then(answer(" \"refuse\"\n"));

        TurnResult result = respond(agent(model, 2), json("{\"enum\": [\"open\", \"refuse\"]}"));

        assertThat(result.structured()).isEqualTo(TextNode.valueOf("refuse"));
        assertThat(result.text()).isEqualTo("\"refuse\"");
    }

    @Test
    void answerThatViolatesTheSchemaFailsWithGenerationFailedAndLeavesNoTrace() {
        TinyContextModel model = TinyContextModel.withContext(8192).then(answer(INVALID), answer(VALID));
        Agent agent = agent(model, 3);

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent));

        assertThat(error.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(error.getMessage())
                .isEqualTo(
                        "The model's answer does not match the schema: #/choice: \"maybe\" is not one of [\"open\",\"refuse\"]");
        assertThat(model.requests()).hasSize(1);
        assertThat(agent.history()).isEmpty();
        assertThat(agent.historyWithTurnInProgress()).isEmpty();
    }

    @Test
    void missingRequiredPropertyAndOutOfRangeNumberAreNamedByPointer() {
        TinyContextModel model = TinyContextModel.withContext(8192)
                .then(
                        answer("{\"reasoning\": \"r\"}"),
                        answer("{\"reasoning\": \"r\", \"choice\": \"open\", \"confidence\": 101}"));
        Agent agent = agent(model, 1);

        AgentException missing = catchThrowableOfType(AgentException.class, () -> respond(agent));
        AgentException range = catchThrowableOfType(AgentException.class, () -> respond(agent));

        assertThat(missing.getMessage()).endsWith(": #: missing required property 'choice'");
        assertThat(range.getMessage()).endsWith(": #/confidence: 101 is greater than the maximum 100");
    }

    @Test
    void answerThatIsNotJsonFailsWithGenerationFailed() {
        TinyContextModel model = TinyContextModel.withContext(8192).then(answer("{\"reasoning\": \"cut off"));

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent(model, 2)));

        assertThat(error.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(error.getMessage()).isEqualTo("The model's answer is not JSON for the requested schema.");
    }

    @Test
    void scriptedModelNeverRegeneratesAnInvalidAnswer() {
        ScriptedModel model = scripted("""
                {"steps": [{"json": {"reasoning": "Hmm.", "choice": "maybe"}},
                           {"json": {"reasoning": "Friend.", "choice": "open"}}]}""");
        assertThat(model.retriesInvalidOutput()).isFalse();
        Agent agent = agent(model, 3);

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent));

        assertThat(error.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(model.remainingSteps()).isEqualTo(1);
        assertThat(agent.history()).isEmpty();
    }

    @Test
    void modelThatRetriesInvalidOutputGeneratesTheAnswerAgainWithinMaxAttempts() throws Exception {
        TinyContextModel model = TinyContextModel.retryingInvalidOutput(8192)
                .then(streamed("{\"choice\": \"maybe\"", "}"), answer("not json"), streamed(VALID));
        Agent agent = agent(model, 3);

        TurnResult result = respond(agent);

        assertThat(model.requests()).hasSize(3);
        assertThat(result.structured()).isEqualTo(json(VALID));
        assertThat(result.steps()).hasSize(1);
        assertThat(listener.steps()).hasSize(1);
        assertThat(agent.history()).hasSize(2);
        assertThat(partials())
                .containsExactly("{\"choice\":\"maybe\"}", "{\"reasoning\":\"Friend.\",\"choice\":\"open\"}");
    }

    @Test
    void modelThatRetriesInvalidOutputStillFailsWhenEveryAttemptIsInvalid() {
        TinyContextModel model =
                TinyContextModel.retryingInvalidOutput(8192).then(answer(INVALID), answer(INVALID), answer(VALID));
        Agent agent = agent(model, 2);

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent));

        assertThat(error.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(error.getMessage()).startsWith("The model's answer does not match the schema: #/choice:");
        assertThat(model.requests()).hasSize(2);
        assertThat(agent.history()).isEmpty();
    }

    @Test
    void maxAttemptsOneNeverRegeneratesEvenForARetryingModel() {
        TinyContextModel model = TinyContextModel.retryingInvalidOutput(8192).then(answer(INVALID), answer(VALID));

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent(model, 1)));

        assertThat(error.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(model.requests()).hasSize(1);
    }

    @Test
    void invalidSchemaFailsBeforeTheModelRunsAndNamesTheSchemaPath() {
        TinyContextModel model = TinyContextModel.withContext(8192);
        Agent agent = agent(model, 2);

        AgentException error = catchThrowableOfType(
                AgentException.class,
                () -> respond(
                        agent, json("{\"type\": \"object\", \"properties\": {\"choice\": {\"type\": \"strng\"}}}")));

        assertThat(error.code()).isEqualTo(ErrorCode.INVALID_SCHEMA);
        assertThat(error.getMessage())
                .isEqualTo("Invalid schema at #/properties/choice/type: Unknown type 'strng' "
                        + "(use object, array, string, integer, number, boolean or null).");
        assertThat(model.requests()).isEmpty();
        assertThat(listener.events()).isEmpty();
        assertThat(agent.history()).isEmpty();
    }

    @Test
    void plainTurnStreamsTextEventsAndNoPartials() throws Exception {
        TinyContextModel model = TinyContextModel.withContext(8192).then(streamed("{\"choice\": ", "\"open\"}"));

        TurnResult result = agent(model, 2).respond(TurnRequest.of("Open?"), context(listener, channel));

        assertThat(partials()).isEmpty();
        assertThat(listener.texts()).hasSize(2);
        assertThat(result.structured()).isNull();
    }
}
