package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.context;
import static dev.oam.core.testing.Fixtures.scripted;
import static dev.oam.core.testing.Fixtures.tool;
import static dev.oam.core.testing.TestOptions.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ScriptedModel;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.testing.RecordingListener;
import dev.oam.core.testing.RecordingModel;
import dev.oam.core.testing.RecordingToolChannel;
import dev.oam.core.testing.TestOptions;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** The per-step tool steering (docs/ARCHITECTURE.md, "Steering each step"), observed through whole turns. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AgentSteeringTest {
    private static final List<ToolDefinition> TOOLS =
            List.of(tool("open_gate"), tool("check_inventory"), tool("ring_bell"));
    private static final List<String> ALL = List.of("open_gate", "check_inventory", "ring_bell");
    private static final String ONE_ROUND = """
            {"steps": [{"toolCalls": [{"name": "open_gate", "arguments": {"gate": "north"}, "id": "c1"}]},
                       {"text": "The gate is open."}]}""";

    private final RecordingListener listener = new RecordingListener();
    private final RecordingToolChannel channel =
            RecordingToolChannel.answeringWith(ToolReply.output(TextNode.valueOf("done")));
    private RecordingModel model;

    private Agent agent(String script, List<ToolDefinition> tools, TestOptions options) {
        model = new RecordingModel(scripted(script));
        return new Agent(model, "You are a guard.", tools, options.build(), List.of());
    }

    private TurnResult respond(Agent agent, TurnRequest request) throws AgentException {
        return agent.respond(request, context(listener, channel));
    }

    private TurnResult respond(Agent agent) throws AgentException {
        return respond(agent, TurnRequest.of("Open the north gate."));
    }

    private static TurnRequest withChoice(ToolChoice choice) {
        return TurnRequest.of("Open the north gate.").withToolChoice(choice);
    }

    @Test
    void autoAllowsEveryEnabledToolOnEveryStep() throws Exception {
        TurnResult result = respond(agent(ONE_ROUND, TOOLS, options()));

        assertThat(result.steps())
                .containsExactly(
                        new Step(0, 0, ToolCallingMode.ALLOWED, ALL, 0),
                        new Step(1, 1, ToolCallingMode.ALLOWED, ALL, 0));
        assertThat(model.requests()).allSatisfy(request -> {
            assertThat(request.tools()).isEqualTo(TOOLS);
            assertThat(request.offerRespondDirectly()).isFalse();
        });
    }

    @Test
    void noneDisallowsToolsAndHidesTheirDefinitions() throws Exception {
        TurnResult result = respond(
                agent("{\"steps\": [{\"text\": \"No.\"}]}", TOOLS, options().toolChoice(ToolChoice.NONE)));

        assertThat(result.steps()).containsExactly(new Step(0, 0, ToolCallingMode.DISALLOWED, List.of(), 0));
        ModelRequest request = model.requests().get(0);
        assertThat(request.mode()).isEqualTo(ToolCallingMode.DISALLOWED);
        assertThat(request.tools()).isEmpty();
        assertThat(request.offerRespondDirectly()).isFalse();
    }

    @Test
    void forcedToolAppliesToFirstStepOnly() throws Exception {
        TurnResult result = respond(agent(ONE_ROUND, TOOLS, options().toolChoice(ToolChoice.REQUIRED)));

        assertThat(result.steps())
                .extracting(Step::mode)
                .containsExactly(ToolCallingMode.REQUIRED, ToolCallingMode.ALLOWED);
        assertThat(result.steps()).extracting(Step::enabledTools).containsExactly(ALL, ALL);
        assertThat(model.requests())
                .extracting(ModelRequest::mode)
                .containsExactly(ToolCallingMode.REQUIRED, ToolCallingMode.ALLOWED);
    }

    @Test
    void namedToolIsTheOnlyToolOfTheFirstStepThenEveryToolIsAllowed() throws Exception {
        String script = """
                {"steps": [{"toolCalls": [{"name": "check_inventory", "id": "c1"}]}, {"text": "Two swords."}]}""";
        TurnResult result =
                respond(agent(script, TOOLS, options().toolChoice(new ToolChoice.Named("check_inventory"))));

        assertThat(result.steps())
                .containsExactly(
                        new Step(0, 0, ToolCallingMode.REQUIRED, List.of("check_inventory"), 0),
                        new Step(1, 1, ToolCallingMode.ALLOWED, ALL, 0));
        assertThat(model.requests().get(0).tools())
                .extracting(ToolDefinition::name)
                .containsExactly("check_inventory");
        assertThat(model.requests().get(1).tools()).isEqualTo(TOOLS);
    }

    @Test
    void namedToolTheAgentLacksIsRejectedAtTurnStart() {
        ScriptedModel script = scripted(ONE_ROUND);
        Agent untouched = new Agent(script, null, TOOLS, options().build(), List.of());

        AgentException error = catchThrowableOfType(
                AgentException.class, () -> respond(untouched, withChoice(new ToolChoice.Named("fly_away"))));

        assertThat(error.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
        assertThat(error.getMessage()).contains("'toolChoice'").contains("'fly_away'");
        assertThat(script.remainingSteps()).isEqualTo(2);
        assertThat(listener.events()).isEmpty();
        assertThat(untouched.history()).isEmpty();
    }

    @Test
    void namedToolInTheSessionOptionsIsCheckedAgainstTheToolsAtTurnStart() throws Exception {
        Agent agent = agent(ONE_ROUND, TOOLS, options().toolChoice(new ToolChoice.Named("ring_bell")));
        agent.setTools(List.of(tool("open_gate")));

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent));

        assertThat(error.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
        assertThat(model.requests()).isEmpty();
    }

    @Test
    void explicitOffersRespondDirectlyOnlyOnTheFirstStep() throws Exception {
        TurnResult result = respond(agent(ONE_ROUND, TOOLS, options().toolChoice(ToolChoice.EXPLICIT)));

        assertThat(model.requests())
                .extracting(ModelRequest::offerRespondDirectly)
                .containsExactly(true, false);
        assertThat(result.steps())
                .extracting(Step::mode)
                .containsExactly(ToolCallingMode.REQUIRED, ToolCallingMode.ALLOWED);
        assertThat(result.steps()).flatExtracting(Step::enabledTools).doesNotContain(ToolDefinition.RESPOND_DIRECTLY);
        assertThat(model.requests())
                .flatExtracting(ModelRequest::tools)
                .extracting(ToolDefinition::name)
                .doesNotContain(ToolDefinition.RESPOND_DIRECTLY);
    }

    @Test
    void callingRespondDirectlyDisallowsTheNextStepAndLeavesNoTrace() throws Exception {
        Agent agent = agent("""
                {"steps": [{"toolCalls": [{"name": "respond_directly", "id": "rd"}]}, {"text": "Good evening."}]}""", TOOLS, options().toolChoice(ToolChoice.EXPLICIT));

        TurnResult result = respond(agent, TurnRequest.of("Hello!"));

        assertThat(result.text()).isEqualTo("Good evening.");
        assertThat(result.toolCalls()).isEmpty();
        assertThat(result.steps())
                .containsExactly(
                        new Step(0, 0, ToolCallingMode.REQUIRED, ALL, 0),
                        new Step(1, 0, ToolCallingMode.DISALLOWED, List.of(), 0));
        assertThat(channel.sent()).isEmpty();
        assertThat(listener.events())
                .noneMatch(event ->
                        event instanceof TurnEvent.ToolCallStarted || event instanceof TurnEvent.ToolCallCompleted);
        assertThat(agent.history()).hasSize(2);
        assertThat(agent.history().get(0)).isInstanceOf(TranscriptEntry.Prompt.class);
        assertThat(agent.history().get(1)).isInstanceOf(TranscriptEntry.Response.class);
        ModelRequest second = model.requests().get(1);
        assertThat(second.tools()).isEmpty();
        assertThat(second.offerRespondDirectly()).isFalse();
        assertThat(second.entries()).hasSize(1).first().isInstanceOf(TranscriptEntry.Prompt.class);
    }

    @Test
    void respondDirectlyBesideARealCallRunsOnlyTheRealCall() throws Exception {
        Agent agent = agent("""
                {"steps": [{"toolCalls": [{"name": "respond_directly", "id": "rd"}, {"name": "open_gate", "id": "c1"}]},
                           {"text": "Opened."}]}""", TOOLS, options().toolChoice(ToolChoice.EXPLICIT));

        TurnResult result = respond(agent);

        assertThat(channel.sent()).extracting(ToolCall::id).containsExactly("c1");
        assertThat(result.toolCalls()).extracting(record -> record.call().id()).containsExactly("c1");
        assertThat(listener.ofType(TurnEvent.ToolCallStarted.class))
                .extracting(event -> event.call().id())
                .containsExactly("c1");
        assertThat(agent.history().get(1))
                .isInstanceOfSatisfying(
                        TranscriptEntry.ToolCalls.class,
                        entry -> assertThat(entry.calls())
                                .extracting(ToolCall::name)
                                .containsExactly("open_gate"));
        assertThat(result.steps().get(1).mode()).isEqualTo(ToolCallingMode.ALLOWED);
    }

    static Stream<ToolChoice> everyChoice() {
        return Stream.of(ToolChoice.AUTO, ToolChoice.NONE, ToolChoice.REQUIRED, ToolChoice.EXPLICIT);
    }

    @ParameterizedTest
    @MethodSource("everyChoice")
    void sessionWithoutToolsIsDisallowedWithNoEnabledTools(ToolChoice choice) throws Exception {
        TurnResult result = respond(
                agent("{\"steps\": [{\"text\": \"Hi.\"}]}", List.of(), options().toolChoice(choice)));

        assertThat(result.steps()).containsExactly(new Step(0, 0, ToolCallingMode.DISALLOWED, List.of(), 0));
        assertThat(model.requests().get(0).offerRespondDirectly()).isFalse();
    }

    @Test
    void enabledToolsHidesTheOtherTools() throws Exception {
        TurnResult result = respond(agent(ONE_ROUND, TOOLS, options().enabledTools("ring_bell", "open_gate")));

        assertThat(result.steps()).extracting(Step::enabledTools).containsOnly(List.of("open_gate", "ring_bell"));
        assertThat(model.requests())
                .allSatisfy(request -> assertThat(request.tools())
                        .extracting(ToolDefinition::name)
                        .containsExactly("open_gate", "ring_bell"));
    }

    @Test
    void callingAHiddenToolGetsAnErrorOutputAndIsNotSent() throws Exception {
        Agent agent = agent("""
                {"steps": [{"toolCalls": [{"name": "check_inventory", "id": "c1"}]}, {"template": "{toolOutput}"}]}""", TOOLS, options().enabledTools("open_gate"));

        TurnResult result = respond(agent);

        assertThat(channel.sent()).isEmpty();
        ToolRecord record = result.toolCalls().get(0);
        assertThat(record.isError()).isTrue();
        assertThat(record.output().textValue())
                .isEqualTo("Tool 'check_inventory' is not available. Available tools: open_gate.");
        assertThat(result.text())
                .isEqualTo("Error: Tool 'check_inventory' is not available. Available tools: open_gate.");
    }

    @Test
    void emptyEnabledToolsOverrideDisallowsTheTurn() throws Exception {
        Agent agent =
                agent("{\"steps\": [{\"text\": \"Hi.\"}]}", TOOLS, options().toolChoice(ToolChoice.REQUIRED));

        TurnResult result = respond(agent, TurnRequest.of("Hi").withEnabledTools(List.of()));

        assertThat(result.steps()).containsExactly(new Step(0, 0, ToolCallingMode.DISALLOWED, List.of(), 0));
        assertThat(model.requests().get(0).tools()).isEmpty();
    }

    @Test
    void namedToolFilteredOutByEnabledToolsLeavesTheFirstStepDisallowed() throws Exception {
        Agent agent = agent(
                "{\"steps\": [{\"text\": \"Hi.\"}]}",
                TOOLS,
                options().toolChoice(new ToolChoice.Named("ring_bell")).enabledTools("open_gate"));

        TurnResult result = respond(agent);

        assertThat(result.steps()).containsExactly(new Step(0, 0, ToolCallingMode.DISALLOWED, List.of(), 0));
    }

    @Test
    void reachingMaxToolRoundsDisallowsTheNextStep() throws Exception {
        TurnResult result = respond(agent(ONE_ROUND, TOOLS, options().maxToolRounds(1)));

        assertThat(result.steps())
                .containsExactly(
                        new Step(0, 0, ToolCallingMode.ALLOWED, ALL, 0),
                        new Step(1, 1, ToolCallingMode.DISALLOWED, List.of(), 0));
        assertThat(model.requests().get(1).tools()).isEmpty();
    }

    @Test
    void maxToolRoundsZeroDisallowsEvenARequiredFirstStep() throws Exception {
        TurnResult result = respond(agent(
                "{\"steps\": [{\"text\": \"Hi.\"}]}",
                TOOLS,
                options().toolChoice(ToolChoice.REQUIRED).maxToolRounds(0)));

        assertThat(result.steps()).containsExactly(new Step(0, 0, ToolCallingMode.DISALLOWED, List.of(), 0));
    }

    @Test
    void extraCallsBeyondMaxToolCallsGetAnErrorOutputAndAreNotSent() throws Exception {
        Agent agent = agent("""
                {"steps": [{"toolCalls": [{"name": "open_gate", "id": "c1"}, {"name": "check_inventory", "id": "c2"},
                                          {"name": "ring_bell", "id": "c3"}]},
                           {"text": "Done."}]}""", TOOLS, options().maxToolCalls(2));

        TurnResult result = respond(agent);

        assertThat(channel.sent()).extracting(ToolCall::id).containsExactly("c1", "c2");
        assertThat(result.toolCalls()).hasSize(3);
        ToolRecord refused = result.toolCalls().stream()
                .filter(r -> r.call().id().equals("c3"))
                .findFirst()
                .orElseThrow();
        assertThat(refused.isError()).isTrue();
        assertThat(refused.output().textValue())
                .isEqualTo(
                        "Tool call limit reached (maxToolCalls is 2); 'ring_bell' was not run. Answer with what you have.");
        assertThat(result.toolCalls())
                .filteredOn(r -> !r.call().id().equals("c3"))
                .noneMatch(ToolRecord::isError);
        assertThat(result.steps().get(1)).isEqualTo(new Step(1, 1, ToolCallingMode.DISALLOWED, List.of(), 0));
    }

    @Test
    void maxToolCallsCountsCallsAcrossRounds() throws Exception {
        Agent agent = agent("""
                {"steps": [{"toolCalls": [{"name": "open_gate", "id": "c1"}]},
                           {"toolCalls": [{"name": "check_inventory", "id": "c2"}, {"name": "ring_bell", "id": "c3"}]},
                           {"text": "Done."}]}""", TOOLS, options().maxToolCalls(2));

        TurnResult result = respond(agent);

        assertThat(channel.sent()).extracting(ToolCall::id).containsExactly("c1", "c2");
        assertThat(result.toolCalls())
                .filteredOn(ToolRecord::isError)
                .extracting(r -> r.call().id())
                .containsExactly("c3");
        assertThat(result.steps())
                .extracting(Step::mode)
                .containsExactly(ToolCallingMode.ALLOWED, ToolCallingMode.ALLOWED, ToolCallingMode.DISALLOWED);
    }

    @Test
    void turnOverridesReplaceTheSessionOptionsForThatTurnOnly() throws Exception {
        Agent agent = agent("{\"steps\": [{\"text\": \"One.\"}, {\"text\": \"Two.\"}]}", TOOLS, options());

        TurnResult overridden = respond(agent, withChoice(ToolChoice.NONE));
        TurnResult plain = respond(agent, TurnRequest.of("Again."));

        assertThat(overridden.steps().get(0).mode()).isEqualTo(ToolCallingMode.DISALLOWED);
        assertThat(plain.steps().get(0).mode()).isEqualTo(ToolCallingMode.ALLOWED);
        assertThat(agent.options().toolChoice()).isEqualTo(ToolChoice.AUTO);
    }

    @Test
    void toolCallsInADisallowedStepFailTheTurnWithoutRunningThem() {
        Agent agent = agent(ONE_ROUND, TOOLS, options().toolChoice(ToolChoice.NONE));

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent));

        assertThat(error.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(channel.sent()).isEmpty();
        assertThat(agent.history()).isEmpty();
    }

    @Test
    void resultStepsAreTheModelStepEventsInOrder() throws Exception {
        TurnResult result = respond(agent("""
                {"steps": [{"toolCalls": [{"name": "open_gate", "id": "c1"}]}, {"toolCalls": [{"name": "ring_bell", "id": "c2"}]},
                           {"text": "Done."}]}""", TOOLS, options().toolChoice(ToolChoice.REQUIRED)));

        assertThat(result.steps()).isEqualTo(listener.steps());
        assertThat(result.steps()).extracting(Step::index).containsExactly(0, 1, 2);
        assertThat(result.steps()).extracting(Step::completedToolRounds).containsExactly(0, 1, 2);
        assertThat(result.steps())
                .extracting(Step::mode)
                .containsExactly(ToolCallingMode.REQUIRED, ToolCallingMode.ALLOWED, ToolCallingMode.ALLOWED);
    }
}
