package dev.oam.game.decision;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.agent.Agent;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.agent.TurnContext;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.agent.TurnRequest;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.tool.ToolChannel;
import dev.oam.game.internal.LenientModel;
import dev.oam.game.internal.PromptText;
import dev.oam.game.npc.Persona;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Enum-constrained decisions (docs/PROTOCOL.md, "Decisions and content"): the model writes a one-sentence reason, then
 * the id of one option, then a confidence. Each decision is a fresh one-off agent with no history.
 */
public final class Decisions {
    public static final int DEFAULT_MAX_TOOL_ROUNDS = 2;
    /**
     * The fewest characters of a reason the model is held to (about five words). Without it SmolLM2-135M gave the
     * chosen option's id as the reason in 4 of 6 decisions ("go_to_sleep"); with it, the id and then words, 0 of 6
     * reasons under three words, and two more decisions right (the reason comes before the choice).
     */
    static final int REASON_FLOOR = 24;

    public static final String DEFAULT_INSTRUCTIONS = "You make decisions for characters in a video game. Read the "
            + "situation and choose the one option that suits the character and the moment best. First give your "
            + "reason in one short sentence, then the id of the option you choose, then how sure you are, "
            + "from 0 to 100.";

    private Decisions() {}

    /**
     * Decides. A single option is returned at once with confidence 100 and no model call. A guardrail block or refusal
     * returns the fallback option when the request has one; every other failure is thrown.
     *
     * @param model used once per step; a scripted model's steps are consumed in order across calls
     * @param tools how client tool calls reach the engine
     */
    public static Decision decide(
            DecisionRequest request, LanguageModel model, ToolChannel tools, CancellationToken token)
            throws AgentException {
        List<String> ids = request.ids();
        if (ids.size() == 1) {
            return Decision.only(ids.get(0));
        }
        token.check();
        // The lenient reading (choice case, confidence range, missing fields) happens before the schema check: a game
        // can act on such an answer, so it must not fail the decision (docs/GAMES.md, "What a model may get wrong").
        Agent agent = new Agent(
                new LenientModel(
                        model,
                        answer -> DecisionAnswer.normalize(answer, ids),
                        schema -> LenientModel.minLength(schema, "reasoning", REASON_FLOOR)),
                instructions(request.instructions(), request.actor()),
                request.tools(),
                options(request),
                List.of());
        TurnRequest turn = TurnRequest.of(
                        prompt(request.situation(), PromptText.facts(request.context()), request.options()))
                .withSchema(schema(request.options()));
        try {
            TurnResult result =
                    agent.respond(turn, new TurnContext(token, TurnListener.NONE, tools, TurnContext.CommitPoint.NONE));
            DecisionAnswer answer = DecisionAnswer.read(result.structured(), ids);
            return new Decision(
                    answer.optionID(),
                    answer.reasoning(),
                    answer.confidence(),
                    result.toolCalls(),
                    result.usage(),
                    false);
        } catch (AgentException e) {
            boolean blocked = e.code() == ErrorCode.GUARDRAIL_VIOLATION || e.code() == ErrorCode.REFUSAL;
            if (blocked && request.fallbackOptionID() != null) {
                return Decision.fallback(request.fallbackOptionID(), e.usage());
            }
            throw e;
        }
    }

    static AgentOptions options(DecisionRequest request) {
        return AgentOptions.defaults(request.toolTimeout()).toBuilder()
                .toolChoice(request.tools().isEmpty() ? ToolChoice.NONE : request.toolChoice())
                .maxToolRounds(request.maxToolRounds())
                .temperature(request.temperature())
                .build();
    }

    /**
     * The system instructions: {@code custom} (else {@link #DEFAULT_INSTRUCTIONS}), then for an actor "You decide for
     * {name}, {role}.", its personality and its goals, one per line.
     */
    public static String instructions(@Nullable String custom, @Nullable Persona actor) {
        List<String> lines = new ArrayList<>();
        lines.add(custom != null ? custom : DEFAULT_INSTRUCTIONS);
        if (actor != null) {
            String role = actor.role().strip();
            if (role.endsWith(".")) {
                role = role.substring(0, role.length() - 1).strip();
            }
            lines.add("You decide for " + actor.name().strip() + (role.isEmpty() ? "" : ", " + role) + ".");
            if (!actor.personality().isBlank()) {
                lines.add("Personality: " + PromptText.sentence(actor.personality()));
            }
            String goals = PromptText.list(actor.goals());
            if (!goals.isEmpty()) {
                lines.add("Goals: " + goals);
            }
        }
        return String.join("\n", lines);
    }

    /**
     * The prompt: "Situation: …", then "Facts: …" when there are facts, then "Options:" with one "- id: description"
     * line each.
     */
    public static String prompt(String situation, @Nullable String facts, List<DecisionOption> options) {
        List<String> lines = new ArrayList<>();
        lines.add("Situation: " + situation.strip());
        if (facts != null) {
            lines.add("Facts: " + facts);
        }
        lines.add("Options:");
        for (DecisionOption option : options) {
            lines.add("- " + option.id() + (option.description().isEmpty() ? "" : ": " + option.description()));
        }
        return String.join("\n", lines);
    }

    /**
     * The answer's JSON Schema: {@code reasoning} first (a small chain of thought), then {@code choice}, an enum of the
     * option ids, then {@code confidence}, an integer 0–100. All required, nothing else allowed.
     */
    public static ObjectNode schema(List<DecisionOption> options) {
        ObjectNode schema = Json.object();
        schema.put("type", "object");
        ObjectNode properties = schema.putObject("properties");
        ObjectNode reasoning = properties.putObject("reasoning");
        reasoning.put("type", "string");
        reasoning.put("description", "One short sentence: why this option fits best.");
        ObjectNode choice = properties.putObject("choice");
        choice.put("type", "string");
        ArrayNode ids = choice.putArray("enum");
        options.forEach(o -> ids.add(o.id()));
        choice.put("description", "The id of the chosen option.");
        ObjectNode confidence = properties.putObject("confidence");
        confidence.put("type", "integer");
        confidence.put("minimum", 0);
        confidence.put("maximum", 100);
        confidence.put("description", "How sure you are of the choice, from 0 to 100.");
        schema.set("required", Json.strings(List.of("reasoning", "choice", "confidence")));
        schema.put("additionalProperties", false);
        return schema;
    }
}
