package dev.oam.game.decision;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.game.npc.Persona;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * One decision (docs/PROTOCOL.md, "Decisions and content").
 *
 * @param situation what is happening, from the actor's point of view
 * @param options at least one option; ids unique
 * @param actor who decides (adds the persona's name, role, personality and goals to the instructions)
 * @param context facts for the prompt ({@code Facts: …}); {@code null} for none
 * @param tools client tools the model may call first
 * @param toolChoice the first step's tool choice; {@link ToolChoice#NONE} is used whenever there are no tools
 * @param fallbackOptionID the answer when guardrails block the decision or the model refuses; one of the ids
 * @param instructions replaces {@link Decisions#DEFAULT_INSTRUCTIONS}
 * @param maxToolRounds model steps that may call tools
 * @param toolTimeout time the engine has to answer a tool call; {@link Duration#ZERO} waits forever
 */
public record DecisionRequest(
        String situation,
        List<DecisionOption> options,
        @Nullable Persona actor,
        @Nullable JsonNode context,
        List<ToolDefinition> tools,
        ToolChoice toolChoice,
        @Nullable String fallbackOptionID,
        @Nullable String instructions,
        @Nullable Double temperature,
        int maxToolRounds,
        Duration toolTimeout) {

    public DecisionRequest {
        Objects.requireNonNull(situation, "situation");
        options = List.copyOf(options);
        tools = List.copyOf(tools);
        Objects.requireNonNull(toolChoice, "toolChoice");
        Objects.requireNonNull(toolTimeout, "toolTimeout");
        context = context == null ? null : context.deepCopy();
        if (options.isEmpty()) {
            throw new IllegalArgumentException("options must not be empty");
        }
        Set<String> ids = new HashSet<>();
        for (DecisionOption option : options) {
            if (!ids.add(option.id())) {
                throw new IllegalArgumentException("options: the id '" + option.id() + "' is used twice");
            }
        }
        if (fallbackOptionID != null) {
            fallbackOptionID = fallbackOptionID.strip();
            if (!ids.contains(fallbackOptionID)) {
                throw new IllegalArgumentException(
                        "fallbackOptionID '" + fallbackOptionID + "' is not one of the option ids");
            }
        }
        if (toolChoice instanceof ToolChoice.Named named
                && tools.stream().noneMatch(t -> t.name().equals(named.tool()))) {
            throw new IllegalArgumentException(
                    "toolChoice names '" + named.tool() + "', which is not one of the tools");
        }
        if (maxToolRounds < 0) {
            throw new IllegalArgumentException("maxToolRounds must not be negative");
        }
        if (temperature != null && !(temperature >= 0 && Double.isFinite(temperature))) {
            throw new IllegalArgumentException("temperature must be a finite number ≥ 0");
        }
    }

    /** A decision with the defaults: no actor, facts or tools, tool choice auto, 2 tool rounds, 120 s tool timeout. */
    public static DecisionRequest of(String situation, List<DecisionOption> options) {
        return new DecisionRequest(
                situation,
                options,
                null,
                null,
                List.of(),
                ToolChoice.AUTO,
                null,
                null,
                null,
                Decisions.DEFAULT_MAX_TOOL_ROUNDS,
                AgentOptions.DEFAULT_TOOL_TIMEOUT);
    }

    /** The option ids in order. */
    public List<String> ids() {
        return options.stream().map(DecisionOption::id).toList();
    }
}
