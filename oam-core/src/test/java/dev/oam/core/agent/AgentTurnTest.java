package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.context;
import static dev.oam.core.testing.Fixtures.json;
import static dev.oam.core.testing.Fixtures.scripted;
import static dev.oam.core.testing.Fixtures.tool;
import static dev.oam.core.testing.TestOptions.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ScriptedModel;
import dev.oam.core.model.UnavailableModel;
import dev.oam.core.model.Usage;
import dev.oam.core.testing.RecordingListener;
import dev.oam.core.testing.RecordingModel;
import dev.oam.core.testing.RecordingToolChannel;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Whole turns: what they add to the history, the events they stream, structured answers and usage. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AgentTurnTest {
    private static final List<ToolDefinition> TOOLS = List.of(tool("open_gate"));
    private static final JsonNode SCHEMA = json("""
            {"type": "object", "properties": {"reasoning": {"type": "string"}, "choice": {"type": "string"}},
             "required": ["reasoning", "choice"]}""");

    private final RecordingListener listener = new RecordingListener();
    private final RecordingToolChannel channel =
            RecordingToolChannel.answeringWith(ToolReply.output(json("{\"opened\": true}")));

    private Agent agent(LanguageModel model) {
        return new Agent(model, "You are a guard.", TOOLS, options().build(), List.of());
    }

    private Agent agent(String script) {
        return agent(scripted(script));
    }

    private TurnResult respond(Agent agent, String prompt) throws AgentException {
        return agent.respond(TurnRequest.of(prompt), context(listener, channel));
    }

    private static TurnRequest schemaTurn(String prompt) {
        return TurnRequest.of(prompt).withSchema(SCHEMA);
    }

    @Test
    void turnWithOneToolRoundAddsExactlyFourEntries() throws Exception {
        Agent agent = agent("""
                {"steps": [{"toolCalls": [{"name": "open_gate", "arguments": {"gate": "north"}, "id": "c1"}]},
                           {"text": "The gate is open."}]}""");

        TurnResult result = respond(agent, "Open the north gate.");

        List<TranscriptEntry> history = agent.history();
        assertThat(history).hasSize(4);
        assertThat(history.get(0)).isInstanceOfSatisfying(TranscriptEntry.Prompt.class, prompt -> {
            assertThat(prompt.text()).isEqualTo("Open the north gate.");
            assertThat(prompt.schema()).isNull();
        });
        assertThat(history.get(1))
                .isInstanceOfSatisfying(
                        TranscriptEntry.ToolCalls.class,
                        calls -> assertThat(calls.calls())
                                .isEqualTo(List.of(result.toolCalls().get(0).call())));
        assertThat(history.get(2)).isInstanceOfSatisfying(TranscriptEntry.ToolOutput.class, output -> {
            assertThat(output.toolName()).isEqualTo("open_gate");
            assertThat(output.callId()).isEqualTo("c1");
            assertThat(output.text()).isEqualTo("{\"opened\":true}");
        });
        assertThat(history.get(3)).isInstanceOfSatisfying(TranscriptEntry.Response.class, response -> {
            assertThat(response.text()).isEqualTo("The gate is open.");
            assertThat(response.structured()).isNull();
        });
        assertThat(result.text()).isEqualTo("The gate is open.");
        assertThat(result.structured()).isNull();
    }

    @Test
    void turnWithoutToolsAddsThePromptAndTheAnswer() throws Exception {
        Agent agent = agent("{\"steps\": [{\"text\": \"Halt!\"}, {\"text\": \"Move along.\"}]}");

        respond(agent, "Hello.");
        respond(agent, "");

        assertThat(agent.history())
                .extracting(Object::getClass)
                .containsExactly(
                        TranscriptEntry.Prompt.class, TranscriptEntry.Response.class,
                        TranscriptEntry.Prompt.class, TranscriptEntry.Response.class);
        assertThat(((TranscriptEntry.Prompt) agent.history().get(2)).text()).isEmpty();
    }

    @Test
    void failedTurnLeavesTheHistoryUnchanged() throws Exception {
        Agent agent = agent("""
                {"steps": [{"text": "Halt!"},
                           {"toolCalls": [{"name": "open_gate", "id": "c1"}]}, {"error": "guardrail_violation"}]}""");
        respond(agent, "Hello.");
        List<TranscriptEntry> before = agent.history();

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent, "Kill the king."));

        assertThat(error.code()).isEqualTo(ErrorCode.GUARDRAIL_VIOLATION);
        assertThat(error.getMessage()).isEqualTo("Scripted failure: guardrail_violation.");
        assertThat(agent.history()).isEqualTo(before);
        assertThat(agent.historyWithTurnInProgress()).isEqualTo(before);
    }

    @Test
    void scriptedErrorCarriesItsOwnMessage() {
        Agent agent = agent("{\"steps\": [{\"error\": \"refusal\", \"message\": \"I will not.\"}]}");

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent, "Open."));

        assertThat(error.code()).isEqualTo(ErrorCode.REFUSAL);
        assertThat(error.getMessage()).isEqualTo("I will not.");
    }

    @Test
    void textDeltasConcatenateToTheFinalText() throws Exception {
        Agent agent = agent("{\"steps\": [{\"text\": \"The north gate is jammed shut.\", \"chunks\": 3}]}");

        TurnResult result = respond(agent, "Open.");

        List<TurnEvent.Text> texts = listener.texts();
        assertThat(texts).hasSizeBetween(3, 4); // "about" 3 pieces: cut at word boundaries
        assertThat(texts).noneMatch(TurnEvent.Text::isReset);
        assertThat(String.join("", texts.stream().map(TurnEvent.Text::delta).toList()))
                .isEqualTo(result.text());
        StringBuilder soFar = new StringBuilder();
        for (TurnEvent.Text text : texts) {
            soFar.append(text.delta());
            assertThat(text.text()).isEqualTo(soFar.toString());
        }
        assertThat(texts.get(texts.size() - 1).text()).isEqualTo("The north gate is jammed shut.");
    }

    @Test
    void textWithoutChunksArrivesAsOneDelta() throws Exception {
        respond(agent("{\"steps\": [{\"text\": \"Halt!\"}]}"), "Hello.");

        assertThat(listener.texts()).containsExactly(new TurnEvent.Text("Halt!", "Halt!", false));
    }

    @Test
    void usageSumsAcrossSteps() throws Exception {
        RecordingModel model = new RecordingModel(scripted("""
                {"steps": [{"toolCalls": [{"name": "open_gate", "arguments": {"gate": "north"}}]},
                           {"toolCalls": [{"name": "open_gate", "arguments": {"gate": "south"}}]},
                           {"text": "Both gates are open."}]}"""));

        TurnResult result = respond(agent(model), "Open every gate.");

        List<ModelResponse> responses = model.responses();
        assertThat(responses).hasSize(3);
        Usage sum = responses.stream().map(ModelResponse::usage).reduce(Usage.ZERO, Usage::plus);
        assertThat(result.usage()).isEqualTo(sum);
        assertThat(responses)
                .allSatisfy(
                        response -> assertThat(response.usage().inputTokens()).isPositive());
        assertThat(result.usage().inputTokens())
                .isGreaterThan(responses.get(2).usage().inputTokens());
        assertThat(result.usage().totalTokens()).isEqualTo(sum.inputTokens() + sum.outputTokens());
    }

    @Test
    void templateSeesThePromptAndThisTurnsToolOutputs() throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.answering(call ->
                ToolReply.output(TextNode.valueOf(call.arguments().get("gate").textValue() + " open")));
        Agent agent = agent("""
                {"steps": [{"toolCalls": [{"name": "open_gate", "arguments": {"gate": "north"}}]},
                           {"toolCalls": [{"name": "open_gate", "arguments": {"gate": "south"}}]},
                           {"template": "{prompt} | {toolOutput} | {toolOutputs}"}]}""");

        TurnResult result = agent.respond(TurnRequest.of("Open every gate."), context(listener, channel));

        assertThat(result.text()).isEqualTo("Open every gate. | south open | north open\nsouth open");
    }

    @Test
    void templateShowsToolErrorsAsTheModelSawThem() throws Exception {
        Agent agent = agent("""
                {"steps": [{"toolCalls": [{"name": "open_gate"}]}, {"template": "Gate says: {toolOutput}"}]}""");

        TurnResult result = agent.respond(
                TurnRequest.of("Open."),
                context(listener, RecordingToolChannel.answeringWith(ToolReply.error("Chain jammed."))));

        assertThat(result.text()).isEqualTo("Gate says: Error: Chain jammed.");
    }

    @Test
    void templateIgnoresToolOutputsOfEarlierTurns() throws Exception {
        Agent agent = agent("""
                {"steps": [{"toolCalls": [{"name": "open_gate"}]}, {"text": "Opened."},
                           {"template": "[{toolOutput}] [{toolOutputs}]"}]}""");
        respond(agent, "Open.");

        TurnResult result = respond(agent, "And now?");

        assertThat(result.text()).isEqualTo("[] []");
    }

    @Test
    void scriptCursorIsSharedByEveryTurnOfEveryAgentOnTheSameModel() throws Exception {
        ScriptedModel model =
                scripted("{\"steps\": [{\"text\": \"one\"}, {\"text\": \"two\"}, {\"text\": \"three\"}]}");
        Agent first = agent(model);
        Agent second = agent(model);

        assertThat(respond(first, "a").text()).isEqualTo("one");
        assertThat(respond(second, "b").text()).isEqualTo("two");
        assertThat(respond(first, "c").text()).isEqualTo("three");
        assertThat(respond(second, "d").text()).isEqualTo("(script exhausted)");
        assertThat(model.remainingSteps()).isZero();
    }

    @Test
    void schemaTurnAnswersWithTheStructuredValue() throws Exception {
        Agent agent = agent("{\"steps\": [{\"json\": {\"reasoning\": \"Too late.\", \"choice\": \"refuse\"}}]}");

        TurnResult result = agent.respond(schemaTurn("Open?"), context(listener, channel));

        JsonNode expected = json("{\"reasoning\": \"Too late.\", \"choice\": \"refuse\"}");
        assertThat(result.structured()).isEqualTo(expected);
        assertThat(result.text()).isEqualTo("{\"reasoning\":\"Too late.\",\"choice\":\"refuse\"}");
        assertThat(listener.ofType(TurnEvent.Partial.class))
                .extracting(TurnEvent.Partial::value)
                .containsExactly(expected);
        assertThat(agent.history().get(0)).isInstanceOfSatisfying(TranscriptEntry.Prompt.class, prompt -> {
            assertThat(prompt.schema()).isEqualTo(SCHEMA);
            assertThat(prompt.schemaName()).isEqualTo("Response");
        });
        assertThat(agent.history().get(1)).isInstanceOfSatisfying(TranscriptEntry.Response.class, response -> {
            assertThat(response.structured()).isEqualTo(expected);
            assertThat(response.schemaName()).isEqualTo("Response");
            assertThat(response.text()).isEqualTo(result.text());
        });
    }

    @Test
    void schemaTurnAcceptsATextStepWhoseTextIsJson() throws Exception {
        Agent agent = agent(
                "{\"steps\": [{\"text\": \"{\\\"reasoning\\\": \\\"No.\\\", \\\"choice\\\": \\\"refuse\\\"}\"}]}");

        TurnResult result = agent.respond(schemaTurn("Open?"), context(listener, channel));

        assertThat(result.structured()).isEqualTo(json("{\"reasoning\": \"No.\", \"choice\": \"refuse\"}"));
    }

    @Test
    void schemaTurnAnsweredWithPlainTextFailsAndLeavesNoTrace() {
        Agent agent = agent("{\"steps\": [{\"text\": \"Hmph.\"}]}");

        AgentException error = catchThrowableOfType(
                AgentException.class, () -> agent.respond(schemaTurn("Open?"), context(listener, channel)));

        assertThat(error.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(agent.history()).isEmpty();
    }

    @Test
    void plainTurnAnsweredByAJsonStepHasNoStructuredValue() throws Exception {
        TurnResult result = respond(agent("{\"steps\": [{\"json\": {\"choice\": \"refuse\"}}]}"), "Open?");

        assertThat(result.structured()).isNull();
        assertThat(result.text()).isEqualTo("{\"choice\":\"refuse\"}");
    }

    @Test
    void modelSeesInstructionsContextNoteAndTheConversation() throws Exception {
        RecordingModel model =
                new RecordingModel(scripted("{\"steps\": [{\"text\": \"Halt!\"}, {\"text\": \"Go.\"}]}"));
        Agent agent = agent(model);
        agent.setContextNote("It is night.");
        respond(agent, "Hello.");

        respond(agent, "May I pass?");

        ModelRequest second = model.requests().get(1);
        assertThat(second.instructions()).isEqualTo("You are a guard.");
        assertThat(second.contextNote()).isEqualTo("It is night.");
        assertThat(second.entries()).hasSize(3);
        assertThat(second.entries().subList(0, 2)).isEqualTo(agent.history().subList(0, 2));
        assertThat(second.prompt()).isEqualTo("May I pass?");
    }

    @Test
    void resetClearsTheConversationAndContextNoteButKeepsInstructionsAndTools() throws Exception {
        Agent agent = agent("{\"steps\": [{\"text\": \"Halt!\"}]}");
        agent.setContextNote("It is night.");
        respond(agent, "Hello.");

        agent.reset();

        assertThat(agent.history()).isEmpty();
        assertThat(agent.contextNote()).isNull();
        assertThat(agent.instructions()).isEqualTo("You are a guard.");
        assertThat(agent.tools()).isEqualTo(TOOLS);
    }

    @Test
    void unavailableModelFailsTheTurnWithoutRetrying() {
        int[] calls = {0};
        LanguageModel counting = new LanguageModel() {
            private final UnavailableModel unavailable =
                    new UnavailableModel(ModelAvailability.unavailable("model_not_ready", "No model is configured."));

            @Override
            public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
                    throws AgentException {
                calls[0]++;
                return unavailable.respond(request, listener, token);
            }

            @Override
            public ModelAvailability availability() {
                return unavailable.availability();
            }
        };
        Agent agent = agent(counting);

        AgentException error = catchThrowableOfType(
                AgentException.class, () -> agent.respond(TurnRequest.of("Hi"), context(listener, ToolChannel.NONE)));

        assertThat(error.code()).isEqualTo(ErrorCode.MODEL_UNAVAILABLE);
        assertThat(error.getMessage()).isEqualTo("No model is configured.");
        assertThat(calls[0]).isEqualTo(1);
    }
}
