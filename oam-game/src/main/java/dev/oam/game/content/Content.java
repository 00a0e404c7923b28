package dev.oam.game.content;

import dev.oam.core.ErrorCode;
import dev.oam.core.agent.Agent;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.agent.TurnContext;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.agent.TurnRequest;
import dev.oam.core.agent.TurnResult;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import dev.oam.core.tool.ToolChannel;
import dev.oam.game.internal.LenientModel;
import dev.oam.game.internal.PromptText;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Schema-shaped content: items, quests, rumors, loot (docs/PROTOCOL.md, "Decisions and content"). One fresh agent per
 * piece.
 */
public final class Content {
    public static final String DEFAULT_INSTRUCTIONS = "You write content for a video game. Follow the requested format "
            + "exactly. Keep every text short, vivid and consistent with the game's facts.";

    private Content() {}

    /**
     * Generates content matching the request's schema. Errors (guardrails, an invalid answer, cancellation) are thrown
     * as they are.
     */
    public static GeneratedContent generate(
            ContentRequest request, LanguageModel model, ToolChannel tools, CancellationToken token)
            throws AgentException {
        token.check();
        GenerationSchema schema;
        try {
            schema = GenerationSchema.convert(request.schema(), "Content");
        } catch (SchemaException e) {
            throw new AgentException(
                    ErrorCode.INVALID_SCHEMA, "Invalid schema at " + e.schemaPath() + ": " + e.getMessage());
        }
        // Keys a closed object does not define are dropped rather than failing the piece: the game gets what it asked
        // for.
        Agent agent = new Agent(
                new LenientModel(model, answer -> answer == null ? null : schema.withoutUnknownKeys(answer)),
                request.instructions() != null ? request.instructions() : DEFAULT_INSTRUCTIONS,
                request.tools(),
                options(request),
                List.of());
        TurnRequest turn = TurnRequest.of(prompt(request.prompt(), PromptText.facts(request.context())))
                .withSchema(request.schema(), schema);
        TurnResult result =
                agent.respond(turn, new TurnContext(token, TurnListener.NONE, tools, TurnContext.CommitPoint.NONE));
        if (result.structured() == null) {
            throw new AgentException(ErrorCode.GENERATION_FAILED, "The model gave no structured content.");
        }
        return new GeneratedContent(result.structured(), result.toolCalls(), result.usage());
    }

    /** Tool choice auto when there are tools, none otherwise; the other settings are the agent defaults. */
    static AgentOptions options(ContentRequest request) {
        return AgentOptions.defaults(request.toolTimeout()).toBuilder()
                .toolChoice(request.tools().isEmpty() ? ToolChoice.NONE : ToolChoice.AUTO)
                .temperature(request.temperature())
                .build();
    }

    /** The prompt: the request's text, then "Facts: …" on the next line when there are facts. */
    public static String prompt(String text, @Nullable String facts) {
        return facts == null ? text : text + "\nFacts: " + facts;
    }
}
