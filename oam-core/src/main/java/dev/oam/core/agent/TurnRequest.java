package dev.oam.core.agent;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.model.Sampling;
import dev.oam.core.schema.GenerationSchema;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One turn's input. The overrides replace the session options for this turn only; {@code null} keeps the session's
 * value. Build one with {@link #of} and the {@code with…} methods, naming what differs:
 * {@code TurnRequest.of(prompt).withSchema(schema).withToolChoice(ToolChoice.NONE)}.
 *
 * @param schema the schema the model is held to (what constrained backends generate from)
 * @param acceptSchema a looser schema an answer only has to fit to be accepted, for callers that read the answer
 *     leniently themselves (an NPC reply); {@code null}: the answer must fit {@code schema}
 * @param sampling this turn's sampling (a {@link Sampling.Chain} is laid over the session's chain member by member);
 *     {@code null}: the session's
 * @param generationSchema {@code schema} as {@link GenerationSchema#convert converted} already by a caller that checked
 *     it before the turn ran ({@link #withSchema(JsonNode, GenerationSchema)}), so the turn does not convert it again;
 *     {@code null}: the turn converts {@code schema}
 */
public record TurnRequest(
        String prompt,
        @Nullable JsonNode schema,
        @Nullable ToolChoice toolChoice,
        @Nullable Integer maxToolRounds,
        @Nullable Integer maxToolCalls,
        @Nullable List<String> enabledTools,
        @Nullable JsonNode acceptSchema,
        @Nullable Sampling sampling,
        @Nullable GenerationSchema generationSchema) {

    public TurnRequest {
        enabledTools = enabledTools == null ? null : List.copyOf(enabledTools);
        if (acceptSchema != null && schema == null) {
            throw new IllegalArgumentException("acceptSchema needs a schema");
        }
        if (generationSchema != null && schema == null) {
            throw new IllegalArgumentException("generationSchema needs the schema it was converted from");
        }
    }

    /** A turn with the session's options. */
    public static TurnRequest of(String prompt) {
        return new TurnRequest(prompt, null, null, null, null, null, null, null, null);
    }

    /** This turn held to {@code value}, which the turn converts when it starts (a bad one fails the turn). */
    public TurnRequest withSchema(@Nullable JsonNode value) {
        return new TurnRequest(
                prompt, value, toolChoice, maxToolRounds, maxToolCalls, enabledTools, acceptSchema, sampling, null);
    }

    /** This turn held to {@code value}, which the caller has converted to {@code converted} already. */
    public TurnRequest withSchema(JsonNode value, GenerationSchema converted) {
        return new TurnRequest(
                prompt,
                value,
                toolChoice,
                maxToolRounds,
                maxToolCalls,
                enabledTools,
                acceptSchema,
                sampling,
                converted);
    }

    public TurnRequest withAcceptSchema(@Nullable JsonNode value) {
        return new TurnRequest(
                prompt,
                schema,
                toolChoice,
                maxToolRounds,
                maxToolCalls,
                enabledTools,
                value,
                sampling,
                generationSchema);
    }

    public TurnRequest withToolChoice(@Nullable ToolChoice value) {
        return new TurnRequest(
                prompt,
                schema,
                value,
                maxToolRounds,
                maxToolCalls,
                enabledTools,
                acceptSchema,
                sampling,
                generationSchema);
    }

    public TurnRequest withMaxToolRounds(@Nullable Integer value) {
        return new TurnRequest(
                prompt,
                schema,
                toolChoice,
                value,
                maxToolCalls,
                enabledTools,
                acceptSchema,
                sampling,
                generationSchema);
    }

    public TurnRequest withMaxToolCalls(@Nullable Integer value) {
        return new TurnRequest(
                prompt,
                schema,
                toolChoice,
                maxToolRounds,
                value,
                enabledTools,
                acceptSchema,
                sampling,
                generationSchema);
    }

    public TurnRequest withEnabledTools(@Nullable List<String> value) {
        return new TurnRequest(
                prompt,
                schema,
                toolChoice,
                maxToolRounds,
                maxToolCalls,
                value,
                acceptSchema,
                sampling,
                generationSchema);
    }

    public TurnRequest withSampling(@Nullable Sampling value) {
        return new TurnRequest(
                prompt,
                schema,
                toolChoice,
                maxToolRounds,
                maxToolCalls,
                enabledTools,
                acceptSchema,
                value,
                generationSchema);
    }

    /** The sampling of a turn under {@code session}'s: this turn's, a chain laid over the session's chain. */
    public @Nullable Sampling samplingOver(@Nullable Sampling session) {
        if (sampling == null) {
            return session;
        }
        if (sampling instanceof Sampling.Chain chain && session != null) {
            return Sampling.Chain.of(session).with(chain);
        }
        return sampling;
    }
}
