package dev.oam.model.openai;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.Log;
import dev.oam.core.model.LanguageModel;
import dev.oam.testing.Conversation;
import dev.oam.testing.Events;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.openai.FakeOpenAIServer;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/** Starts fakes, a backend and an in-process bridge for wire tests, and closes them afterwards. */
abstract class WireSupport {
    static final String GATE_TOOL = "{\"name\":\"open_gate\",\"description\":\"Open a named gate.\","
            + "\"parameters\":{\"type\":\"object\",\"properties\":{\"gate\":{\"type\":\"string\"}},\"required\":[\"gate\"]}}";
    static final String STOCK_TOOL = "{\"name\":\"check_inventory\",\"description\":\"Look up an item's stock.\","
            + "\"parameters\":{\"type\":\"object\",\"properties\":{\"item\":{\"type\":\"string\"}},\"required\":[\"item\"]}}";

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final ByteArrayOutputStream logs = new ByteArrayOutputStream();
    FakeOpenAIServer fake;
    OpenAIBackend backend;
    Conversation c;

    private Log.Level level;

    @BeforeEach
    void captureLogs() {
        level = Log.level();
        Log.setLevel(Log.Level.INFO);
        Log.setStream(new PrintStream(logs, true, java.nio.charset.StandardCharsets.UTF_8));
    }

    @AfterEach
    void closeEverything() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
        Log.setStream(System.err);
        Log.setLevel(level);
    }

    String logs() {
        return logs.toString(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** A fake with these quirks and a bridge whose backend reads keys from {@code environment}. */
    Conversation open(Map<String, String> environment, FakeOpenAIServer.Quirk... quirks) throws Exception {
        fake = FakeOpenAIServer.start(quirks);
        closeables.add(fake);
        return connect(environment, null);
    }

    FakeOpenAIServer startFake(FakeOpenAIServer.Quirk... quirks) throws Exception {
        FakeOpenAIServer server = FakeOpenAIServer.start(quirks);
        closeables.add(server);
        return server;
    }

    Conversation open(FakeOpenAIServer.Quirk... quirks) throws Exception {
        return open(Map.of(), quirks);
    }

    /** A bridge (with {@code systemModel} as its system model, if any) on a fresh backend. */
    Conversation connect(
            Map<String, String> environment, java.util.function.Function<OpenAIBackend, LanguageModel> systemModel) {
        return connect(environment, systemModel, Conversation.WAIT);
    }

    /** The same, waiting up to {@code wait} for each answer (a real model on a shared CPU). */
    Conversation connect(
            Map<String, String> environment,
            java.util.function.Function<OpenAIBackend, LanguageModel> systemModel,
            java.time.Duration wait) {
        backend = new OpenAIBackend(environment::get);
        closeables.add(backend::close);
        BridgeConfiguration.Builder builder = BridgeConfiguration.builder().backends(List.of(backend));
        if (systemModel != null) {
            builder.systemModel(systemModel.apply(backend));
        }
        c = new Conversation(InMemoryClient.connect(builder), wait);
        closeables.add(c);
        return c;
    }

    /** The backend's system model for {@code url}, its first availability probe finished (tests never race it). */
    static LanguageModel probedSystemModel(OpenAIBackend backend, String url, String name) {
        OpenAIModel model = (OpenAIModel) backend.systemModel(url, name);
        if (model.probe(java.time.Duration.ofSeconds(20)) == null) {
            throw new AssertionError("the availability probe did not finish");
        }
        return model;
    }

    void createSession(String id, String tools, String options, String modelExtra) {
        c.call(
                "create-" + id,
                "session/create",
                "{\"session\":\"" + id + "\",\"instructions\":\"You are a castle guard.\"," + "\"tools\":" + tools
                        + ",\"options\":" + options + ",\"model\":" + fake.spec(modelExtra) + "}");
    }

    /** The concatenated deltas of a streamed turn's text events, applying resets. */
    static String streamedText(List<JsonNode> events) {
        return Events.streamedText(events);
    }

    static List<String> types(List<JsonNode> events) {
        return events.stream().map(e -> e.path("type").asText()).collect(Collectors.toList());
    }

    static List<String> roles(JsonNode messages) {
        List<String> roles = new ArrayList<>();
        messages.forEach(m -> roles.add(m.path("role").asText()));
        return roles;
    }
}
