package dev.oam.game.decision;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.game.npc.Emotion;
import dev.oam.game.npc.Persona;
import dev.oam.game.testing.RecordingModel;
import dev.oam.game.testing.Tools;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class DecisionsTest {
    private static final List<DecisionOption> OPTIONS = List.of(
            new DecisionOption("flee", "Run into the woods"),
            new DecisionOption("fight", "Draw the rusty knife"),
            DecisionOption.of("beg"));

    private static final Persona SNIK = new Persona(
            "Snik",
            "a goblin scout.",
            "timid and greedy",
            "",
            "",
            List.of("Stay alive.", "Steal shiny things"),
            List.of(),
            List.of("He stole the ring."),
            Emotion.AFRAID,
            2);

    private static DecisionRequest request(
            String situation,
            List<DecisionOption> options,
            List<ToolDefinition> tools,
            ToolChoice choice,
            String fallback) {
        return new DecisionRequest(
                situation,
                options,
                null,
                null,
                tools,
                choice,
                fallback,
                null,
                null,
                Decisions.DEFAULT_MAX_TOOL_ROUNDS,
                AgentOptions.DEFAULT_TOOL_TIMEOUT);
    }

    private static Decision decide(DecisionRequest request, RecordingModel model) throws AgentException {
        return Decisions.decide(request, model, ToolChannel.NONE, CancellationToken.create());
    }

    @Test
    void instructionsAreTheDefaultTextThenTheActor() {
        assertThat(Decisions.instructions(null, null)).isEqualTo(Decisions.DEFAULT_INSTRUCTIONS);
        assertThat(Decisions.instructions(null, SNIK))
                .isEqualTo(Decisions.DEFAULT_INSTRUCTIONS + "\n"
                        + "You decide for Snik, a goblin scout.\n"
                        + "Personality: timid and greedy.\n"
                        + "Goals: Stay alive; Steal shiny things.");
        assertThat(Decisions.instructions("Decide like a chess engine.", Persona.named("Snik")))
                .isEqualTo("Decide like a chess engine.\nYou decide for Snik.");
    }

    @Test
    void secretsAndKnowledgeStayOutOfTheInstructions() {
        assertThat(Decisions.instructions(null, SNIK)).doesNotContain("ring");
    }

    @Test
    void promptHasTheSituationTheFactsAndOneLinePerOption() {
        assertThat(Decisions.prompt(" A knight blocks the road. ", "{\"hp\":3}", OPTIONS))
                .isEqualTo("""
                Situation: A knight blocks the road.
                Facts: {"hp":3}
                Options:
                - flee: Run into the woods
                - fight: Draw the rusty knife
                - beg""");
        assertThat(Decisions.prompt("Night.", null, OPTIONS)).startsWith("Situation: Night.\nOptions:\n");
    }

    @Test
    void schemaAsksForReasoningThenAnEnumChoiceThenConfidence() {
        JsonNode schema = Decisions.schema(OPTIONS);
        List<String> keys = new ArrayList<>();
        schema.path("properties").fieldNames().forEachRemaining(keys::add);
        assertThat(keys).containsExactly("reasoning", "choice", "confidence");
        assertThat(schema.path("properties").path("choice").path("enum").toString())
                .isEqualTo("[\"flee\",\"fight\",\"beg\"]");
        assertThat(schema.path("properties").path("confidence").path("type").asText())
                .isEqualTo("integer");
        assertThat(schema.path("required").toString()).isEqualTo("[\"reasoning\",\"choice\",\"confidence\"]");
        assertThat(schema.path("additionalProperties").asBoolean(true)).isFalse();
    }

    @Test
    void theModelSeesInstructionsPromptAndTheEnumSchemaWithoutTools() throws Exception {
        RecordingModel model = RecordingModel.playing(
                "[{\"json\":{\"reasoning\":\"Outnumbered.\",\"choice\":\"flee\",\"confidence\":80}}]");
        DecisionRequest request = new DecisionRequest(
                "Three wolves circle you.",
                OPTIONS,
                SNIK,
                Json.parse("{\"hp\":3}"),
                List.of(),
                ToolChoice.REQUIRED,
                null,
                null,
                0.2,
                2,
                Duration.ofSeconds(5));
        Decision decision = decide(request, model);
        assertThat(decision.optionID()).isEqualTo("flee");
        assertThat(decision.reasoning()).isEqualTo("Outnumbered.");
        assertThat(decision.confidence()).isEqualTo(80);
        assertThat(decision.isFallback()).isFalse();
        assertThat(decision.usage().totalTokens()).isPositive();
        ModelRequest seen = model.requests().get(0);
        assertThat(seen.instructions()).isEqualTo(Decisions.instructions(null, SNIK));
        assertThat(seen.prompt()).isEqualTo(Decisions.prompt("Three wolves circle you.", "{\"hp\":3}", OPTIONS));
        assertThat(seen.schema().json().path("properties").path("choice").path("enum"))
                .hasSize(3);
        assertThat(seen.schema()
                        .json()
                        .path("properties")
                        .path("reasoning")
                        .path("minLength")
                        .asInt())
                .as("a grammar holds the model to a reason of some words")
                .isEqualTo(Decisions.REASON_FLOOR);
        assertThat(Decisions.schema(OPTIONS)
                        .path("properties")
                        .path("reasoning")
                        .has("minLength"))
                .as("the floor is the model's, not the answer's: a shorter reason (\"Outnumbered.\") is still read")
                .isFalse();
        assertThat(seen.mode()).as("no tools: the tool choice is none").isEqualTo(ToolCallingMode.DISALLOWED);
        assertThat(seen.options().temperature()).isEqualTo(0.2);
    }

    @Test
    void aSingleOptionIsCertainWithoutAModelCall() throws Exception {
        RecordingModel model =
                RecordingModel.playing("[{\"json\":{\"reasoning\":\"x\",\"choice\":\"wait\",\"confidence\":1}}]");
        Decision decision = decide(
                request("Nothing happens.", List.of(DecisionOption.of(" wait ")), List.of(), ToolChoice.AUTO, null),
                model);
        assertThat(decision).isEqualTo(new Decision("wait", "", 100, List.of(), Usage.ZERO, false));
        assertThat(model.requests()).isEmpty();
        assertThat(model.remainingSteps()).isEqualTo(1);
    }

    @Test
    void aNearMissChoiceAndAnOutOfRangeConfidenceAreAccepted() throws Exception {
        RecordingModel model = RecordingModel.playing(
                "[{\"json\":{\"choice\":\"FIGHT\",\"confidence\":250.7,\"reasoning\":\"Cornered.\"}},"
                        + "{\"text\":\"{\\\"reasoning\\\":\\\"Meh.\\\",\\\"choice\\\":\\\"Beg\\\"}\"}]");
        Decision first = decide(DecisionRequest.of("Cornered.", OPTIONS), model);
        assertThat(first.optionID()).isEqualTo("fight");
        assertThat(first.confidence()).isEqualTo(100);
        assertThat(first.reasoning()).isEqualTo("Cornered.");
        Decision second = decide(DecisionRequest.of("Cornered again.", OPTIONS), model);
        assertThat(second.optionID()).isEqualTo("beg");
        assertThat(second.confidence()).isEqualTo(50);
    }

    @Test
    void aChoiceOfNoOptionFailsTheDecision() {
        RecordingModel model =
                RecordingModel.playing("[{\"json\":{\"reasoning\":\"x\",\"choice\":\"dance\",\"confidence\":10}}]");
        assertThatThrownBy(() -> decide(DecisionRequest.of("Music.", OPTIONS), model))
                .isInstanceOfSatisfying(
                        AgentException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.GENERATION_FAILED))
                .hasMessageContaining("dance");
    }

    @Test
    void guardrailsAndRefusalsGiveTheFallbackOption() throws Exception {
        RecordingModel model = RecordingModel.playing("[{\"error\":\"guardrail_violation\"},{\"error\":\"refusal\"}]");
        DecisionRequest request = request("Blood everywhere.", OPTIONS, List.of(), ToolChoice.AUTO, " beg ");
        Decision blocked = decide(request, model);
        // The blocked step read the prompt; its tokens are the fallback's usage.
        int prompt = model.requests().get(0).estimatedInputTokens();
        assertThat(blocked).isEqualTo(new Decision("beg", "", 0, List.of(), new Usage(prompt, 0, 0), true));
        assertThat(prompt).isPositive();
        assertThat(decide(request, model).isFallback()).isTrue();
    }

    @Test
    void otherFailuresAndBlocksWithoutAFallbackAreThrown() {
        RecordingModel model =
                RecordingModel.playing("[{\"error\":\"guardrail_violation\"},{\"error\":\"context_size_exceeded\"}]");
        assertThatThrownBy(() -> decide(DecisionRequest.of("Blood.", OPTIONS), model))
                .isInstanceOfSatisfying(
                        AgentException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.GUARDRAIL_VIOLATION));
        assertThatThrownBy(() -> decide(request("Blood.", OPTIONS, List.of(), ToolChoice.AUTO, "beg"), model))
                .isInstanceOfSatisfying(
                        AgentException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED));
    }

    @Test
    void aRequiredLookupComesFirstAndToolsStopAfterTwoRounds() throws Exception {
        RecordingModel model = RecordingModel.playing("[{\"toolCalls\":[{\"name\":\"scout\",\"arguments\":{}}]},"
                + "{\"toolCalls\":[{\"name\":\"scout\",\"arguments\":{}}]},"
                + "{\"json\":{\"reasoning\":\"The road is clear.\",\"choice\":\"flee\",\"confidence\":90}}]");
        Tools tools = Tools.answering("clear road");
        DecisionRequest request = request("Wolves.", OPTIONS, List.of(Tools.tool("scout")), ToolChoice.REQUIRED, null);
        Decision decision = Decisions.decide(request, model, tools, CancellationToken.create());
        assertThat(decision.optionID()).isEqualTo("flee");
        assertThat(decision.toolCalls()).hasSize(2);
        assertThat(tools.calls()).hasSize(2);
        assertThat(model.requests())
                .extracting(ModelRequest::mode)
                .containsExactly(ToolCallingMode.REQUIRED, ToolCallingMode.ALLOWED, ToolCallingMode.DISALLOWED);
    }

    @Test
    void theDefaultToolChoiceIsAutoWhenThereAreTools() throws Exception {
        RecordingModel model =
                RecordingModel.playing("[{\"json\":{\"reasoning\":\"r\",\"choice\":\"beg\",\"confidence\":5}}]");
        DecisionRequest request = request("Wolves.", OPTIONS, List.of(Tools.tool("scout")), ToolChoice.AUTO, null);
        decide(request, model);
        assertThat(model.requests().get(0).mode()).isEqualTo(ToolCallingMode.ALLOWED);
    }

    @Test
    void aCancelledDecisionDoesNotRun() {
        RecordingModel model = RecordingModel.playing("[]");
        CancellationToken token = CancellationToken.create();
        token.cancel();
        assertThatThrownBy(() -> Decisions.decide(DecisionRequest.of("x", OPTIONS), model, ToolChannel.NONE, token))
                .isInstanceOfSatisfying(
                        AgentException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CANCELLED));
        assertThat(model.requests()).isEmpty();
    }

    @Test
    void requestsCheckTheirIds() {
        assertThatThrownBy(() -> DecisionRequest.of("x", List.of(DecisionOption.of("a"), DecisionOption.of(" a "))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("'a' is used twice");
        assertThatThrownBy(() -> DecisionRequest.of("x", List.of())).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DecisionOption.of("  ")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> request("x", OPTIONS, List.of(), ToolChoice.AUTO, "hide"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("hide");
        assertThatThrownBy(() -> request("x", OPTIONS, List.of(), new ToolChoice.Named("scout"), null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("scout");
        assertThat(request("x", OPTIONS, List.of(), ToolChoice.AUTO, " flee ").fallbackOptionID())
                .isEqualTo("flee");
    }
}
