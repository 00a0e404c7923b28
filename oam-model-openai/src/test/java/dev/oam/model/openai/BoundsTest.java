package dev.oam.model.openai;

import static dev.oam.testing.openai.FakeOpenAIServer.call;
import static dev.oam.testing.openai.FakeOpenAIServer.calls;
import static dev.oam.testing.openai.FakeOpenAIServer.cut;
import static dev.oam.testing.openai.FakeOpenAIServer.cutCall;
import static dev.oam.testing.openai.FakeOpenAIServer.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.openai.FakeOpenAIServer;
import dev.oam.testing.openai.FakeOpenAIServer.Call;
import dev.oam.testing.openai.FakeOpenAIServer.Quirk;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every request is bounded: {@code max_tokens} by step kind when the session sets none, free strings by
 * {@code maxLength}, a cut call or JSON answer is a clear retryable failure, and a step holds one call unless
 * {@code parallelToolCalls} allows several.
 */
@Timeout(60)
class BoundsTest extends WireSupport {
    private static final String SCHEMA =
            "{\"type\":\"object\",\"properties\":{\"mood\":{\"type\":\"string\",\"enum\":[\"calm\","
                    + "\"angry\"]},\"note\":{\"type\":\"string\"}},\"required\":[\"mood\",\"note\"]}";

    @Test
    void everyStepCarriesMaxTokensByItsKindWhenTheSessionSetsNone() throws Exception {
        open();
        createSession("s", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"required\"}", "");
        fake.then(call("open_gate", "{\"gate\":\"north\"}"), text("It is open."));
        c.request(1, "session/respond", "{\"session\":\"s\",\"prompt\":\"Open the north gate.\"}");
        c.reply(c.toolCall(), "{\"output\":\"opened\"}");
        c.result(1);
        JsonNode forced = fake.chat(0).body();
        assertThat(forced.path("tool_choice").isObject()).isTrue();
        assertThat(forced.path("max_tokens").asInt()).as("a forced call").isEqualTo(ChatRequests.DEFAULT_CALL_TOKENS);
        // The tool's free string fits the call's budget: half of 256 tokens, as characters.
        assertThat(forced.path("tools")
                        .get(0)
                        .path("function")
                        .path("parameters")
                        .path("properties")
                        .path("gate")
                        .path("maxLength")
                        .asInt())
                .isEqualTo(128);
        JsonNode mayAnswer = fake.chat(1).body();
        assertThat(mayAnswer.path("tool_choice").asText()).isEqualTo("auto");
        assertThat(mayAnswer.path("max_tokens").asInt())
                .as("a step that may answer in text")
                .isEqualTo(ChatRequests.DEFAULT_TEXT_TOKENS);
        assertThat(mayAnswer.path("tools"))
                .as("the tools the prompt shows are the same in every step")
                .isEqualTo(forced.path("tools"));

        createSession("t", "[]", "{}", "");
        fake.then(text("Hello."), text("{\"mood\":\"calm\",\"note\":\"Quiet.\"}"));
        c.call(2, "session/respond", "{\"session\":\"t\",\"prompt\":\"Hello.\"}");
        c.call(3, "session/respond", "{\"session\":\"t\",\"prompt\":\"Report.\",\"schema\":" + SCHEMA + "}");
        assertThat(fake.chat(2).body().path("max_tokens").asInt())
                .as("free text")
                .isEqualTo(ChatRequests.DEFAULT_TEXT_TOKENS);
        JsonNode structured = fake.chat(3).body();
        assertThat(structured.path("max_tokens").asInt())
                .as("a JSON answer")
                .isEqualTo(ChatRequests.DEFAULT_STRUCTURED_TOKENS);
        assertThat(FakeOpenAIServer.schemaOf(structured)
                        .path("properties")
                        .path("note")
                        .path("maxLength")
                        .asInt())
                .isEqualTo(ChatRequests.DEFAULT_MAX_STRING);

        createSession("u", "[]", "{\"maxResponseTokens\":40}", "");
        fake.then(text("Hi."));
        c.call(4, "session/respond", "{\"session\":\"u\",\"prompt\":\"Hello.\"}");
        assertThat(fake.chat(4).body().path("max_tokens").asInt())
                .as("the session's own limit")
                .isEqualTo(40);
    }

    @Test
    void anEmulatedForcedStepIsBoundedLikeANativeOne() throws Exception {
        open();
        createSession(
                "s",
                "[" + GATE_TOOL + "," + STOCK_TOOL + "]",
                "{\"toolChoice\":\"required\",\"maxToolRounds\":1}",
                "\"toolCallMode\":\"emulated\"");
        fake.then(call("open_gate", "{\"gate\":\"north\"}"), text("It is open."));
        c.request(1, "session/respond", "{\"session\":\"s\",\"prompt\":\"Open the north gate.\"}");
        c.reply(c.toolCall(), "{\"output\":\"opened\"}");
        c.result(1);
        JsonNode forced = fake.chat(0).body();
        assertThat(forced.path("max_tokens").asInt()).isEqualTo(ChatRequests.DEFAULT_CALL_TOKENS);
        JsonNode branches = FakeOpenAIServer.schemaOf(forced).path("anyOf");
        assertThat(branches)
                .hasSize(2)
                .as("one call, no list of calls")
                .allSatisfy(b -> assertThat(b.path("properties").has("calls")).isFalse());
        // Each tool's string is bounded on its own: only one branch is ever written.
        assertThat(branches)
                .allSatisfy(b -> assertThat(b.path("properties")
                                .path("arguments")
                                .path("properties")
                                .elements()
                                .next()
                                .path("maxLength")
                                .asInt())
                        .isEqualTo(128));
        assertThat(forced.has("parallel_tool_calls")).as("no tools are sent").isFalse();
    }

    @Test
    void nativeToolStepsSayWhetherCallsMayRunInParallel() throws Exception {
        open();
        createSession("one", "[" + GATE_TOOL + "]", "{\"maxToolRounds\":1}", "");
        createSession("many", "[" + GATE_TOOL + "]", "{\"maxToolRounds\":1,\"parallelToolCalls\":true}", "");
        createSession("none", "[]", "{}", "");
        fake.then(text("No."), text("No."), text("No."));
        c.call(1, "session/respond", "{\"session\":\"one\",\"prompt\":\"Hello.\"}");
        c.call(2, "session/respond", "{\"session\":\"many\",\"prompt\":\"Hello.\"}");
        c.call(3, "session/respond", "{\"session\":\"none\",\"prompt\":\"Hello.\"}");
        assertThat(fake.chat(0).body().path("parallel_tool_calls").isBoolean()).isTrue();
        assertThat(fake.chat(0).body().path("parallel_tool_calls").asBoolean()).isFalse();
        assertThat(fake.chat(1).body().path("parallel_tool_calls").asBoolean()).isTrue();
        assertThat(fake.chat(2).body().has("parallel_tool_calls"))
                .as("OpenAI refuses it without tools")
                .isFalse();
    }

    @Test
    void severalCallsFromAServerKeepOnlyTheFirstWhenParallelCallsAreOff() throws Exception {
        open();
        createSession("guard", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"required\"}", "");
        fake.then(
                calls(new Call("open_gate", "{\"gate\":\"north\"}"), new Call("open_gate", "{\"gate\":\"south\"}")),
                text("North is open."));
        c.request(1, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Open both gates.\"}");
        JsonNode only = c.toolCall();
        assertThat(only.path("params")
                        .path("call")
                        .path("arguments")
                        .path("gate")
                        .asText())
                .isEqualTo("north");
        c.reply(only, "{\"output\":\"ok\"}");
        JsonNode result = c.result(1);
        assertThat(result.path("toolCalls")).hasSize(1);
        JsonNode history = fake.chat(1).messages();
        assertThat(history.get(2).path("tool_calls"))
                .as("the history holds the call that ran")
                .hasSize(1);
        assertThat(history.get(3).path("role").asText()).isEqualTo("tool");
        assertThat(history).hasSize(4);
    }

    @Test
    void emulatedStepsOfferAListOfCallsOnlyWithParallelCalls() throws Exception {
        open();
        createSession(
                "guard",
                "[" + GATE_TOOL + "]",
                "{\"toolChoice\":\"required\",\"parallelToolCalls\":true,\"maxToolRounds\":1}",
                "\"toolCallMode\":\"emulated\"");
        fake.then(
                calls(new Call("open_gate", "{\"gate\":\"north\"}"), new Call("open_gate", "{\"gate\":\"south\"}")),
                text("Both open."));
        c.request(1, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Open both gates.\"}");
        JsonNode a = c.toolCall();
        JsonNode b = c.toolCall();
        c.reply(a, "{\"output\":\"ok\"}");
        c.reply(b, "{\"output\":\"ok\"}");
        JsonNode result = c.result(1);
        assertThat(result.path("toolCalls")).hasSize(2);
        JsonNode schema = FakeOpenAIServer.schemaOf(fake.chat(0).body());
        assertThat(schema.path("anyOf")).hasSize(2);
        assertThat(schema.path("anyOf")
                        .get(1)
                        .path("properties")
                        .path("calls")
                        .path("items")
                        .path("properties")
                        .path("name")
                        .path("enum")
                        .get(0)
                        .asText())
                .isEqualTo("open_gate");
        assertThat(fake.chat(0).messages().get(0).path("content").asText()).contains("{\"calls\": [");
    }

    @Test
    void aCallCutByTheTokenLimitFailsRetryablyNamingTheBound() throws Exception {
        open();
        createSession("s", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"required\",\"maxAttempts\":2}", "");
        fake.then(cutCall("open_gate", "{\"gate\":\"nnnnnnnn"), cutCall("open_gate", "{\"gate\":\"nnnnnnnn"));
        c.request(1, "session/respond", "{\"session\":\"s\",\"prompt\":\"Open the north gate.\",\"stream\":true}");
        JsonNode error = c.error(1);
        assertThat(error.path("code").asInt()).isEqualTo(-32012);
        assertThat(error.path("message").asText()).contains("limit of 256 tokens", "tool call", "maxResponseTokens");
        assertThat(fake.chats())
                .as("asked again once, within maxAttempts, then given up")
                .hasSize(2);
        assertThat(fake.remaining()).isZero();
    }

    @Test
    void aJsonAnswerCutByTheTokenLimitFailsButCutFreeTextStands() throws Exception {
        open();
        createSession("s", "[]", "{\"maxAttempts\":1,\"maxResponseTokens\":30}", "");
        fake.then(cut("{\"mood\":\"calm\",\"note\":\"The gate is qui"), cut("Once upon a time, the gate"));
        c.request(1, "session/respond", "{\"session\":\"s\",\"prompt\":\"Report.\",\"schema\":" + SCHEMA + "}");
        JsonNode error = c.error(1);
        assertThat(error.path("code").asInt()).isEqualTo(-32012);
        assertThat(error.path("message").asText())
                .contains("limit of 30 tokens", "JSON answer", "the session's maxResponseTokens");
        JsonNode text = c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Tell a story.\"}");
        assertThat(text.path("text").asText()).isEqualTo("Once upon a time, the gate");
    }

    @Test
    void anEmulatedCallCutByTheTokenLimitFailsClearly() throws Exception {
        open();
        createSession(
                "s",
                "[" + GATE_TOOL + "]",
                "{\"toolChoice\":\"required\",\"maxAttempts\":1}",
                "\"toolCallMode\":\"emulated\"");
        fake.then(cutCall("open_gate", "{\"gate\":\"nnnnnnnn"));
        c.request(1, "session/respond", "{\"session\":\"s\",\"prompt\":\"Open the north gate.\"}");
        JsonNode error = c.error(1);
        assertThat(error.path("code").asInt()).isEqualTo(-32012);
        assertThat(error.path("message").asText()).contains("limit of 256 tokens", "maxResponseTokens");
    }

    @Test
    void aForcedStepCutWhileWritingTextIsEmulatedUnderAuto() throws Exception {
        open(Quirk.IGNORES_TOOL_CHOICE);
        createSession("s", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"required\"}", "");
        fake.then(cut("Well, well, well, well"), call("open_gate", "{\"gate\":\"north\"}"), text("Open."));
        c.request(1, "session/respond", "{\"session\":\"s\",\"prompt\":\"Open the north gate.\"}");
        c.reply(c.toolCall(), "{\"output\":\"opened\"}");
        assertThat(c.result(1).path("text").asText()).isEqualTo("Open.");
        assertThat(fake.chat(1).body().has("tools"))
                .as("the server ignored tool_choice: emulated")
                .isFalse();
        assertThat(fake.chat(1).body().path("max_tokens").asInt()).isEqualTo(ChatRequests.DEFAULT_CALL_TOKENS);
    }

    @Test
    void llamaCppIsAskedToReuseItsPromptCacheAndOtherServersAreNot() throws Exception {
        FakeOpenAIServer other = startFake();
        other.then(text("Hi."));
        connect(Map.of(), backend -> probedSystemModel(backend, other.baseUrl(), "fake-model"));
        c.call(1, "session/create", "{\"session\":\"s\"}");
        c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}");
        assertThat(other.chats().get(0).body().has("cache_prompt")).isFalse();

        FakeOpenAIServer llama = startFake();
        llama.models("llamacpp", "/models/gemma.gguf").then(text("Hi."));
        connect(Map.of(), backend -> probedSystemModel(backend, llama.baseUrl(), null));
        c.call(1, "session/create", "{\"session\":\"s\"}");
        c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}");
        assertThat(llama.chats().get(0).body().path("cache_prompt").asBoolean()).isTrue();
        assertThat(logs()).contains("is llama.cpp's server (owned_by llamacpp in its model list)");
    }

    @Test
    void aStringBoundNeverFallsBelowTheStringsOwnMinLength() throws Exception {
        JsonNode schema =
                dev.oam.core.json.Json.parse("{\"type\":\"object\",\"properties\":{\"reason\":{\"type\":\"string\","
                        + "\"minLength\":40},\"note\":{\"type\":\"string\"}}}");
        JsonNode bounded = ChatRequests.bounded(schema, 40);
        assertThat(bounded.path("properties").path("note").path("maxLength").asInt())
                .isEqualTo(16);
        assertThat(bounded.path("properties").path("reason").path("maxLength").asInt())
                .isEqualTo(40);
    }
}
