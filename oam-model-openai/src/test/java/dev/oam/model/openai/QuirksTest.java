package dev.oam.model.openai;

import static dev.oam.testing.openai.FakeOpenAIServer.call;
import static dev.oam.testing.openai.FakeOpenAIServer.calls;
import static dev.oam.testing.openai.FakeOpenAIServer.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.openai.FakeOpenAIServer.Call;
import dev.oam.testing.openai.FakeOpenAIServer.Quirk;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Real servers' quirks, each behind its own fake: forcing, ids, streaming and tool support. */
@Timeout(60)
class QuirksTest extends WireSupport {
    @Test
    void ignoredToolChoiceFallsBackToEmulationAndIsRemembered() throws Exception {
        open(Quirk.IGNORES_TOOL_CHOICE);
        createSession("guard", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"required\"}", "");
        fake.then(
                text("Sure, I will open it for you!"), call("open_gate", "{\"gate\":\"north\"}"), text("It is open."));
        c.request(1, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Open the north gate.\",\"stream\":true}");
        c.reply(c.toolCall(), "{\"output\":\"opened\"}");
        JsonNode result = c.result(1);

        assertThat(fake.chat(0).body().path("tool_choice").isObject()).isTrue();
        JsonNode emulated = fake.chat(1).body();
        assertThat(emulated.has("tools")).isFalse();
        assertThat(emulated.has("tool_choice")).isFalse();
        JsonNode schema = emulated.path("response_format").path("json_schema").path("schema");
        assertThat(schema.path("properties").path("name").path("enum"))
                .extracting(JsonNode::asText)
                .containsExactly("open_gate");
        assertThat(schema.path("properties")
                        .path("arguments")
                        .path("properties")
                        .has("gate"))
                .isTrue();
        assertThat(schema.path("required")).extracting(JsonNode::asText).containsExactly("name", "arguments");
        assertThat(emulated.path("messages").get(0).path("content").asText())
                .contains("open_gate", "Call one of these tools now.");
        assertThat(fake.chat(2).toolNames()).containsExactly("open_gate");
        assertThat(fake.chat(2).body().path("tool_choice").asText()).isEqualTo("auto");
        assertThat(result.path("text").asText()).isEqualTo("It is open.");
        assertThat(result.path("usage").path("inputTokens").asInt()).isEqualTo(3 * 120);
        // The ignored answer of the forced step never reached the client.
        assertThat(streamedText(c.events(1))).isEqualTo("It is open.");
        assertThat(c.events(1).stream().map(e -> e.path("text").asText())).noneMatch(t -> t.contains("Sure"));

        fake.then(call("open_gate", "{\"gate\":\"south\"}"), text("Open too."));
        c.request(2, "session/respond", "{\"session\":\"guard\",\"prompt\":\"And the south gate.\"}");
        c.reply(c.toolCall(), "{\"output\":\"opened\"}");
        c.result(2);
        assertThat(fake.chat(3).body().has("tools"))
                .as("the endpoint is known to ignore tool_choice")
                .isFalse();
        assertThat(fake.chats()).hasSize(5);
        assertThat(logs()).contains("forced steps are emulated from now on");
    }

    @Test
    void emulatedExplicitStepOffersRespondDirectlyAsABranch() throws Exception {
        open(Quirk.IGNORES_TOOL_CHOICE);
        createSession("guard", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"explicit\"}", "");
        fake.then(text("Good evening!"), call("respond_directly", "{}"), text("Good evening, traveller."));
        JsonNode result = c.call(1, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Good evening.\"}");
        JsonNode branches = fake.chat(1)
                .body()
                .path("response_format")
                .path("json_schema")
                .path("schema")
                .path("anyOf");
        assertThat(branches)
                .extracting(b ->
                        b.path("properties").path("name").path("enum").get(0).asText())
                .containsExactly("open_gate", "respond_directly");
        assertThat(fake.chat(2).body().has("tools")).isFalse();
        assertThat(fake.chat(2).body().has("response_format")).isFalse();
        assertThat(result.path("text").asText()).isEqualTo("Good evening, traveller.");
        assertThat(result.path("toolCalls")).isEmpty();
    }

    @Test
    void emptyCallIdsAreReplacedWithGeneratedOnes() throws Exception {
        open(Quirk.EMPTY_IDS);
        createSession("guard", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"required\",\"parallelToolCalls\":true}", "");
        fake.then(
                calls(new Call("open_gate", "{\"gate\":\"north\"}"), new Call("open_gate", "{\"gate\":\"south\"}")),
                text("Both open."));
        c.request(1, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Open both gates.\"}");
        JsonNode a = c.toolCall();
        JsonNode b = c.toolCall();
        c.reply(a, "{\"output\":\"ok\"}");
        c.reply(b, "{\"output\":\"ok\"}");
        c.result(1);
        String idA = a.path("params").path("call").path("id").asText();
        String idB = b.path("params").path("call").path("id").asText();
        assertThat(idA).startsWith("call_").hasSizeGreaterThan(10);
        assertThat(idB).startsWith("call_").isNotEqualTo(idA);
        JsonNode messages = fake.chat(1).messages();
        assertThat(messages.get(2).path("tool_calls"))
                .extracting(t -> t.path("id").asText())
                .containsExactly(idA, idB);
        assertThat(List.of(
                        messages.get(3).path("tool_call_id").asText(),
                        messages.get(4).path("tool_call_id").asText()))
                .containsExactlyInAnyOrder(idA, idB);
    }

    @Test
    void toolCallDeltasWithoutIndexAreAssembledPerCall() throws Exception {
        open(Quirk.NO_INDEX);
        createSession("guard", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"required\",\"parallelToolCalls\":true}", "");
        fake.then(
                calls(new Call("open_gate", "{\"gate\":\"north\"}"), new Call("open_gate", "{\"gate\":\"south\"}")),
                text("ok"));
        c.request(1, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Open both gates.\"}");
        JsonNode a = c.toolCall();
        JsonNode b = c.toolCall();
        assertThat(a.path("params").path("call").path("arguments")).isEqualTo(Json.parse("{\"gate\":\"north\"}"));
        assertThat(b.path("params").path("call").path("arguments")).isEqualTo(Json.parse("{\"gate\":\"south\"}"));
        c.reply(a, "{\"output\":\"ok\"}");
        c.reply(b, "{\"output\":\"ok\"}");
        c.result(1);
    }

    @Test
    void serverRefusingStreamingWithToolsIsAskedAgainWithoutStreaming() throws Exception {
        open(Quirk.NO_STREAM_WITH_TOOLS);
        createSession("guard", "[" + GATE_TOOL + "]", "{}", "");
        fake.then(text("Nothing to open today."), text("Still nothing."));
        c.request(1, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Anything?\",\"stream\":true}");
        JsonNode result = c.result(1);
        assertThat(fake.chat(0).streamed()).isTrue();
        assertThat(fake.chat(1).streamed()).isFalse();
        assertThat(fake.chat(1).hasTools()).isTrue();
        List<JsonNode> texts = c.events(1).stream()
                .filter(e -> e.path("type").asText().equals("text"))
                .toList();
        assertThat(texts).hasSize(1);
        assertThat(texts.get(0).path("delta").asText()).isEqualTo("Nothing to open today.");
        assertThat(result.path("text").asText()).isEqualTo("Nothing to open today.");

        c.call(2, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Anything now?\",\"stream\":true}");
        assertThat(fake.chats()).hasSize(3);
        assertThat(fake.chat(2).streamed()).as("remembered for the endpoint").isFalse();
    }

    @Test
    void serverWithoutToolSupportIsSwitchedToEmulation() throws Exception {
        open(Quirk.NO_TOOL_SUPPORT);
        createSession("guard", "[" + GATE_TOOL + "]", "{}", "");
        fake.then(text("{\"answer\": \"Halt, traveller.\"}"));
        c.request(1, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Hello.\",\"stream\":true}");
        JsonNode result = c.result(1);
        assertThat(result.path("text").asText()).isEqualTo("Halt, traveller.");
        assertThat(streamedText(c.events(1))).isEqualTo("Halt, traveller.");
        assertThat(fake.chats()).hasSize(2);
        assertThat(fake.chat(0).hasTools()).isTrue();
        JsonNode emulated = fake.chat(1).body();
        assertThat(emulated.has("tools")).isFalse();
        assertThat(emulated.path("response_format")
                        .path("json_schema")
                        .path("schema")
                        .path("anyOf"))
                .hasSize(2);

        // Later turns skip the failing request, and the history is plain text the server accepts.
        fake.then(call("open_gate", "{\"gate\":\"east\"}"), text("{\"answer\": \"The east gate is open.\"}"));
        c.request(2, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Open the east gate.\"}");
        c.reply(c.toolCall(), "{\"output\":\"opened\"}");
        assertThat(c.result(2).path("text").asText()).isEqualTo("The east gate is open.");
        JsonNode messages = fake.chat(3).messages();
        assertThat(fake.chats()).hasSize(4);
        assertThat(roles(messages)).containsExactly("system", "user", "assistant", "user", "assistant", "user");
        assertThat(messages.get(4).path("content").asText())
                .isEqualTo("{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"east\"}}");
        assertThat(messages.get(3).path("content").asText()).isEqualTo("Open the east gate.");
        assertThat(messages.get(5).path("content").asText()).isEqualTo("Output of the tool open_gate: opened");
    }

    @Test
    void sseSplitAtAwkwardByteBoundariesKeepsTextAndArgumentsWhole() throws Exception {
        open(Quirk.CRLF);
        fake.pieces(1, 2, 1, 3);
        createSession("bard", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"required\"}", "");
        String line = "Grüße aus dem Norden, 世界 🐉 — \"quoted\" \\ back\nslash";
        fake.then(call("open_gate", "{\"gate\":\"Nördliches Tor 🐉\"}"), text(line));
        c.request(1, "session/respond", "{\"session\":\"bard\",\"prompt\":\"Sing.\",\"stream\":true}");
        JsonNode call = c.toolCall();
        assertThat(call.path("params")
                        .path("call")
                        .path("arguments")
                        .path("gate")
                        .asText())
                .isEqualTo("Nördliches Tor 🐉");
        c.reply(call, "{\"output\":\"ok\"}");
        JsonNode result = c.result(1);
        assertThat(result.path("text").asText()).isEqualTo(line);
        assertThat(streamedText(c.events(1))).isEqualTo(line);
    }

    @Test
    void emulatedModeRetriesOutputThatIsNoValidCallThenFails() throws Exception {
        open();
        createSession(
                "guard",
                "[" + GATE_TOOL + "]",
                "{\"toolChoice\":\"required\",\"maxAttempts\":2}",
                "\"toolCallMode\":\"emulated\"");
        // A valid first output verifies the standard way of sending the schema; from then on outputs are the model's.
        fake.then(call("open_gate", "{\"gate\":\"west\"}"), text("{\"answer\":\"Done.\"}"));
        c.request(0, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Open the west gate.\"}");
        c.reply(c.toolCall(), "{\"output\":\"ok\"}");
        assertThat(c.result(0).path("text").asText()).isEqualTo("Done.");

        fake.then(
                text("I would rather not."),
                call("open_gate", "{\"gate\":\"north\"}"),
                text("{\"answer\":\"Opened.\"}"));
        c.request(1, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Open the north gate.\"}");
        c.reply(c.toolCall(), "{\"output\":\"ok\"}");
        assertThat(c.result(1).path("text").asText()).isEqualTo("Opened.");
        assertThat(fake.chats()).allSatisfy(r -> assertThat(r.hasTools()).isFalse());
        assertThat(fake.chat(4)
                        .body()
                        .path("response_format")
                        .path("json_schema")
                        .path("schema")
                        .path("anyOf"))
                .hasSize(2);

        fake.then(text("{\"name\":\"burn_gate\",\"arguments\":{}}"), text("{\"nonsense\":true}"));
        c.request(2, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Again.\"}");
        JsonNode error = c.error(2);
        assertThat(error.path("code").asInt()).isEqualTo(-32012);
        assertThat(error.path("message").asText()).contains("not a valid tool call");
        assertThat(fake.chats()).hasSize(7);
    }
}
