package dev.oam.model.openai;

import static dev.oam.testing.openai.FakeOpenAIServer.call;
import static dev.oam.testing.openai.FakeOpenAIServer.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.testing.openai.FakeOpenAIServer.Quirk;
import dev.oam.testing.openai.FakeOpenAIServer.Reply;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A step the session forced (tool_choice required, or one named tool) ends with a call or a retryable
 * {@code generation_failed} in every toolCallMode, whatever the server answers: text, an empty message or a malformed
 * call never become an answer, and a call the server wrote as text is kept.
 */
@Timeout(60)
class ForcedStepTest extends WireSupport {
    private static final ToolDefinition GATE = tool("open_gate", "Open a named gate.");
    private static final ToolDefinition STOCK = tool("check_inventory", "Look up an item's stock.");

    /** What a server may send instead of a call, each repeated for every request of the step. */
    private static final Map<String, Reply> BAD = Map.of(
            "text", text("The gatekeeper, a wise and just one, keeps the balance."),
            "an empty message", text(""),
            "a call whose arguments are not JSON", call("open_gate", "{\"gate\": north"),
            "a call without a name", call("", "{\"gate\":\"north\"}"));

    @ParameterizedTest
    @ValueSource(strings = {"native", "auto", "emulated"})
    void aForcedStepNeverEndsAsAnAnswer(String mode) throws Exception {
        List<String> outcomes = new ArrayList<>();
        for (Map.Entry<String, Reply> bad : BAD.entrySet()) {
            for (List<ToolDefinition> tools : List.of(List.of(GATE), List.of(GATE, STOCK))) {
                open(Quirk.IGNORES_TOOL_CHOICE);
                fake.then(bad.getValue(), bad.getValue());
                LanguageModel model = model(mode);
                String what = mode + ", " + bad.getKey() + ", " + tools.size() + " tool(s)";
                assertThatThrownBy(() -> model.respond(forced(tools), ModelListener.NONE, CancellationToken.create()))
                        .as(what)
                        .isInstanceOfSatisfying(AgentException.class, e -> {
                            assertThat(e.code()).as(what).isEqualTo(ErrorCode.GENERATION_FAILED);
                            assertThat(e.isRetryable()).as(what).isTrue();
                            outcomes.add(what + ": " + e.getMessage());
                        });
                JsonNode first = fake.chat(0).body();
                if (mode.equals("emulated")) {
                    assertThat(first.has("tools")).as(what).isFalse();
                } else {
                    assertThat(first.path("tool_choice").isObject() == (tools.size() == 1))
                            .as(what + ": tool_choice names the only tool, else is required")
                            .isTrue();
                    assertThat(first.path("tool_choice").isObject()
                                    || first.path("tool_choice").asText().equals("required"))
                            .as(what)
                            .isTrue();
                }
            }
        }
        if (mode.equals("native")) {
            assertThat(outcomes)
                    .anyMatch(o -> o.startsWith("native, text,") && o.contains("answered a step that had to call"));
            assertThat(outcomes)
                    .anyMatch(o ->
                            o.startsWith("native, an empty message,") && o.contains("with an empty message instead"));
            assertThat(logs()).contains("answered a forced step (tool_choice) with");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"native", "auto"})
    void aForcedStepTheServerAnsweredWithTextIsOneRequestInNativeModeAndEmulatedInAuto(String mode) throws Exception {
        open(Quirk.IGNORES_TOOL_CHOICE);
        fake.then(text("I answer anyway."), call("open_gate", "{\"gate\":\"north\"}"));
        LanguageModel model = model(mode);
        if (mode.equals("native")) {
            assertThatThrownBy(
                            () -> model.respond(forced(List.of(GATE)), ModelListener.NONE, CancellationToken.create()))
                    .isInstanceOfSatisfying(
                            AgentException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.GENERATION_FAILED));
            assertThat(fake.chats()).hasSize(1);
        } else {
            ModelResponse response =
                    model.respond(forced(List.of(GATE)), ModelListener.NONE, CancellationToken.create());
            assertThat(response).isInstanceOf(ModelResponse.ToolCalls.class);
            assertThat(fake.chats()).hasSize(2);
            assertThat(fake.chat(1).body().has("tools")).as("emulated").isFalse();
        }
    }

    @Test
    void aCallTheServerWroteAsTextInANativeForcedStepIsKept() throws Exception {
        open(Quirk.IGNORES_TOOL_CHOICE);
        fake.then(text("<tool_call>\n{\"name\": \"open_gate\", \"arguments\": {\"gate\": \"north\"}}\n</tool_call>"));
        ModelResponse response =
                model("native").respond(forced(List.of(GATE, STOCK)), ModelListener.NONE, CancellationToken.create());
        assertThat(response).isInstanceOfSatisfying(ModelResponse.ToolCalls.class, calls -> {
            assertThat(calls.calls()).hasSize(1);
            assertThat(calls.calls().get(0).name()).isEqualTo("open_gate");
            assertThat(calls.calls().get(0).arguments()).isEqualTo(Json.object().put("gate", "north"));
        });
    }

    @Test
    void textNamingAToolThatIsNotOfferedIsNoCall() throws Exception {
        open(Quirk.IGNORES_TOOL_CHOICE);
        fake.then(text("{\"name\": \"burn_town\", \"arguments\": {}}"));
        assertThatThrownBy(() ->
                        model("native").respond(forced(List.of(GATE)), ModelListener.NONE, CancellationToken.create()))
                .isInstanceOfSatisfying(
                        AgentException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.GENERATION_FAILED));
    }

    /** Over the protocol: the agent asks again within maxAttempts, and the ignored text never reaches the client. */
    @Test
    void nativeModeAsksAgainWithinMaxAttemptsAndNeverShowsTheText() throws Exception {
        open(Quirk.IGNORES_TOOL_CHOICE);
        createSession(
                "guard",
                "[" + GATE_TOOL + "]",
                "{\"toolChoice\":\"required\",\"maxAttempts\":2}",
                "\"toolCallMode\":\"native\"");
        fake.then(text("I answer anyway."), call("open_gate", "{\"gate\":\"north\"}"), text("It is open."));
        c.request(1, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Open.\",\"stream\":true}");
        c.reply(c.toolCall(), "{\"output\":\"opened\"}");
        JsonNode result = c.result(1);
        assertThat(result.path("text").asText()).isEqualTo("It is open.");
        assertThat(fake.chats()).hasSize(3);
        assertThat(fake.chat(1).body().has("tools"))
                .as("native: the same request again")
                .isTrue();
        assertThat(streamedText(c.events(1))).isEqualTo("It is open.");

        createSession(
                "once",
                "[" + GATE_TOOL + "]",
                "{\"toolChoice\":\"required\",\"maxAttempts\":1}",
                "\"toolCallMode\":\"native\"");
        fake.then(text("Still answering."));
        c.request(2, "session/respond", "{\"session\":\"once\",\"prompt\":\"Open.\",\"stream\":true}");
        JsonNode error = c.error(2);
        assertThat(error.path("code").asInt()).isEqualTo(ErrorCode.GENERATION_FAILED.code());
        assertThat(error.path("message").asText()).contains("had to call a tool", "Still answering.");
        assertThat(streamedText(c.events(2))).isEmpty();
        assertThat(fake.problems()).isEmpty();
    }

    private LanguageModel model(String mode) throws Exception {
        connect(Map.of(), null);
        return backend.create((ObjectNode) Json.parse(fake.spec("\"toolCallMode\":\"" + mode + "\"")), "model");
    }

    private static ModelRequest forced(List<ToolDefinition> tools) {
        return new ModelRequest(
                "You are the gate keeper.",
                null,
                List.of(TranscriptEntry.Prompt.of("Open the north gate.", null)),
                tools,
                ToolCallingMode.REQUIRED,
                false,
                null,
                new GenerationOptions(0.0, null, null));
    }

    private static ToolDefinition tool(String name, String description) {
        try {
            return new ToolDefinition(name, description, (ObjectNode) Json.parse("""
                    {"type": "object", "properties": {"gate": {"type": "string"}}, "required": ["gate"]}"""), null);
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }
}
