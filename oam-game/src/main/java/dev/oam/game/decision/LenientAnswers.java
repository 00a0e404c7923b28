package dev.oam.game.decision;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.AgentException;
import dev.oam.core.agent.CancellationToken;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A view of a model for one decision that reads its answers the lenient way before the agent checks them
 * against the decision schema: a choice that differs from an option id only in case, a confidence outside
 * 0–100 or with decimals, and a missing confidence or reasoning are put in the schema's form. Without it,
 * the strict schema check would reject answers that COMPAT.md says to accept. Grammar-constrained models
 * never need it; it matters for servers that ignore the schema, and for scripts.
 */
final class LenientAnswers implements LanguageModel {
    private final LanguageModel model;
    private final List<String> ids;

    LenientAnswers(LanguageModel model, List<String> ids) {
        this.model = model;
        this.ids = List.copyOf(ids);
    }

    @Override
    public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token) throws AgentException {
        ModelResponse response = model.respond(request, listener, token);
        if (request.schema() == null || !(response instanceof ModelResponse.Answer answer)) {
            return response;
        }
        ObjectNode normalized = DecisionAnswer.normalize(value(answer), ids);
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
