package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.tool;
import static dev.oam.core.testing.TestOptions.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.oam.core.ErrorCode;
import dev.oam.core.agent.StepPlanner.StepOffer;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.tool.ToolDefinition;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The per-step steering rules, checked on the planner alone (the turn-level behaviour is in AgentSteeringTest). */
class StepPlannerTest {
    private static final List<ToolDefinition> TOOLS = List.of(tool("look"), tool("open_gate"), tool("trade"));

    private static TurnPolicy policy(ToolChoice choice, int maxRounds, int maxCalls, List<String> enabled) {
        return new TurnPolicy(choice, maxRounds, maxCalls, enabled);
    }

    private static TurnPolicy policy(ToolChoice choice) {
        return new TurnPolicy(choice, 4, 12, null);
    }

    private static List<String> names(StepOffer offer) {
        return offer.tools().stream().map(ToolDefinition::name).toList();
    }

    @Test
    void autoAllowsEveryToolOnEveryStep() {
        for (int index = 0; index < 3; index++) {
            StepOffer offer = StepPlanner.offer(policy(ToolChoice.AUTO), TOOLS, index, index, index, index, false);
            assertThat(offer.mode()).isEqualTo(ToolCallingMode.ALLOWED);
            assertThat(names(offer)).containsExactly("look", "open_gate", "trade");
            assertThat(offer.offerRespondDirectly()).isFalse();
        }
    }

    @Test
    void requiredForcesOnlyUntilTheFirstRoundOfThisCall() {
        assertThat(StepPlanner.offer(policy(ToolChoice.REQUIRED), TOOLS, 0, 0, 0, 0, false)
                        .mode())
                .isEqualTo(ToolCallingMode.REQUIRED);
        assertThat(StepPlanner.offer(policy(ToolChoice.REQUIRED), TOOLS, 1, 1, 1, 1, false)
                        .mode())
                .isEqualTo(ToolCallingMode.ALLOWED);
        // a resumed turn (rounds spent before this call, none since) is forced again
        assertThat(StepPlanner.offer(policy(ToolChoice.REQUIRED), TOOLS, 0, 0, 2, 2, false)
                        .mode())
                .isEqualTo(ToolCallingMode.REQUIRED);
    }

    @Test
    void namedChoiceOffersOnlyThatToolWhileForcing() {
        StepOffer first = StepPlanner.offer(policy(new ToolChoice.Named("trade")), TOOLS, 0, 0, 0, 0, false);
        StepOffer later = StepPlanner.offer(policy(new ToolChoice.Named("trade")), TOOLS, 1, 1, 1, 1, false);

        assertThat(first.mode()).isEqualTo(ToolCallingMode.REQUIRED);
        assertThat(names(first)).containsExactly("trade");
        assertThat(later.mode()).isEqualTo(ToolCallingMode.ALLOWED);
        assertThat(names(later)).containsExactly("look", "open_gate", "trade");
    }

    @Test
    void explicitOffersRespondDirectlyOnTheFirstStepOnly() {
        StepOffer first = StepPlanner.offer(policy(ToolChoice.EXPLICIT), TOOLS, 0, 0, 0, 0, false);
        StepOffer second = StepPlanner.offer(policy(ToolChoice.EXPLICIT), TOOLS, 1, 1, 1, 1, false);

        assertThat(first.mode()).isEqualTo(ToolCallingMode.REQUIRED);
        assertThat(first.offerRespondDirectly()).isTrue();
        assertThat(second.mode()).isEqualTo(ToolCallingMode.ALLOWED);
        assertThat(second.offerRespondDirectly()).isFalse();
    }

    @Test
    void exhaustedBudgetsAndRespondingDirectlyDisallowTools() {
        TurnPolicy policy = policy(ToolChoice.REQUIRED, 2, 3, null);

        // The turn's tools stay listed when a step may call none, so the prompt keeps its prefix step to step.
        assertThat(StepPlanner.offer(policy, TOOLS, 2, 2, 2, 2, false)).isEqualTo(disallowed(TOOLS));
        assertThat(StepPlanner.offer(policy, TOOLS, 1, 1, 1, 3, false)).isEqualTo(disallowed(TOOLS));
        assertThat(StepPlanner.offer(policy, TOOLS, 1, 0, 0, 0, true)).isEqualTo(disallowed(TOOLS));
        assertThat(StepPlanner.offer(policy(ToolChoice.NONE), TOOLS, 0, 0, 0, 0, false))
                .isEqualTo(disallowed(TOOLS));
    }

    @Test
    void aNamedToolIsTheOnlyOneToCallButEveryToolIsListed() {
        StepOffer named = StepPlanner.offer(policy(new ToolChoice.Named("trade")), TOOLS, 0, 0, 0, 0, false);

        assertThat(names(named)).containsExactly("trade");
        assertThat(named.listed()).isEqualTo(TOOLS);
    }

    @Test
    void enabledToolsFilterInToolSetOrderAndNoneLeftDisallows() {
        StepOffer some =
                StepPlanner.offer(policy(ToolChoice.AUTO, 4, 12, List.of("trade", "look")), TOOLS, 0, 0, 0, 0, false);
        StepOffer none = StepPlanner.offer(policy(ToolChoice.REQUIRED, 4, 12, List.of()), TOOLS, 0, 0, 0, 0, false);

        assertThat(names(some)).containsExactly("look", "trade");
        assertThat(none).isEqualTo(disallowed(List.of()));
        assertThat(some.listed()).extracting(ToolDefinition::name).containsExactly("look", "trade");
    }

    @Test
    void requestOverridesReplaceTheOptionsForTheTurn() throws AgentException {
        AgentOptions opts = options()
                .toolChoice(ToolChoice.AUTO)
                .maxToolRounds(4)
                .maxToolCalls(12)
                .enabledTools("look")
                .build();

        TurnPolicy kept = StepPlanner.policy(TurnRequest.of("Hi."), opts, TOOLS);
        TurnPolicy overridden = StepPlanner.policy(
                TurnRequest.of("Hi.")
                        .withToolChoice(ToolChoice.REQUIRED)
                        .withMaxToolRounds(1)
                        .withMaxToolCalls(2)
                        .withEnabledTools(List.of("trade")),
                opts,
                TOOLS);

        assertThat(kept).isEqualTo(new TurnPolicy(ToolChoice.AUTO, 4, 12, List.of("look")));
        assertThat(overridden).isEqualTo(new TurnPolicy(ToolChoice.REQUIRED, 1, 2, List.of("trade")));
    }

    @Test
    void namedToolTheAgentLacksIsRejected() {
        AgentException error = catchThrowableOfType(
                AgentException.class,
                () -> StepPlanner.policy(
                        TurnRequest.of("Hi.").withToolChoice(new ToolChoice.Named("fly")),
                        options().build(),
                        TOOLS));

        assertThat(error.code()).isEqualTo(ErrorCode.INVALID_PARAMS);
        assertThat(error.getMessage()).contains("'toolChoice'", "'fly'");
    }

    private static StepOffer disallowed(List<ToolDefinition> listed) {
        return new StepOffer(ToolCallingMode.DISALLOWED, List.of(), false, listed);
    }
}
