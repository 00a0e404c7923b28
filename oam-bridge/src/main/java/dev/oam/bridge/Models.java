package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.core.ErrorCode;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelParameterException;
import dev.oam.core.model.ModelProvider;
import dev.oam.core.model.ScriptedModel;
import dev.oam.core.model.UnavailableModel;
import org.jspecify.annotations.Nullable;

/** Turns a {@code model} parameter value into a model. */
final class Models {
    record Created(LanguageModel model, String description) {}

    private Models() {}

    static Created create(BridgeConfiguration config, @Nullable JsonNode spec, String path) throws BridgeException {
        if (spec == null
                || spec.isNull()
                || (spec.isTextual() && spec.textValue().equals("system"))) {
            return system(config);
        }
        if (spec.isTextual() && spec.textValue().equals("scripted")) {
            return scripted(config, spec, path);
        }
        if (!spec.isObject()) {
            throw BridgeException.invalidParams(
                    "Parameter '" + path + "' must be \"system\", \"scripted\" or an object with a 'type'.");
        }
        JsonNode type = spec.get("type");
        if (type == null || !type.isTextual()) {
            throw BridgeException.invalidParams("Parameter '" + path + ".type' must be a string such as \"scripted\".");
        }
        String name = type.textValue();
        if (name.equals("system")) {
            return system(config);
        }
        if (name.equals("scripted")) {
            return scripted(config, spec, path);
        }
        ModelProvider provider = config.modelProviders().get(name);
        if (provider == null) {
            throw BridgeException.invalidParams("Parameter '" + path + ".type' names the model type '" + name
                    + "', which this bridge does not have (available: system"
                    + (config.allowsScriptedModels() ? ", scripted" : "")
                    + config.modelProviders().keySet().stream()
                            .map(k -> ", " + k)
                            .reduce("", String::concat) + ").");
        }
        try {
            return new Created(provider.create((ObjectNode) spec, path), name);
        } catch (ModelParameterException e) {
            throw BridgeException.invalidParams(e.getMessage());
        }
    }

    private static Created system(BridgeConfiguration config) {
        LanguageModel system = config.systemModel();
        return new Created(
                system != null ? system : new UnavailableModel(BridgeConfiguration.NO_SYSTEM_MODEL), "system");
    }

    private static Created scripted(BridgeConfiguration config, JsonNode spec, String path) throws BridgeException {
        if (!config.allowsScriptedModels()) {
            throw new BridgeException(
                    ErrorCode.INVALID_PARAMS,
                    "Parameter '" + path + "': scripted models are disabled by the host (--no-scripted-models).");
        }
        try {
            return new Created(ScriptedModel.fromJson(spec, path), "scripted");
        } catch (IllegalArgumentException e) {
            throw BridgeException.invalidParams(e.getMessage());
        }
    }
}
