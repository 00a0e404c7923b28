package dev.oam.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.ModelSpec;
import dev.oam.core.model.pull.ModelCache;
import dev.oam.testing.gguf.TinyGguf;
import dev.oam.testing.openai.FakeOpenAIServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One host setup for every transport: the model backends ({@code "llama"} on a generated GGUF, {@code "openai"} on the
 * in-project fake server) and the system model named by {@code OAM_MODEL}/{@code OAM_MODEL_NAME}/{@code OAM_API_KEY}
 * work the same through {@code oam stdio}, the C ABI and in-process Java, and bad model input is a clear error that
 * leaves the bridge and its other sessions alone. Subclasses say how their host reads the variables.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
public abstract class ModelHostContract {
    protected static final String GATE_TOOL =
            "{\"name\":\"open_gate\",\"description\":\"Open a named gate.\",\"parameters\":"
                    + "{\"type\":\"object\",\"properties\":{\"gate\":{\"type\":\"string\",\"enum\":[\"north\",\"south\"]}},"
                    + "\"required\":[\"gate\"]}}";

    @TempDir
    protected Path dir;

    private FakeOpenAIServer fake;

    /**
     * A fresh bridge whose host read these variables the way this transport reads them: the environment of {@code oam
     * stdio} and of the C library's {@code oam_bridge_create}, {@link dev.oam.core.model.ModelSpec#fromEnvironment} for
     * in-process Java. The transport adds what it needs to run llama.cpp small and quietly.
     */
    protected abstract ProtocolClient connect(Map<String, String> variables) throws Exception;

    /** Starts a host whose system model cannot be served; returns what the host told the person who started it. */
    protected abstract String refusedSetup(Map<String, String> variables) throws Exception;

    /** For the test class that runs this contract against its transport. */
    protected ModelHostContract() {}

    @AfterEach
    void stopFake() {
        if (fake != null) {
            fake.close();
        }
    }

    protected FakeOpenAIServer fake() throws IOException {
        if (fake == null) {
            fake = FakeOpenAIServer.start();
        }
        return fake;
    }

    protected Path tinyModel(String name) throws IOException {
        Path file = dir.resolve(name + ".gguf");
        TinyGguf.tiny().name(name).write(file);
        return file;
    }

    private static String llama(Path file) {
        return "{\"type\":\"llama\",\"path\":" + Json.write(Json.mapper().valueToTree(file.toString())) + "}";
    }

    /** A forced call of open_gate, answered, then the model's answer: the result of the turn. */
    private static JsonNode gateTurn(Conversation c, Object id, String session) {
        c.request(
                id,
                "session/respond",
                "{\"session\":\"" + session + "\",\"prompt\":\"Open the north gate.\",\"stream\":true}");
        JsonNode call = c.toolCall();
        assertThat(call.path("params").path("call").path("name").asText()).isEqualTo("open_gate");
        assertThat(call.path("params")
                        .path("call")
                        .path("arguments")
                        .path("gate")
                        .asText())
                .isIn("north", "south");
        c.reply(call, "{\"output\":{\"opened\":true}}");
        JsonNode result = c.result(id);
        assertThat(result.path("toolCalls")).hasSize(1);
        assertThat(result.path("toolCalls").get(0).path("output").path("opened").asBoolean())
                .isTrue();
        assertThat(result.path("text").isTextual()).isTrue();
        assertThat(result.path("usage").path("inputTokens").asInt()).isPositive();
        return result;
    }

    private static String gateSession(String session, String model) {
        return "{\"session\":\"" + session + "\",\"tools\":[" + GATE_TOOL
                + "],\"options\":{\"toolChoice\":\"required\"," + "\"maxToolRounds\":1,\"maxResponseTokens\":8}"
                + (model == null ? "" : ",\"model\":" + model) + "}";
    }

    // ---------------------------------------------------------------- sessions naming a backend

    @Test
    void aLlamaSessionCallsAToolOnAGgufFile() throws Exception {
        Path model = tinyModel("host-tiny");
        try (Conversation c = new Conversation(connect(Map.of()))) {
            JsonNode init = c.call(1, "initialize", "{\"protocolVersion\":\"1.0\"}");
            assertThat(init.path("capabilities").path("models"))
                    .extracting(JsonNode::asText)
                    .contains("llama", "openai");
            c.call(2, "session/create", gateSession("guard", llama(model)));
            gateTurn(c, 3, "guard");
            assertThat(c.client().garbage()).isEmpty();
        }
    }

    @Test
    void anOpenAISessionCallsAToolOnTheServer() throws Exception {
        FakeOpenAIServer server = fake().then(
                        FakeOpenAIServer.call("open_gate", "{\"gate\":\"north\"}"),
                        FakeOpenAIServer.text("The north gate is open."));
        try (Conversation c = new Conversation(connect(Map.of()))) {
            c.call(1, "session/create", gateSession("guard", server.spec("")));
            JsonNode result = gateTurn(c, 2, "guard");
            assertThat(result.path("text").asText()).isEqualTo("The north gate is open.");
            assertThat(server.chat(0).toolNames()).containsExactly("open_gate");
            assertThat(server.chats()).hasSize(2);
            assertThat(server.problems()).isEmpty();
        }
    }

    // ---------------------------------------------------------------- the system model

    @Test
    void oamModelNamingAGgufFileIsTheSystemModel() throws Exception {
        Path model = tinyModel("system-tiny");
        try (Conversation c = new Conversation(
                connect(Map.of(ModelSpec.MODEL_VARIABLE, model.toString(), ModelSpec.NAME_VARIABLE, "warden")))) {
            c.call(2, "session/create", gateSession("guard", null));
            gateTurn(c, 3, "guard"); // waits for the model to load
            JsonNode availability = c.call(1, "model/availability", null);
            assertThat(availability.path("available").asBoolean())
                    .as(availability.toString())
                    .isTrue();
            assertThat(availability.path("variant").asText()).isEqualTo("warden");
            c.call(4, "session/create", "{\"session\":\"plain\",\"options\":{\"maxResponseTokens\":4}}");
            assertThat(c.call(5, "session/respond", "{\"session\":\"plain\",\"prompt\":\"Hello.\"}")
                            .path("text")
                            .isTextual())
                    .isTrue();
        }
    }

    @Test
    void oamModelNamingAServerIsTheSystemModelWithItsKey() throws Exception {
        FakeOpenAIServer server = fake().requireKey("sk-host-key").then(FakeOpenAIServer.text("Halt! Who goes there?"));
        Map<String, String> variables = Map.of(
                ModelSpec.MODEL_VARIABLE,
                server.baseUrl(),
                ModelSpec.NAME_VARIABLE,
                "fake-model",
                ModelSpec.API_KEY_VARIABLE,
                "sk-host-key");
        try (Conversation c = new Conversation(connect(variables))) {
            c.call(1, "session/create", "{\"session\":\"guard\",\"instructions\":\"You are a guard.\"}");
            JsonNode result = c.call(2, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Hello.\"}");
            assertThat(result.path("text").asText()).isEqualTo("Halt! Who goes there?");
            FakeOpenAIServer.Recorded chat = server.chat(0);
            assertThat(chat.body().path("model").asText()).isEqualTo("fake-model");
            assertThat(chat.header("Authorization")).isEqualTo("Bearer sk-host-key");
            JsonNode availability = c.call(3, "model/availability", null);
            assertThat(availability.path("variant").asText()).isEqualTo("fake-model");
        }
    }

    @Test
    void aSystemModelTheHostCannotServeIsRefusedNamingTheCause() throws Exception {
        Path missing = dir.resolve("missing.gguf");
        assertThat(refusedSetup(Map.of(ModelSpec.MODEL_VARIABLE, missing.toString())))
                .contains(missing.toString())
                .contains("does not exist");
        Path truncated = truncated("cut");
        assertThat(refusedSetup(Map.of(ModelSpec.MODEL_VARIABLE, truncated.toString())))
                .contains(truncated.toString())
                .contains("truncated or corrupt");
        assertThat(refusedSetup(Map.of(ModelSpec.MODEL_VARIABLE, "ftp://example.test/model")))
                .contains("ftp://example.test/model")
                .contains(".gguf")
                .contains("http");
    }

    @Test
    void oamModelNamingACachedModelIsTheSystemModelAndAnUncachedOneIsRefusedNamingThePull() throws Exception {
        Path cache = dir.resolve("model-cache");
        Path placed = cache.resolve("hf/owner/repo/main/named-tiny.gguf");
        Files.createDirectories(placed.getParent());
        Files.move(tinyModel("named-tiny"), placed);
        try (Conversation c = new Conversation(connect(Map.of(
                ModelSpec.MODEL_VARIABLE, "owner/repo:named-tiny", ModelCache.CACHE_VARIABLE, cache.toString())))) {
            c.call(1, "session/create", gateSession("guard", null));
            gateTurn(c, 2, "guard");
            JsonNode availability = c.call(3, "model/availability", null);
            assertThat(availability.path("available").asBoolean())
                    .as(availability.toString())
                    .isTrue();
            assertThat(availability.path("variant").asText()).isEqualTo("named-tiny");
        }
        String refused = refusedSetup(Map.of(
                ModelSpec.MODEL_VARIABLE, "hf:owner/repo/absent.gguf", ModelCache.CACHE_VARIABLE, cache.toString()));
        assertThat(refused)
                .contains("hf:owner/repo/absent.gguf")
                .contains("not in the model cache")
                .contains("oam pull hf:owner/repo/absent.gguf");
    }

    // ---------------------------------------------------------------- bad input

    private Path truncated(String name) throws IOException {
        Path whole = tinyModel(name + "-whole");
        byte[] bytes = Files.readAllBytes(whole);
        Path cut = dir.resolve(name + ".gguf");
        Files.write(cut, Arrays.copyOf(bytes, bytes.length / 2));
        return cut;
    }

    @Test
    void missingTruncatedAndWrongModelFilesAreClearErrorsAndOtherSessionsGoOn() throws Exception {
        Path good = tinyModel("good");
        Path missing = dir.resolve("nowhere.gguf");
        Path cut = truncated("half");
        Path wrong = Files.writeString(dir.resolve("notes.gguf"), "these are my notes, not a model\n");
        try (Conversation c = new Conversation(connect(Map.of()))) {
            c.call(1, "session/create", gateSession("good", llama(good)));
            Map<Path, String> expected = new HashMap<>();
            expected.put(missing, "does not exist");
            expected.put(cut, "truncated or corrupt");
            expected.put(wrong, "is not a GGUF file");
            int id = 10;
            for (Map.Entry<Path, String> bad : expected.entrySet()) {
                JsonNode error = c.request(id, "session/create", gateSession("bad-" + id, llama(bad.getKey())))
                        .error(id);
                assertThat(error.path("code").asInt())
                        .as(bad.getKey().toString())
                        .isEqualTo(-32602);
                assertThat(error.path("message").asText())
                        .contains("model.path")
                        .contains(bad.getKey().toString())
                        .contains(bad.getValue());
                id++;
            }
            gateTurn(c, 2, "good");
            assertThat(c.call(3, "session/list", null).toString())
                    .contains("\"good\"")
                    .doesNotContain("bad-");
        }
    }

    @Test
    void aServerThatIsDownFailsItsTurnAndNothingElse() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        String down = "{\"type\":\"openai\",\"baseUrl\":\"http://127.0.0.1:" + port + "/v1\",\"model\":\"gone\"}";
        FakeOpenAIServer server = fake().then(FakeOpenAIServer.text("Still here."));
        try (Conversation c = new Conversation(connect(Map.of()))) {
            c.call(1, "session/create", "{\"session\":\"down\",\"model\":" + down + "}");
            c.call(2, "session/create", "{\"session\":\"up\",\"model\":" + server.spec("") + "}");
            JsonNode error = c.request(3, "session/respond", "{\"session\":\"down\",\"prompt\":\"Hello?\"}")
                    .error(3);
            assertThat(error.path("code").asInt()).isEqualTo(-32001);
            assertThat(error.path("message").asText())
                    .contains("127.0.0.1:" + port)
                    .contains("connection refused");
            assertThat(c.call(5, "session/respond", "{\"session\":\"up\",\"prompt\":\"Anyone?\"}")
                            .path("text")
                            .asText())
                    .isEqualTo("Still here.");
            assertThat(c.call(6, "ping", null)).isEqualTo(Json.object());
        }
    }
}
