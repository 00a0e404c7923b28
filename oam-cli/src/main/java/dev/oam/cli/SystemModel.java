package dev.oam.cli;

import dev.oam.bridge.ModelBackend;
import dev.oam.core.model.LanguageModel;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Resolves the host's system model from {@code --model}/{@code --model-name} or {@code OAM_MODEL}/{@code OAM_MODEL_NAME}. */
final class SystemModel {
    /** The configured model cannot be served; the message is for the person who started the bridge. */
    static final class ConfigurationException extends Exception {
        ConfigurationException(String message) {
            super(message);
        }
    }

    private SystemModel() {}

    /** The system model, or {@code null} when none is configured. */
    static @Nullable LanguageModel resolve(List<ModelBackend> backends, @Nullable String flag, @Nullable String nameFlag)
            throws ConfigurationException {
        String location = flag != null ? flag : System.getenv("OAM_MODEL");
        String name = nameFlag != null ? nameFlag : System.getenv("OAM_MODEL_NAME");
        if (location == null || location.isBlank()) {
            return null;
        }
        for (ModelBackend backend : backends) {
            if (backend.servesSystemModel(location)) {
                try {
                    return backend.systemModel(location, name == null || name.isBlank() ? null : name);
                } catch (Exception e) {
                    throw new ConfigurationException("cannot use the model '" + location + "': " + e.getMessage());
                }
            }
        }
        throw new ConfigurationException("no model backend in this build serves '" + location + "' (backends: "
                + (backends.isEmpty() ? "none" : String.join(", ", backends.stream().map(ModelBackend::type).toList()))
                + "). Give a .gguf file for llama.cpp or an http(s)://…/v1 URL for an OpenAI-compatible server.");
    }
}
