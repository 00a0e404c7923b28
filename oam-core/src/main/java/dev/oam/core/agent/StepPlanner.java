package dev.oam.core.agent;

import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.tool.ToolDefinition;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The steering rules of a turn (docs/ARCHITECTURE.md, "Steering each step"): the turn's policy from the request and the
 * agent's options, and for each step which tools are offered and whether the model may, must or must not call one. Pure
 * functions of their arguments, so the turn loop asks again at every step.
 */
final class StepPlanner {
    private StepPlanner() {}

    /**
     * What one step offers: the calling mode, the enabled tools (empty when tools are disallowed), whether the hidden
     * {@code respond_directly} tool is offered too, and the turn's tools whatever the step may call
     * ({@link dev.oam.core.model.ModelRequest#listedTools}).
     */
    record StepOffer(
            ToolCallingMode mode,
            List<ToolDefinition> tools,
            boolean offerRespondDirectly,
            List<ToolDefinition> listed) {
        StepOffer {
            tools = List.copyOf(tools);
            listed = List.copyOf(listed);
        }

        StepOffer(ToolCallingMode mode, List<ToolDefinition> tools, boolean offerRespondDirectly) {
            this(mode, tools, offerRespondDirectly, tools);
        }
    }

    /** The turn's policy; a {@code {"tool": name}} naming a tool the agent lacks is rejected here. */
    static TurnPolicy policy(TurnRequest request, AgentOptions opts, List<ToolDefinition> toolSet)
            throws AgentException {
        TurnPolicy base = TurnPolicy.of(opts);
        TurnPolicy policy = new TurnPolicy(
                request.toolChoice() != null ? request.toolChoice() : base.toolChoice(),
                request.maxToolRounds() != null ? request.maxToolRounds() : base.maxToolRounds(),
                request.maxToolCalls() != null ? request.maxToolCalls() : base.maxToolCalls(),
                request.enabledTools() != null ? request.enabledTools() : base.enabledTools());
        if (policy.toolChoice() instanceof ToolChoice.Named named
                && toolSet.stream().noneMatch(tool -> tool.name().equals(named.tool()))) {
            throw new AgentException(
                    ErrorCode.INVALID_PARAMS,
                    "Parameter 'toolChoice' names the tool '" + named.tool() + "', which the session does not have.");
        }
        return policy;
    }

    /**
     * The offer of step {@code index}. {@code roundsThisCall}: the tool rounds run since this call began (a forced
     * choice applies while it is 0, so a resumed turn is forced again); {@code rounds} and {@code calls}: the turn's
     * totals, held against the policy's budgets; {@code respondedDirectly}: the model called {@code respond_directly},
     * so tools are off for the rest of the turn.
     */
    static StepOffer offer(
            TurnPolicy policy,
            List<ToolDefinition> toolSet,
            int index,
            int roundsThisCall,
            int rounds,
            int calls,
            boolean respondedDirectly) {
        List<ToolDefinition> enabled = toolSet;
        if (policy.enabledTools() != null) {
            Set<String> allowed = new LinkedHashSet<>(policy.enabledTools());
            enabled = toolSet.stream()
                    .filter(tool -> allowed.contains(tool.name()))
                    .toList();
        }
        List<ToolDefinition> listed = enabled;
        ToolChoice choice = policy.toolChoice();
        ToolCallingMode mode;
        if (choice instanceof ToolChoice.None
                || respondedDirectly
                || rounds >= policy.maxToolRounds()
                || calls >= policy.maxToolCalls()) {
            mode = ToolCallingMode.DISALLOWED;
        } else if ((choice instanceof ToolChoice.Required || choice instanceof ToolChoice.Explicit)
                && roundsThisCall == 0) {
            mode = ToolCallingMode.REQUIRED;
        } else if (choice instanceof ToolChoice.Named named && roundsThisCall == 0) {
            mode = ToolCallingMode.REQUIRED;
            enabled = enabled.stream()
                    .filter(tool -> tool.name().equals(named.tool()))
                    .toList();
        } else {
            mode = ToolCallingMode.ALLOWED;
        }
        if (enabled.isEmpty()) {
            mode = ToolCallingMode.DISALLOWED;
        }
        if (mode == ToolCallingMode.DISALLOWED) {
            return new StepOffer(mode, List.of(), false, listed);
        }
        boolean respondDirectly = choice instanceof ToolChoice.Explicit && index == 0;
        return new StepOffer(mode, enabled, respondDirectly, listed);
    }
}
