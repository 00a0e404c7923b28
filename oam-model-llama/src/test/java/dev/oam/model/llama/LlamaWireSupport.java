package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.testing.Conversation;
import dev.oam.testing.Events;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.gguf.TinyGguf;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * Wire tests of the real backend: an in-process bridge (game extension on) whose system model is a generated tiny GGUF
 * run by llama.cpp. One backend and so one loaded engine serve every wire test of the JVM (the binding cannot free a
 * model); each test gets a fresh bridge.
 */
public abstract class LlamaWireSupport {
    /**
     * Tokens per session; 2 slots. Large enough for an NPC prompt plus the default 1024 reserved answer tokens: the
     * prompt lists the world tools and the reply's form in every step (so each step keeps the one before as its
     * prefix), which takes an NPC with a world past 1024 tokens on this vocabulary.
     */
    static final int CONTEXT = 4096;

    static final String NAME = "wire-tiny";
    static final LlamaBackend BACKEND = new LlamaBackend(
            LlamaSettings.read(dev.oam.core.Environment.system()).sized(2, 1, 1, CONTEXT), List.of("en"));
    /**
     * The same host settings with every model in a child process ({@link ModelHost}): the
     * {@code ProcessHost*WireTest}s.
     */
    static final LlamaBackend PROCESS_BACKEND = new LlamaBackend(
            LlamaSettings.read(dev.oam.core.Environment.system())
                    .sized(2, 1, 1, CONTEXT)
                    .withProcessHost(true),
            List.of("en"));

    private static Path model;
    private static LanguageModel processSystemModel;

    Conversation c;

    /** The tiny model's file, written once per JVM. */
    static synchronized Path model() {
        if (model == null) {
            Path file = TinyEngines.MODELS.resolve("wire").resolve(NAME + ".gguf");
            try {
                TinyGguf.tiny().name(NAME).write(file);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            model = file;
        }
        return model;
    }

    /** {@code {"type":"llama","path":…}} plus {@code extra} members ({@code ",\"seed\":3"}). */
    static String spec(String extra) {
        return "{\"type\":\"llama\",\"path\":" + Json.write(Json.mapper().valueToTree(model().toString())) + extra
                + "}";
    }

    static LanguageModel systemModel() {
        try {
            return BACKEND.systemModel(model().toString(), null);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The backend of this class's bridges: {@link #BACKEND}, or {@link #PROCESS_BACKEND} in the process-host variants.
     */
    LlamaBackend backend() {
        return BACKEND;
    }

    /** The system model of this class's bridges (its token counts are the reference of exact-count tests). */
    LanguageModel bridgeSystemModel() {
        if (backend() == BACKEND) {
            return systemModel();
        }
        synchronized (LlamaWireSupport.class) {
            if (processSystemModel == null) {
                try {
                    processSystemModel = PROCESS_BACKEND.systemModel(model().toString(), null);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
            return processSystemModel;
        }
    }

    @BeforeEach
    void connect() {
        c = new Conversation(InMemoryClient.connect(
                BridgeConfiguration.builder().sharedBackends(List.of(backend())).systemModel(bridgeSystemModel())));
    }

    @AfterEach
    void disconnect() {
        assertThat(c.client().garbage()).as("every line is a JSON object").isEmpty();
        c.close();
    }

    /** One tool call a turn made, as the client saw it. */
    record Seen(JsonNode toolCall) {
        String name() {
            return toolCall.path("params").path("call").path("name").asText();
        }

        JsonNode arguments() {
            return toolCall.path("params").path("call").path("arguments");
        }
    }

    /**
     * Answers every {@code tool/call} of request {@code id} with {@code reply} until its response arrives; returns the
     * response and fills {@code seen} with the calls in arrival order.
     */
    JsonNode drive(Object id, Function<Seen, String> reply, List<Seen> seen) {
        String key = Json.write(Json.mapper().valueToTree(id));
        Set<String> answered = new HashSet<>();
        while (true) {
            JsonNode message = c.await(
                    m -> (Conversation.isResponse(m) && Json.write(m.get("id")).equals(key))
                            || ("tool/call".equals(m.path("method").asText())
                                    && Json.write(m.path("params").path("requestId"))
                                            .equals(key)
                                    && !answered.contains(m.path("id").asText())),
                    "the response to " + key + " or its next tool/call");
            if (Conversation.isResponse(message)) {
                return message;
            }
            answered.add(message.path("id").asText());
            Seen call = new Seen(message);
            seen.add(call);
            c.reply(message, reply.apply(call));
        }
    }

    JsonNode driveResult(Object id, Function<Seen, String> reply, List<Seen> seen) {
        JsonNode response = drive(id, reply, seen);
        assertThat(response.has("error"))
                .as("expected a result but got %s", response)
                .isFalse();
        return response.get("result");
    }

    /** The concatenated deltas of a streamed turn's {@code text} events, applying resets. */
    public static String streamedText(List<JsonNode> events) {
        return Events.streamedText(events);
    }

    static List<String> fieldNames(JsonNode object) {
        List<String> names = new ArrayList<>();
        object.fieldNames().forEachRemaining(names::add);
        return names;
    }

    static String code(JsonNode error) {
        return error.path("data").path("code").asText();
    }
}
