package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.json.Json;
import dev.oam.core.model.ModelAvailability;
import dev.oam.testing.Conversation;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.gguf.TinyGguf;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The process model host ({@code "host": "process"}): llama sessions on the generated tiny model run in a child JVM
 * (streaming, usage, cancel, a grammar-constrained structured answer and a forced tool call), and a model that makes
 * llama.cpp abort costs that model only: its request fails with {@code -32001}, the bridge keeps answering, a session
 * on another model is unharmed; a killed child is started again by the next request.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ProcessHostTest {
    private static final Path MODELS = TinyEngines.MODELS.resolve("process-host");
    private LlamaBackend backend;
    private Conversation c;

    @BeforeEach
    void connect() {
        backend = new LlamaBackend(
                LlamaSettings.read(dev.oam.core.Environment.system()).sized(2, 1, 1, 2048), List.of("en"));
        c = new Conversation(
                InMemoryClient.connect(BridgeConfiguration.builder().backends(List.of(backend))));
    }

    @AfterEach
    void disconnect() {
        assertThat(c.client().garbage()).isEmpty();
        c.close();
        backend.close();
    }

    private static Path tiny(String name) throws Exception {
        Path file = MODELS.resolve(name + ".gguf");
        TinyGguf.tiny().name(name).write(file);
        return file;
    }

    private static String model(Path file) {
        return "{\"type\":\"llama\",\"path\":" + Json.write(Json.mapper().valueToTree(file.toString()))
                + ",\"host\":\"process\"}";
    }

    private JsonNode firstText(String requestId) {
        return c.await(
                m -> "session/event".equals(m.path("method").asText())
                        && m.path("params").path("requestId").asText().equals(requestId)
                        && m.path("params").path("event").path("type").asText().equals("text"),
                "a text event of " + requestId);
    }

    @Test
    void aLlamaSessionWorksThroughTheChildHost() throws Exception {
        Path file = tiny("host-tiny");
        c.call(
                "c",
                "session/create",
                "{\"session\":\"s\",\"model\":" + model(file)
                        + ",\"options\":{\"sampling\":\"greedy\",\"maxResponseTokens\":12}}");
        assertThat(backend.hostPid(file))
                .as("a child runs the model")
                .isPositive()
                .isNotEqualTo(ProcessHandle.current().pid());

        c.request("r1", "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello there.\",\"stream\":true}");
        JsonNode result = c.result("r1");
        String streamed = LlamaWireSupport.streamedText(c.events("r1"));
        assertThat(streamed)
                .as("text deltas cross the pipe")
                .isNotEmpty()
                .isEqualTo(result.path("text").asText());
        assertThat(result.path("usage").path("inputTokens").asInt()).isPositive();
        assertThat(result.path("usage").path("outputTokens").asInt()).isBetween(1, 12);

        // greedy is reproducible through the host, and the second turn of the same prompt hits the prompt cache
        c.call(
                "c2",
                "session/create",
                "{\"session\":\"t\",\"model\":" + model(file)
                        + ",\"options\":{\"sampling\":\"greedy\",\"maxResponseTokens\":12}}");
        assertThat(c.call("r2", "session/respond", "{\"session\":\"t\",\"prompt\":\"Hello there.\"}")
                        .path("text")
                        .asText())
                .isEqualTo(result.path("text").asText());

        // a grammar-constrained structured answer
        JsonNode structured = c.call(
                "r3",
                "session/respond",
                "{\"session\":\"s\",\"prompt\":\"Which gate?\",\"schema\":{\"type\":\"object\","
                        + "\"properties\":{\"gate\":{\"type\":\"string\",\"enum\":[\"north\",\"south\"]}},\"required\":[\"gate\"]},"
                        + "\"options\":{\"maxResponseTokens\":64}}");
        assertThat(structured.path("structured").path("gate").asText()).isIn("north", "south");

        // a forced tool call
        c.call(
                "c3",
                "session/create",
                "{\"session\":\"tools\",\"model\":" + model(file) + ",\"tools\":[{\"name\":\"open_gate\","
                        + "\"description\":\"Open a gate.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"gate\":{\"type\":\"string\","
                        + "\"enum\":[\"north\",\"south\"]}},\"required\":[\"gate\"]}}],\"options\":{\"toolChoice\":\"required\","
                        + "\"maxToolRounds\":1,\"maxResponseTokens\":8}}");
        c.request("r4", "session/respond", "{\"session\":\"tools\",\"prompt\":\"Open the north gate.\"}");
        JsonNode call = c.toolCall();
        assertThat(call.path("params")
                        .path("call")
                        .path("arguments")
                        .path("gate")
                        .asText())
                .isIn("north", "south");
        c.reply(call, "{\"output\":{\"opened\":true}}");
        assertThat(c.result("r4").path("toolCalls")).hasSize(1);

        // cancel mid-generation
        c.call(
                "c4",
                "session/create",
                "{\"session\":\"long\",\"model\":" + model(file)
                        + ",\"options\":{\"sampling\":\"greedy\",\"maxResponseTokens\":1500}}");
        c.request(
                "r5",
                "session/respond",
                "{\"session\":\"long\",\"prompt\":\"Tell me about the forgotten dragon.\",\"stream\":true}");
        firstText("r5");
        assertThat(c.call("x", "session/cancel", "{\"session\":\"long\"}")
                        .path("cancelled")
                        .asInt())
                .isEqualTo(1);
        assertThat(c.error("r5").path("code").asInt()).isEqualTo(-32009);

        ModelAvailability availability =
                backend.create((ObjectNode) Json.parse(model(file)), "model").availability();
        assertThat(availability.available()).as(availability.toString()).isTrue();
        assertThat(availability.variant()).isEqualTo("host-tiny");
        assertThat(availability.contextSize()).isEqualTo(2048);
    }

    @Test
    void anAbortingModelCostsThatModelOnly() throws Exception {
        Path aborting = MODELS.resolve("host-aborting.gguf");
        TinyGguf.writeAbortingModel(aborting);
        Path sound = tiny("host-sound");
        c.call(
                "c1",
                "session/create",
                "{\"session\":\"doomed\",\"model\":" + model(aborting) + ",\"options\":{\"maxResponseTokens\":4}}");
        c.call(
                "c2",
                "session/create",
                "{\"session\":\"fine\",\"model\":" + model(sound) + ",\"options\":{\"maxResponseTokens\":4}}");

        JsonNode error = c.request("r1", "session/respond", "{\"session\":\"doomed\",\"prompt\":\"Hello.\"}")
                .error("r1");
        assertThat(error.path("code").asInt()).isEqualTo(-32001);
        assertThat(error.path("data").path("reason").asText()).isEqualTo("model_host_exited");
        assertThat(error.path("data").path("exitCode").asInt()).isEqualTo(134);
        assertThat(Path.of(error.path("data").path("crashReport").asText()))
                .as("the child's crash report")
                .exists();
        assertThat(error.path("message").asText())
                .contains("exit code 134 (native code aborted)")
                .contains("GGML_ASSERT(id_to_token.size() == token_to_id.size()) failed")
                .contains("stays unavailable");

        assertThat(c.call("p", "ping", null).isObject())
                .as("the bridge is alive")
                .isTrue();
        assertThat(c.call("r2", "session/respond", "{\"session\":\"fine\",\"prompt\":\"Hello.\"}")
                        .path("text")
                        .isTextual())
                .as("another model is unharmed")
                .isTrue();
        JsonNode again = c.request("r3", "session/respond", "{\"session\":\"doomed\",\"prompt\":\"Hello.\"}")
                .error("r3");
        assertThat(again.path("code").asInt())
                .as("a model that crashed loading is not started again")
                .isEqualTo(-32001);
        assertThat(again.path("message").asText()).contains("exit code 134");
    }

    @Test
    void aChildKilledMidGenerationFailsItsRequestAndTheNextOneStartsANewChild() throws Exception {
        Path file = tiny("host-killed");
        c.call(
                "c",
                "session/create",
                "{\"session\":\"s\",\"model\":" + model(file)
                        + ",\"options\":{\"sampling\":\"greedy\",\"maxResponseTokens\":1500}}");
        assertThat(c.call(
                                "r0",
                                "session/respond",
                                "{\"session\":\"s\",\"prompt\":\"Hi.\",\"options\":{\"maxResponseTokens\":2}}")
                        .path("text")
                        .isTextual())
                .isTrue();
        long first = backend.hostPid(file);
        c.request(
                "r1",
                "session/respond",
                "{\"session\":\"s\",\"prompt\":\"Tell me about the forgotten dragon.\",\"stream\":true}");
        firstText("r1");
        assertThat(ProcessHandle.of(first).orElseThrow().destroyForcibly()).isTrue();
        JsonNode error = c.error("r1");
        assertThat(error.path("code").asInt()).isEqualTo(-32001);
        assertThat(error.path("data").path("exitCode").asInt()).isEqualTo(137);
        assertThat(error.path("message").asText()).contains("The next request starts a new model host");

        JsonNode next = c.call(
                "r2",
                "session/respond",
                "{\"session\":\"s\",\"prompt\":\"Hi.\",\"options\":{\"maxResponseTokens\":2}}");
        assertThat(next.path("text").isTextual()).isTrue();
        assertThat(backend.hostPid(file)).as("a new child").isPositive().isNotEqualTo(first);
    }
}
