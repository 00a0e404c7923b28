package dev.oam.game.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.agent.AgentException;
import dev.oam.core.agent.CancellationToken;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;

/**
 * A view of a model for one game call that puts each structured answer in the schema's form before the agent
 * checks it against the schema, so a cosmetic mismatch the game layer reads leniently (a choice in the wrong
 * case, a confidence out of range, a key the schema does not allow) does not fail the call. Grammar-constrained
 * models never need it; it matters for servers that ignore the schema, and for scripts.
 */
public final class LenientModel implements LanguageModel {
    private final LanguageModel model;
    private final UnaryOperator<@Nullable JsonNode> normalize;

    /** @param normalize the answer in the schema's form, or {@code null} to leave it to the schema check */
    public LenientModel(LanguageModel model, UnaryOperator<@Nullable JsonNode> normalize) {
        this.model = model;
        this.normalize = normalize;
    }

    @Override
    public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token) throws AgentException {
        ModelResponse response = model.respond(request, listener, token);
        if (request.schema() == null || !(response instanceof ModelResponse.Answer answer)) {
            return response;
        }
        JsonNode normalized = normalize.apply(value(answer));
        return normalized == null ? response : new ModelResponse.Answer(Json.write(normalized), normalized, answer.usage());
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
}
