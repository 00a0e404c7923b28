package dev.oam.model.openai;

import static dev.oam.testing.openai.FakeOpenAIServer.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.ModelBackend;
import java.math.BigDecimal;
import java.net.ServerSocket;
import java.net.http.HttpHeaders;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Configuration, discovery, the system model and availability. */
@Timeout(60)
class BackendTest extends WireSupport {
    @Test
    void theBackendIsFoundOnTheClassPath() {
        List<ModelBackend> backends = ModelBackend.discover();
        assertThat(backends).anySatisfy(b -> {
            assertThat(b).isInstanceOf(OpenAIBackend.class);
            assertThat(b.type()).isEqualTo("openai");
        });
        OpenAIBackend backend = new OpenAIBackend();
        assertThat(backend.servesSystemModel("http://127.0.0.1:11434/v1")).isTrue();
        assertThat(backend.servesSystemModel("HTTPS://example.test/v1")).isTrue();
        assertThat(backend.servesSystemModel("/models/qwen.gguf")).isFalse();
        backend.close();
    }

    @Test
    void modelSpecIsValidatedNamingTheMember() throws Exception {
        open(Map.of("OAM_API_KEY", "k"));
        String base = "\"baseUrl\":\"" + fake.baseUrl() + "\"";
        Map<String, String> cases = new java.util.LinkedHashMap<>();
        cases.put("{\"type\":\"openai\",\"model\":\"m\"}", "Missing required parameter 'model.baseUrl'.");
        cases.put("{\"type\":\"openai\"," + base + "}", "Missing required parameter 'model.model'.");
        cases.put("{\"type\":\"openai\",\"baseUrl\":\"ftp://host/v1\",\"model\":\"m\"}", "'model.baseUrl'");
        cases.put(
                "{\"type\":\"openai\",\"baseUrl\":\"http://user:pw@host/v1\",\"model\":\"m\"}",
                "must not contain credentials");
        cases.put("{\"type\":\"openai\"," + base + ",\"model\":7}", "'model.model' must be a string");
        cases.put(
                "{\"type\":\"openai\"," + base + ",\"model\":\"m\",\"toolCallMode\":\"magic\"}",
                "'model.toolCallMode'");
        cases.put(
                "{\"type\":\"openai\"," + base + ",\"model\":\"m\",\"headers\":{\"Authorization\":\"Bearer x\"}}",
                "'model.headers.Authorization' cannot be set by a client: API keys come from the host's environment");
        cases.put("{\"type\":\"openai\"," + base + ",\"model\":\"m\",\"headers\":{\"X-A\":1}}", "'model.headers.X-A'");
        cases.put("{\"type\":\"openai\"," + base + ",\"model\":\"m\",\"apiKeyEnv\":\"PATH\"}", "'model.apiKeyEnv'");
        cases.put(
                "{\"type\":\"openai\"," + base + ",\"model\":\"m\",\"apiKeyEnv\":\"OAM_UNSET_KEY\"}",
                "OAM_UNSET_KEY, which is not set");
        cases.put("{\"type\":\"openai\"," + base + ",\"model\":\"m\",\"contextSize\":10}", "'model.contextSize'");
        cases.put("{\"type\":\"openai\"," + base + ",\"model\":\"m\",\"timeoutSeconds\":-1}", "'model.timeoutSeconds'");
        cases.put(
                "{\"type\":\"openai\"," + base + ",\"model\":\"m\",\"temprature\":1}",
                "'model.temprature' is not a member");
        int id = 0;
        for (Map.Entry<String, String> entry : cases.entrySet()) {
            c.request(++id, "session/create", "{\"model\":" + entry.getKey() + "}");
            JsonNode error = c.error(id);
            assertThat(error.path("code").asInt()).as(entry.getKey()).isEqualTo(-32602);
            assertThat(error.path("message").asText()).as(entry.getKey()).contains(entry.getValue());
        }
        c.call(
                "ok",
                "session/create",
                "{\"model\":{\"type\":\"openai\"," + base + ",\"model\":\"m\",\"apiKeyEnv\":\"OAM_API_KEY\","
                        + "\"toolCallMode\":\"emulated\",\"contextSize\":32768,\"timeoutSeconds\":0,\"headers\":{\"X-Title\":\"Game\"}}}");
        assertThat(fake.chats()).isEmpty();
    }

    @Test
    void contextSizeDrivesHistoryTrimming() throws Exception {
        open();
        createSession("s", "[]", "{\"reservedResponseTokens\":0}", "\"contextSize\":256");
        fake.then(text("a"), text("b"), text("c"));
        String filler = "word ".repeat(150);
        c.call(1, "session/respond", "{\"session\":\"s\",\"prompt\":\"" + filler + "\"}");
        c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"" + filler + "\"}");
        JsonNode third = c.call(3, "session/respond", "{\"session\":\"s\",\"prompt\":\"short\"}");
        assertThat(third.path("steps").get(0).path("trimmedEntries").asInt()).isPositive();
        assertThat(roles(fake.chat(1).messages())).containsExactly("system", "user");
        assertThat(roles(fake.chat(2).messages())).containsExactly("system", "user", "assistant", "user");
    }

    @Test
    void systemModelReportsTheServersModelId() throws Exception {
        fake = startFake();
        fake.models("ollama", "llama3.2:latest", "qwen2.5:3b");
        {
            connect(Map.of(), backend -> probedSystemModel(backend, fake.baseUrl(), "llama3.2"));
            JsonNode availability = c.call(1, "model/availability", "{}");
            assertThat(availability.path("available").asBoolean()).isTrue();
            assertThat(availability.path("variant").asText()).isEqualTo("llama3.2:latest");
            assertThat(availability.path("contextSize").asInt()).isEqualTo(8192);
            assertThat(availability.path("supportedLanguages"))
                    .extracting(JsonNode::asText)
                    .containsExactly("en");
            assertThat(c.call(2, "initialize", "{}")
                            .path("model")
                            .path("variant")
                            .asText())
                    .isEqualTo("llama3.2:latest");
        }
    }

    @Test
    void systemModelWithoutANameUsesTheServersOnlyModel() throws Exception {
        fake = startFake();
        fake.models("llamacpp", "/models/qwen2.5-3b-instruct-q4_k_m.gguf").then(text("Hi."));
        {
            connect(Map.of(), backend -> probedSystemModel(backend, fake.baseUrl() + "/", null));
            c.call(1, "session/create", "{\"session\":\"s\"}");
            JsonNode result = c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}");
            assertThat(result.path("text").asText()).isEqualTo("Hi.");
            assertThat(fake.chat(0).body().path("model").asText()).isEqualTo("/models/qwen2.5-3b-instruct-q4_k_m.gguf");
            assertThat(c.call(3, "model/availability", "{}").path("variant").asText())
                    .isEqualTo("/models/qwen2.5-3b-instruct-q4_k_m.gguf");
        }
    }

    @Test
    void systemModelMissingOnTheServerIsUnavailable() throws Exception {
        fake = startFake();
        fake.models("vllm", "Qwen/Qwen2.5-7B-Instruct");
        {
            connect(Map.of(), backend -> probedSystemModel(backend, fake.baseUrl(), "mistral"));
            JsonNode availability = c.call(1, "model/availability", "{}");
            assertThat(availability.path("available").asBoolean()).isFalse();
            assertThat(availability.path("reason").asText()).isEqualTo("model_not_ready");
            assertThat(availability.path("message").asText()).contains("'mistral'", "Qwen/Qwen2.5-7B-Instruct");
            JsonNode created = c.call(2, "session/create", "{\"session\":\"s\"}");
            assertThat(created.path("warnings").toString()).contains("unavailable");
        }
    }

    @Test
    void unreachableSystemModelIsUnavailableAndItsTurnsFail() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        int closed = port;
        connect(Map.of(), backend -> probedSystemModel(backend, "http://127.0.0.1:" + closed + "/v1", "m"));
        JsonNode availability = c.call(1, "model/availability", "{}");
        assertThat(availability.path("available").asBoolean()).isFalse();
        assertThat(availability.path("reason").asText()).isEqualTo("model_not_ready");
        assertThat(availability.path("message").asText()).contains("connection refused");
        c.call(2, "session/create", "{\"session\":\"s\"}");
        c.request(3, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}");
        assertThat(c.error(3).path("code").asInt()).isEqualTo(-32001);
    }

    @Test
    void aTurnFailingForAMissingModelIsReportedByAvailability() throws Exception {
        fake = startFake();
        fake.modelsStatus(404); // no model list: availability cannot tell until a turn fails
        {
            connect(Map.of(), backend -> probedSystemModel(backend, fake.baseUrl(), "gone"));
            assertThat(c.call(1, "model/availability", "{}").path("available").asBoolean())
                    .isTrue();
            c.call(2, "session/create", "{\"session\":\"s\"}");
            c.request(3, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}");
            assertThat(c.error(3).path("code").asInt()).isEqualTo(-32001);
            JsonNode availability = c.call(4, "model/availability", "{}");
            assertThat(availability.path("available").asBoolean()).isFalse();
            assertThat(availability.path("message").asText()).contains("'gone'");
        }
    }

    @Test
    void retryAfterIsReadInSecondsMillisecondsOrAsADate() {
        Instant now = Instant.parse("2025-01-01T12:00:00Z");
        assertThat(Failures.retryAfterSeconds(headers("Retry-After", "12"), now))
                .contains(BigDecimal.valueOf(12));
        assertThat(Failures.retryAfterSeconds(headers("retry-after-ms", "1500"), now))
                .contains(new BigDecimal("1.5"));
        assertThat(Failures.retryAfterSeconds(headers("Retry-After", "Wed, 01 Jan 2025 12:00:30 GMT"), now))
                .contains(BigDecimal.valueOf(30));
        assertThat(Failures.retryAfterSeconds(headers("Retry-After", "soon"), now))
                .isEmpty();
        ObjectNode data = Failures.retryAfter(headers("Retry-After", "2"));
        assertThat(data.path("retryAfterSeconds").asInt()).isEqualTo(2);
        assertThat(data.path("retryAfter").asText()).endsWith("Z");
    }

    @Test
    void emulationSchemaMovesEachToolsDefinitionsToTheRoot() throws Exception {
        dev.oam.core.tool.ToolDefinition tool = new dev.oam.core.tool.ToolDefinition(
                "give",
                "Give an item.",
                (ObjectNode)
                        Json.parse(
                                "{\"type\":\"object\",\"properties\":{\"item\":{\"$ref\":\"#/$defs/Item\"}},"
                                        + "\"$defs\":{\"Item\":{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}}}"),
                null);
        dev.oam.core.tool.ToolDefinition other = new dev.oam.core.tool.ToolDefinition(
                "take",
                null,
                (ObjectNode) Json.parse("{\"type\":\"object\",\"properties\":{\"item\":{\"$ref\":\"#/$defs/Item\"}},"
                        + "\"$defs\":{\"Item\":{\"type\":\"string\"}}}"),
                null);
        dev.oam.core.model.ModelRequest request = new dev.oam.core.model.ModelRequest(
                "i",
                null,
                List.of(),
                List.of(tool, other),
                dev.oam.core.model.ToolCallingMode.ALLOWED,
                false,
                null,
                dev.oam.core.model.GenerationOptions.DEFAULT);
        ObjectNode schema = ChatRequests.emulationSchema(request, true);
        assertThat(schema.path("anyOf")).hasSize(3);
        assertThat(schema.path("$defs").has("t0_Item")).isTrue();
        assertThat(schema.path("$defs").path("t1_Item").path("type").asText()).isEqualTo("string");
        assertThat(schema.path("anyOf")
                        .get(0)
                        .path("properties")
                        .path("arguments")
                        .path("properties")
                        .path("item")
                        .path("$ref")
                        .asText())
                .isEqualTo("#/$defs/t0_Item");
        assertThat(schema.path("anyOf")
                        .get(1)
                        .path("properties")
                        .path("arguments")
                        .path("properties")
                        .path("item")
                        .path("$ref")
                        .asText())
                .isEqualTo("#/$defs/t1_Item");
        assertThat(schema.path("anyOf")
                        .get(2)
                        .path("properties")
                        .path("answer")
                        .path("type")
                        .asText())
                .isEqualTo("string");
    }

    private static HttpHeaders headers(String name, String value) {
        return HttpHeaders.of(Map.of(name, List.of(value)), (a, b) -> true);
    }
}
