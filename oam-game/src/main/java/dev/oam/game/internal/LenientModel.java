package dev.oam.game.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ModelState;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.transcript.TranscriptEntry;
import java.nio.file.Path;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * A view of a model for one game call that puts each structured answer in the schema's form before the agent checks it
 * against the schema, so a cosmetic mismatch the game layer reads leniently (a choice in the wrong case, a confidence
 * out of range, a key the schema does not allow) does not fail the call. Grammar-constrained models never need it; it
 * matters for servers that ignore the schema, and for scripts.
 */
public final class LenientModel implements LanguageModel {
    private final LanguageModel model;
    private final UnaryOperator<@Nullable JsonNode> normalize;
    private final UnaryOperator<ObjectNode> floors;
    private final UnaryOperator<ModelRequest> steps;
    /** The last step as the model was asked it, for {@link #saveState}. */
    private volatile @Nullable ModelRequest lastAsked;

    /** @param normalize the answer in the schema's form, or {@code null} to leave it to the schema check */
    public LenientModel(LanguageModel model, UnaryOperator<@Nullable JsonNode> normalize) {
        this(model, normalize, UnaryOperator.identity());
    }

    /**
     * @param floors the schema the model is held to, given a copy of the converted one: where a game method adds
     *     constraints of its own that a client's schema could not ask for ({@code minLength}, which the schema
     *     converter only describes), so that a grammar-constrained model cannot answer a sentence with one word. The
     *     answer is still checked against the schema without them.
     */
    public LenientModel(
            LanguageModel model, UnaryOperator<@Nullable JsonNode> normalize, UnaryOperator<ObjectNode> floors) {
        this(model, normalize, floors, UnaryOperator.identity());
    }

    private LenientModel(
            LanguageModel model,
            UnaryOperator<@Nullable JsonNode> normalize,
            UnaryOperator<ObjectNode> floors,
            UnaryOperator<ModelRequest> steps) {
        this.model = model;
        this.normalize = normalize;
        this.floors = floors;
        this.steps = steps;
    }

    /** The model with {@code floors} and no normalising of answers. */
    public static LenientModel withFloors(LanguageModel model, UnaryOperator<ObjectNode> floors) {
        return new LenientModel(model, answer -> null, floors);
    }

    /**
     * The model with {@code floors}, and {@code steps} applied to each step before it is asked (a game method's own
     * rule on what a step may call).
     */
    public static LenientModel withRules(
            LanguageModel model, UnaryOperator<ObjectNode> floors, UnaryOperator<ModelRequest> steps) {
        return new LenientModel(model, answer -> null, floors, steps);
    }

    /** {@code schema}'s string property {@code name} (a top-level one) with a {@code minLength}, when it has it. */
    public static ObjectNode minLength(ObjectNode schema, String name, int characters) {
        if (schema.path("properties").path(name) instanceof ObjectNode property) {
            ObjectNode target = property.path("items") instanceof ObjectNode items
                            && "array".equals(property.path("type").asText())
                    ? items
                    : property;
            if ("string".equals(target.path("type").asText())) {
                target.put("minLength", characters);
            }
        }
        return schema;
    }

    @Override
    public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
            throws AgentException {
        request = steps.apply(request);
        if (request.schema() != null) {
            GenerationSchema schema = request.schema();
            request = request.withSchema(
                    new GenerationSchema(floors.apply(schema.json().deepCopy()), schema.warnings()));
        }
        lastAsked = request;
        ModelResponse response = model.respond(request, listener, token);
        if (request.schema() == null || !(response instanceof ModelResponse.Answer answer)) {
            return response;
        }
        JsonNode normalized = normalize.apply(value(answer));
        return normalized == null
                ? response
                : new ModelResponse.Answer(Json.write(normalized), normalized, answer.usage());
    }

    private static @Nullable JsonNode value(ModelResponse.Answer answer) {
        if (answer.structured() != null) {
            return answer.structured();
        }
        try {
            return Json.parse(answer.text().strip());
        } catch (Exception e) {
            return null;
        }
    }

    @Override
    public ModelAvailability availability() {
        return model.availability();
    }

    @Override
    public int contextSize() {
        return model.contextSize();
    }

    @Override
    public int countTokens(String text) {
        return model.countTokens(text);
    }

    @Override
    public int countTokens(TranscriptEntry entry) {
        return model.countTokens(entry);
    }

    @Override
    public boolean retriesInvalidOutput() {
        return model.retriesInvalidOutput();
    }

    /** The last step as the wrapped model was asked it (rules and floors applied), or {@code null} before the first. */
    public @Nullable ModelRequest lastAsked() {
        return lastAsked;
    }

    @Override
    public ModelState.Saved saveState(@Nullable ModelRequest lastStep, Path file) {
        return model.saveState(lastStep, file);
    }

    @Override
    public ModelState.Restored restoreState(JsonNode reference, Path file) {
        return model.restoreState(reference, file);
    }
}
