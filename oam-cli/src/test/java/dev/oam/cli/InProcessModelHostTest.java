package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.model.ModelBackends;
import dev.oam.core.model.ModelSpec;
import dev.oam.core.model.pull.ModelCache;
import dev.oam.testing.Conversation;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.ModelHostContract;
import dev.oam.testing.ProtocolClient;
import dev.oam.testing.openai.FakeOpenAIServer;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The model backends and the system model in-process: the builder discovers the same backends as {@code oam stdio} and
 * the C library, and takes the system model as a typed {@link ModelSpec} or from the same variables.
 */
class InProcessModelHostTest extends ModelHostContract {
    @Override
    protected ProtocolClient connect(Map<String, String> variables) {
        return InMemoryClient.connect(
                BridgeConfiguration.builder().systemModel(ModelSpec.fromEnvironment(variables::get)));
    }

    @Override
    protected String refusedSetup(Map<String, String> variables) {
        BridgeConfiguration.Builder builder =
                BridgeConfiguration.builder().systemModel(ModelSpec.fromEnvironment(variables::get));
        try {
            builder.build();
        } catch (ModelBackends.ModelSetupException e) {
            return e.getMessage();
        }
        throw new AssertionError("the configuration was built for " + variables);
    }

    @Test
    void aTypedLlamaSystemModel() throws Exception {
        Path model = tinyModel("typed-tiny");
        ModelSpec.Llama spec =
                new ModelSpec.Llama(model).withContextSize(2048).withThreads(1).withSeed(7);
        try (Conversation c = new Conversation(
                InMemoryClient.connect(BridgeConfiguration.builder().systemModel(spec)))) {
            c.call(1, "session/create", "{\"session\":\"s\",\"options\":{\"maxResponseTokens\":4}}");
            assertThat(c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}")
                            .path("text")
                            .isTextual())
                    .isTrue();
            JsonNode availability = c.call(3, "model/availability", null);
            assertThat(availability.path("available").asBoolean())
                    .as(availability.toString())
                    .isTrue();
            assertThat(availability.path("variant").asText()).isEqualTo("typed-tiny");
            assertThat(availability.path("contextSize").asInt()).isEqualTo(2048);
        }
    }

    @Test
    void aTypedLlamaSystemModelByNameIsReadFromTheConfiguredCache() throws Exception {
        Path cache = dir.resolve("typed-cache");
        Path placed = cache.resolve("hf/owner/repo/main/named.gguf");
        Files.createDirectories(placed.getParent());
        Files.move(tinyModel("typed-named"), placed);
        ModelSpec.Llama spec = ModelSpec.Llama.named("hf:owner/repo/named.gguf").withContextSize(2048);
        try (Conversation c = new Conversation(InMemoryClient.connect(
                BridgeConfiguration.builder().modelCache(ModelCache.at(cache)).systemModel(spec)))) {
            c.call(1, "session/create", "{\"session\":\"s\",\"options\":{\"maxResponseTokens\":4}}");
            assertThat(c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}")
                            .path("text")
                            .isTextual())
                    .isTrue();
            JsonNode availability = c.call(3, "model/availability", null);
            assertThat(availability.path("variant").asText()).isEqualTo("typed-named");
        }
        assertThatThrownBy(() -> BridgeConfiguration.builder()
                        .modelCache(ModelCache.at(dir.resolve("empty")))
                        .systemModel(spec)
                        .build())
                .isInstanceOf(ModelBackends.ModelSetupException.class)
                .hasMessageContaining("oam pull hf:owner/repo/named.gguf");
        assertThatThrownBy(() -> ModelSpec.Llama.named("hf:../x.gguf")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aTypedOpenAISystemModel() throws Exception {
        FakeOpenAIServer server = fake().requireKey("sk-typed").then(FakeOpenAIServer.text("Typed and served."));
        ModelSpec.OpenAI spec = new ModelSpec.OpenAI(URI.create(server.baseUrl()), "fake-model")
                .withApiKeyEnv("OAM_TYPED_API_KEY")
                .withContextSize(4096)
                .withToolCallMode(ModelSpec.OpenAI.ToolCallMode.NATIVE)
                .withHeaders(Map.of("X-Game", "castle"));
        // The key variable is not set in this JVM: the backend refuses it exactly as it would a client's apiKeyEnv.
        assertThatThrownBy(() -> BridgeConfiguration.builder().systemModel(spec).build())
                .isInstanceOf(ModelBackends.ModelSetupException.class)
                .hasMessageContaining("OAM_TYPED_API_KEY")
                .hasMessageContaining("not set");
        ModelSpec.OpenAI keyless = new ModelSpec.OpenAI(URI.create(server.baseUrl()), "fake-model")
                .withContextSize(4096)
                .withHeaders(Map.of("X-Game", "castle"));
        server.requireKey(null);
        try (Conversation c = new Conversation(
                InMemoryClient.connect(BridgeConfiguration.builder().systemModel(keyless)))) {
            c.call(1, "session/create", "{\"session\":\"s\"}");
            assertThat(c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}")
                            .path("text")
                            .asText())
                    .isEqualTo("Typed and served.");
            assertThat(server.chat(0).header("X-Game")).isEqualTo("castle");
            assertThat(c.call(3, "model/availability", null).path("contextSize").asInt())
                    .isEqualTo(4096);
        }
    }

    @Test
    void aTypedModelTheBackendsCannotServeNamesTheCause() {
        Path missing = dir.resolve("absent.gguf");
        assertThatThrownBy(() -> BridgeConfiguration.builder()
                        .systemModel(new ModelSpec.Llama(missing))
                        .build())
                .isInstanceOf(ModelBackends.ModelSetupException.class)
                .hasMessageContaining(missing.toString())
                .hasMessageContaining("does not exist");
        assertThatThrownBy(() -> BridgeConfiguration.builder()
                        .backends(java.util.List.of())
                        .systemModel(new ModelSpec.Llama(missing))
                        .build())
                .isInstanceOf(ModelBackends.ModelSetupException.class)
                .hasMessageContaining("no model backend of type 'llama'");
    }
}
