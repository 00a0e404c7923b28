package dev.oam.model.openai;

import static dev.oam.testing.openai.FakeOpenAIServer.call;
import static dev.oam.testing.openai.FakeOpenAIServer.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.SamplerCodec;
import dev.oam.core.json.Json;
import dev.oam.core.model.GenerationOptions;
import dev.oam.testing.openai.FakeOpenAIServer;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The bridge's own step loop over the wire: one request per step, tools and tool_choice set per step. */
@Timeout(60)
class StepLoopTest extends WireSupport {
    @Test
    void forcedToolAppliesToFirstStepOnlyAndToolOutputsGoBackAsToolMessages() throws Exception {
        open();
        createSession("guard", "[" + GATE_TOOL + "," + STOCK_TOOL + "]", "{\"toolChoice\":\"required\"}", "");
        c.call(1, "session/setContextNote", "{\"session\":\"guard\",\"note\":\"The north gate is jammed.\"}");
        fake.then(call("open_gate", "{\"gate\":\"north\"}"), text("The gate stays shut: the chain is jammed."));

        c.request(2, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Open the north gate.\",\"stream\":true}");
        JsonNode toolCall = c.toolCall();
        assertThat(toolCall.path("params").path("call").path("name").asText()).isEqualTo("open_gate");
        assertThat(toolCall.path("params").path("call").path("arguments"))
                .isEqualTo(Json.parse("{\"gate\":\"north\"}"));
        c.reply(toolCall, "{\"output\":{\"opened\":false,\"reason\":\"jammed\"}}");
        JsonNode result = c.result(2);

        FakeOpenAIServer.Recorded first = fake.chat(0);
        assertThat(first.body().path("tool_choice").asText()).isEqualTo("required");
        assertThat(first.toolNames()).containsExactly("open_gate", "check_inventory");
        assertThat(first.streamed()).isTrue();
        assertThat(roles(first.messages())).containsExactly("system", "user");
        assertThat(first.messages().get(0).path("content").asText())
                .isEqualTo("You are a castle guard.\n\nThe north gate is jammed.");
        assertThat(first.messages().get(1).path("content").asText()).isEqualTo("Open the north gate.");

        FakeOpenAIServer.Recorded second = fake.chat(1);
        assertThat(second.body().path("tool_choice").asText()).isEqualTo("auto");
        assertThat(second.toolNames()).containsExactly("open_gate", "check_inventory");
        assertThat(roles(second.messages())).containsExactly("system", "user", "assistant", "tool");
        String callId = result.path("toolCalls").get(0).path("call").path("id").asText();
        JsonNode assistant = second.messages().get(2);
        assertThat(assistant.path("tool_calls").get(0).path("id").asText()).isEqualTo(callId);
        assertThat(assistant
                        .path("tool_calls")
                        .get(0)
                        .path("function")
                        .path("name")
                        .asText())
                .isEqualTo("open_gate");
        assertThat(Json.parse(assistant
                        .path("tool_calls")
                        .get(0)
                        .path("function")
                        .path("arguments")
                        .asText()))
                .isEqualTo(Json.parse("{\"gate\":\"north\"}"));
        JsonNode tool = second.messages().get(3);
        assertThat(tool.path("tool_call_id").asText()).isEqualTo(callId);
        assertThat(tool.path("content").asText()).isEqualTo("{\"opened\":false,\"reason\":\"jammed\"}");

        assertThat(result.path("text").asText()).isEqualTo("The gate stays shut: the chain is jammed.");
        assertThat(result.path("steps"))
                .extracting(s -> s.path("toolCallingMode").asText())
                .containsExactly("required", "allowed");
        JsonNode usage = result.path("usage");
        assertThat(usage.path("inputTokens").asInt()).isEqualTo(240);
        assertThat(usage.path("cachedInputTokens").asInt()).isEqualTo(192);
        assertThat(usage.path("outputTokens").asInt()).isPositive();

        List<JsonNode> events = c.events(2);
        assertThat(types(events)).startsWith("modelStep", "toolCallStarted", "toolCallCompleted", "modelStep");
        assertThat(types(events).stream().filter("text"::equals).count()).isGreaterThan(3);
        assertThat(streamedText(events)).isEqualTo(result.path("text").asText());
        assertThat(fake.problems()).isEmpty();
    }

    @Test
    void namedToolChoiceSendsOnlyThatToolAsANamedFunction() throws Exception {
        open();
        createSession(
                "guard",
                "[" + GATE_TOOL + "," + STOCK_TOOL + "]",
                "{\"toolChoice\":{\"tool\":\"check_inventory\"}}",
                "");
        fake.then(call("check_inventory", "{\"item\":\"sword\"}"), text("Two swords left."));
        c.request(2, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Any swords?\"}");
        c.reply(c.toolCall(), "{\"output\":\"2\"}");
        c.result(2);
        FakeOpenAIServer.Recorded first = fake.chat(0);
        assertThat(first.toolNames()).containsExactly("check_inventory");
        assertThat(first.body().path("tool_choice"))
                .isEqualTo(Json.parse("{\"type\":\"function\",\"function\":{\"name\":\"check_inventory\"}}"));
        assertThat(first.streamed())
                .as("steps stream even when the turn does not: usage and cancellation work the same")
                .isTrue();
        assertThat(fake.chat(1).toolNames()).containsExactly("open_gate", "check_inventory");
        assertThat(fake.chat(1).body().path("tool_choice").asText()).isEqualTo("auto");
    }

    @Test
    void spentBudgetSendsNoToolsAtAll() throws Exception {
        open();
        createSession("guard", "[" + GATE_TOOL + "]", "{\"maxToolRounds\":1}", "");
        fake.then(call("open_gate", "{\"gate\":\"west\"}"), text("Done."));
        c.request(2, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Open the west gate.\"}");
        c.reply(c.toolCall(), "{\"output\":\"opened\"}");
        JsonNode result = c.result(2);
        assertThat(fake.chat(0).body().path("tool_choice").asText()).isEqualTo("auto");
        JsonNode second = fake.chat(1).body();
        assertThat(second.has("tools")).isFalse();
        assertThat(second.has("tool_choice")).isFalse();
        // The history still shows the call and its output as tool messages.
        assertThat(roles(second.path("messages"))).containsExactly("system", "user", "assistant", "tool");
        assertThat(result.path("steps").get(1).path("toolCallingMode").asText()).isEqualTo("disallowed");
    }

    @Test
    void toolChoiceNoneSendsNoTools() throws Exception {
        open();
        createSession("guard", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"none\"}", "");
        fake.then(text("Halt."));
        c.call(2, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Hello.\"}");
        assertThat(fake.chat(0).body().has("tools")).isFalse();
        assertThat(fake.chat(0).body().has("tool_choice")).isFalse();
    }

    @Test
    void explicitOffersRespondDirectlyOnTheFirstStepOnly() throws Exception {
        open();
        createSession("guard", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"explicit\"}", "");
        fake.then(call("respond_directly", "{}"), text("Good evening, traveller."));
        JsonNode result = c.call(2, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Good evening.\"}");
        FakeOpenAIServer.Recorded first = fake.chat(0);
        assertThat(first.toolNames()).containsExactly("open_gate", "respond_directly");
        assertThat(first.body().path("tool_choice").asText()).isEqualTo("required");
        assertThat(fake.chat(1).body().has("tools")).isFalse();
        assertThat(result.path("toolCalls")).isEmpty();
        assertThat(result.path("text").asText()).isEqualTo("Good evening, traveller.");
        assertThat(result.path("steps").get(0).path("enabledTools"))
                .extracting(JsonNode::asText)
                .containsExactly("open_gate");
    }

    @Test
    void schemaTurnAsksForJsonSchemaAndStreamsPartialValues() throws Exception {
        open();
        createSession("goblin", "[]", "{}", "");
        String answer = "{\"reasoning\":\"The player is armed and I am alone.\",\"choice\":\"flee\"}";
        fake.then(text(answer));
        c.request(
                2,
                "session/respond",
                "{\"session\":\"goblin\",\"prompt\":\"A knight approaches.\",\"stream\":true,"
                        + "\"schema\":{\"type\":\"object\",\"properties\":{\"reasoning\":{\"type\":\"string\"},"
                        + "\"choice\":{\"type\":\"string\",\"enum\":[\"fight\",\"flee\"]}},\"required\":[\"reasoning\",\"choice\"]}}");
        JsonNode result = c.result(2);
        JsonNode format = fake.chat(0).body().path("response_format");
        assertThat(format.path("type").asText()).isEqualTo("json_schema");
        assertThat(format.path("json_schema")
                        .path("schema")
                        .path("properties")
                        .path("choice")
                        .path("enum"))
                .extracting(JsonNode::asText)
                .containsExactly("fight", "flee");
        assertThat(fake.chat(0).body().has("tools")).isFalse();
        assertThat(fake.chat(0).messages().get(0).path("content").asText()).contains("JSON Schema");
        assertThat(result.path("structured")).isEqualTo(Json.parse(answer));
        List<JsonNode> events = c.events(2);
        assertThat(types(events)).contains("partial");
        assertThat(events.stream()
                        .filter(e -> e.path("type").asText().equals("partial"))
                        .reduce((a, b) -> b)
                        .orElseThrow()
                        .path("value"))
                .isEqualTo(Json.parse(answer));
    }

    @Test
    void schemaTurnWithToolsForcesNativelyThenEmulatesTheAnswerStep() throws Exception {
        open();
        createSession("merchant", "[" + STOCK_TOOL + "]", "{\"toolChoice\":\"required\"}", "");
        fake.then(
                call("check_inventory", "{\"item\":\"shield\"}"),
                text("{\"answer\": {\"line\": \"Shields cost 60 gold.\", \"price\": 60}}"));
        c.request(
                2,
                "session/respond",
                "{\"session\":\"merchant\",\"prompt\":\"How much is a shield?\",\"stream\":true,"
                        + "\"schema\":{\"type\":\"object\",\"properties\":{\"line\":{\"type\":\"string\"},\"price\":{\"type\":\"integer\"}},"
                        + "\"required\":[\"line\",\"price\"]}}");
        c.reply(c.toolCall(), "{\"output\":{\"shield\":{\"price\":60,\"stock\":3}}}");
        JsonNode result = c.result(2);
        JsonNode first = fake.chat(0).body();
        assertThat(first.path("tool_choice"))
                .isEqualTo(Json.parse("{\"type\":\"function\",\"function\":{\"name\":\"check_inventory\"}}"));
        assertThat(first.has("response_format")).isFalse();
        JsonNode second = fake.chat(1).body();
        assertThat(second.has("tools")).isFalse();
        JsonNode schema = second.path("response_format").path("json_schema").path("schema");
        assertThat(schema.path("anyOf")).hasSize(2);
        assertThat(schema.path("anyOf")
                        .get(0)
                        .path("properties")
                        .path("name")
                        .path("enum")
                        .get(0)
                        .asText())
                .isEqualTo("check_inventory");
        assertThat(schema.path("anyOf")
                        .get(1)
                        .path("properties")
                        .path("answer")
                        .path("properties")
                        .has("price"))
                .isTrue();
        assertThat(result.path("structured"))
                .isEqualTo(Json.parse("{\"line\":\"Shields cost 60 gold.\",\"price\":60}"));
        assertThat(types(c.events(2))).contains("partial");
    }

    @Test
    void samplingOptionsAreSent() throws Exception {
        open();
        createSession(
                "a", "[]", "{\"temperature\":0.3,\"maxResponseTokens\":50,\"sampling\":{\"topP\":0.9,\"seed\":7}}", "");
        createSession("b", "[]", "{\"temperature\":0.8,\"sampling\":\"greedy\"}", "");
        createSession("k", "[]", "{\"sampling\":{\"topK\":40}}", "");
        fake.then(text("a"), text("b"), text("k"));
        c.call(1, "session/respond", "{\"session\":\"a\",\"prompt\":\"x\"}");
        c.call(2, "session/respond", "{\"session\":\"b\",\"prompt\":\"x\"}");
        c.call(3, "session/respond", "{\"session\":\"k\",\"prompt\":\"x\"}");
        JsonNode a = fake.chat(0).body();
        assertThat(a.path("temperature").asDouble()).isEqualTo(0.3);
        assertThat(a.path("max_tokens").asInt()).isEqualTo(50);
        assertThat(a.path("top_p").asDouble()).isEqualTo(0.9);
        assertThat(a.path("seed").asLong()).isEqualTo(7);
        assertThat(fake.chat(1).body().path("temperature").asDouble()).isZero();
        assertThat(fake.chat(2).body().path("top_k").asInt()).isEqualTo(40);
        assertThat(fake.chat(2).body().has("temperature")).isFalse();
    }

    @Test
    void samplerSettingsAreSentAndATurnsOwnAreLaidOverTheSessions() throws Exception {
        open();
        createSession(
                "npc",
                "[]",
                "{\"temperature\":0.7,\"sampler\":{\"topK\":30,\"topP\":0.9,\"minP\":0.05,"
                        + "\"presencePenalty\":0.2,\"frequencyPenalty\":0.3,\"dry\":{\"multiplier\":0.8},\"seed\":9}}",
                "");
        fake.then(text("a"), text("b"));
        c.call(1, "session/respond", "{\"session\":\"npc\",\"prompt\":\"x\"}");
        c.call(2, "session/respond", "{\"session\":\"npc\",\"prompt\":\"y\",\"sampler\":{\"topK\":5}}");
        JsonNode body = fake.chat(0).body();
        assertThat(body.path("temperature").asDouble()).isEqualTo(0.7);
        assertThat(body.path("top_k").asInt()).isEqualTo(30);
        assertThat(body.path("top_p").asDouble()).isEqualTo(0.9);
        assertThat(body.path("presence_penalty").asDouble()).isEqualTo(0.2);
        assertThat(body.path("frequency_penalty").asDouble()).isEqualTo(0.3);
        assertThat(body.path("seed").asLong()).isEqualTo(9);
        JsonNode second = fake.chat(1).body();
        assertThat(second.path("top_k").asInt())
                .as("a turn's sampler is laid over the session's")
                .isEqualTo(5);
        assertThat(second.path("top_p").asDouble()).isEqualTo(0.9);
    }

    @Test
    void llamaServerGetsEverySamplerSettingByItsOwnNamesAndOtherServersOnlyTheOpenAiOnes() throws Exception {
        GenerationOptions options = new GenerationOptions(
                0.7,
                null,
                SamplerCodec.read(
                        Json.parse(
                                "{\"topK\":30,\"topP\":0.9,\"minP\":0.05,\"typicalP\":0.97,"
                                        + "\"repeatPenalty\":1.1,\"repeatLastN\":128,\"presencePenalty\":0.2,\"frequencyPenalty\":0.3,"
                                        + "\"dry\":{\"multiplier\":0.8,\"base\":1.5,\"allowedLength\":3,\"penaltyLastN\":256,"
                                        + "\"sequenceBreakers\":[\"\\n\",\".\"]},\"xtc\":{\"probability\":0.5,\"threshold\":0.1},\"seed\":9}")));
        ObjectNode llama = Json.object();
        ChatRequests.options(llama, options, true);
        assertThat(Json.parse(Json.write(llama)))
                .isEqualTo(Json.parse("{\"temperature\":0.7,\"top_k\":30,\"top_p\":0.9,\"presence_penalty\":0.2,"
                        + "\"frequency_penalty\":0.3,\"seed\":9,\"min_p\":0.05,\"typical_p\":0.97,\"repeat_penalty\":1.1,"
                        + "\"repeat_last_n\":128,\"dry_multiplier\":0.8,\"dry_base\":1.5,\"dry_allowed_length\":3,"
                        + "\"dry_penalty_last_n\":256,\"dry_sequence_breakers\":[\"\\n\",\".\"],\"xtc_probability\":0.5,"
                        + "\"xtc_threshold\":0.1}"));
        ObjectNode other = Json.object();
        ChatRequests.options(other, options, false);
        assertThat(Json.parse(Json.write(other)))
                .isEqualTo(Json.parse("{\"temperature\":0.7,\"top_k\":30,\"top_p\":0.9,\"presence_penalty\":0.2,"
                        + "\"frequency_penalty\":0.3,\"seed\":9}"));
        assertThat(ChatRequests.llamaOnly(options.sampling()))
                .containsExactly("min_p", "typical_p", "repeat_penalty", "repeat_last_n", "dry_*", "xtc_*");
    }

    @Test
    void historyOfEarlierTurnsIsSentAsMessages() throws Exception {
        open();
        createSession("guard", "[]", "{}", "");
        fake.then(text("Halt! Who goes there?"), text("Pass, friend."));
        c.call(1, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Hello.\"}");
        c.call(2, "session/respond", "{\"session\":\"guard\",\"prompt\":\"A friend.\"}");
        JsonNode messages = fake.chat(1).messages();
        assertThat(roles(messages)).containsExactly("system", "user", "assistant", "user");
        assertThat(messages.get(2).path("content").asText()).isEqualTo("Halt! Who goes there?");
    }

    @Test
    void invalidStructuredOutputIsRetriedWithinMaxAttemptsThenFails() throws Exception {
        open();
        createSession("goblin", "[]", "{\"maxAttempts\":2}", "");
        String schema =
                "{\"type\":\"object\",\"properties\":{\"choice\":{\"type\":\"string\",\"enum\":[\"fight\",\"flee\"]}},"
                        + "\"required\":[\"choice\"]}";
        fake.then(text("{\"choice\":\"dance\"}"), text("{\"choice\":\"flee\"}"));
        JsonNode ok =
                c.call(1, "session/respond", "{\"session\":\"goblin\",\"prompt\":\"x\",\"schema\":" + schema + "}");
        assertThat(ok.path("structured").path("choice").asText()).isEqualTo("flee");
        fake.then(text("{\"choice\":\"dance\"}"), text("not json at all"));
        c.request(2, "session/respond", "{\"session\":\"goblin\",\"prompt\":\"y\",\"schema\":" + schema + "}");
        JsonNode error = c.error(2);
        assertThat(error.path("code").asInt()).isEqualTo(-32012);
        assertThat(fake.chats()).hasSize(4);
    }
}
