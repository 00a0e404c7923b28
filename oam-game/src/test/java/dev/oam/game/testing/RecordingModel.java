package dev.oam.game.testing;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ScriptedModel;
import java.util.ArrayList;
import java.util.List;

/** A scripted model that records every request it saw. */
public final class RecordingModel implements LanguageModel {
    private final ScriptedModel script;
    private final List<ModelRequest> requests = new ArrayList<>(); // guarded by this

    private RecordingModel(ScriptedModel script) {
        this.script = script;
    }

    /** A model playing these steps (step objects of docs/PROTOCOL.md, "Scripted model", as a JSON array). */
    public static RecordingModel playing(String stepsJson) {
        try {
            JsonNode spec = Json.parse("{\"type\":\"scripted\",\"steps\":" + stepsJson + "}");
            return new RecordingModel(ScriptedModel.fromJson(spec, "model"));
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    @Override
    public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
            throws AgentException {
        synchronized (this) {
            requests.add(request);
        }
        return script.respond(request, listener, token);
    }

    @Override
    public ModelAvailability availability() {
        return script.availability();
    }

    @Override
    public boolean retriesInvalidOutput() {
        return false;
    }

    public synchronized List<ModelRequest> requests() {
        return List.copyOf(requests);
    }

    public int remainingSteps() {
        return script.remainingSteps();
    }
}
