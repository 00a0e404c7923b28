package dev.oam.model.openai;

import static dev.oam.testing.openai.FakeOpenAIServer.call;
import static dev.oam.testing.openai.FakeOpenAIServer.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.openai.FakeOpenAIServer.Quirk;
import dev.oam.testing.openai.FakeOpenAIServer.Recorded;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * How a server takes a JSON Schema is found per endpoint from outputs, never assumed: the first way whose output
 * validates is kept (llama-server b4748 answers the standard {@code response_format: json_schema} with 200 and ignores
 * it), and a server that honours none gets its answers checked, not trusted.
 */
@Timeout(60)
class SchemaFormatTest extends WireSupport {
    static final String DECIDE =
            "{\"situation\":\"A wolf blocks the road.\",\"options\":[\"flee\",\"fight\"],\"actor\":{\"name\":\"Pip\"},"
                    + "\"model\":%s}";
    static final String FLEE = "{\"reasoning\":\"Wolves bite.\",\"choice\":\"flee\",\"confidence\":70}";

    @Test
    void theStandardWayIsVerifiedByTheFirstValidOutputAndKept() throws Exception {
        open();
        fake.then(text(FLEE), text(FLEE));
        assertThat(c.call(1, "decision/decide", DECIDE.formatted(fake.spec("")))
                        .path("optionID")
                        .asText())
                .isEqualTo("flee");
        assertThat(c.call(2, "decision/decide", DECIDE.formatted(fake.spec("")))
                        .path("optionID")
                        .asText())
                .isEqualTo("flee");
        assertThat(fake.chats()).as("no request was spent on finding the way").hasSize(2);
        for (Recorded chat : fake.chats()) {
            assertThat(chat.body().path("response_format").path("type").asText())
                    .isEqualTo("json_schema");
            assertThat(chat.body().has("json_schema")).isFalse();
        }
        assertThat(logs()).contains("honours a JSON Schema sent as response_format json_schema");
        assertThat(fake.problems()).isEmpty();
    }

    @Test
    void freeStringsAreBoundedSoTheValueFitsTheStepsTokens() throws Exception {
        open();
        fake.then(text("{\"mood\":\"calm\",\"note\":\"Quiet.\",\"names\":[\"Bram\"]}"), text(FLEE));
        createSession("s", "[]", "{\"maxResponseTokens\":120}", "");
        c.call(
                1,
                "session/respond",
                "{\"session\":\"s\",\"prompt\":\"Report.\",\"schema\":{\"type\":\"object\",\"properties\":{"
                        + "\"mood\":{\"type\":\"string\",\"enum\":[\"calm\",\"angry\"]},\"note\":{\"type\":\"string\"},"
                        + "\"names\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}}},\"required\":[\"mood\",\"note\",\"names\"]}}");
        JsonNode sent = fake.chat(0)
                .body()
                .path("response_format")
                .path("json_schema")
                .path("schema")
                .path("properties");
        // Half of the 120 tokens shared by the two free strings.
        assertThat(sent.path("note").path("maxLength").asInt()).as("%s", sent).isEqualTo(30);
        assertThat(sent.path("names").path("items").path("maxLength").asInt()).isEqualTo(30);
        assertThat(sent.path("mood").has("maxLength"))
                .as("an enum is bounded already")
                .isFalse();
        c.call(2, "decision/decide", DECIDE.formatted(fake.spec("")));
        JsonNode unlimited = fake.chat(1)
                .body()
                .path("response_format")
                .path("json_schema")
                .path("schema")
                .path("properties");
        assertThat(unlimited.path("reasoning").path("maxLength").asInt()).isEqualTo(ChatRequests.DEFAULT_MAX_STRING);
    }

    @Test
    void b4748IgnoresResponseFormatJsonSchemaSoJsonObjectWithSchemaIsFoundAndRemembered() throws Exception {
        open(Quirk.IGNORES_RESPONSE_FORMAT_SCHEMA);
        fake.then(text(FLEE));
        JsonNode first = c.call(1, "decision/decide", DECIDE.formatted(fake.spec("")));
        assertThat(first.path("optionID").asText()).isEqualTo("flee");
        assertThat(first.path("isFallback").asBoolean()).isFalse();
        assertThat(fake.chats()).hasSize(2);
        assertThat(fake.chat(0).body().path("response_format").path("type").asText())
                .isEqualTo("json_schema");
        JsonNode second = fake.chat(1).body();
        assertThat(second.path("response_format").path("type").asText()).isEqualTo("json_object");
        assertThat(second.path("response_format")
                        .path("schema")
                        .path("properties")
                        .path("choice")
                        .path("enum"))
                .extracting(JsonNode::asText)
                .containsExactly("flee", "fight");
        assertThat(first.path("usage").path("inputTokens").asInt())
                .as("the ignored attempt is counted")
                .isEqualTo(2 * 120);
        assertThat(logs())
                .contains("did not honour a JSON Schema sent as response_format json_schema")
                .contains("honours a JSON Schema sent as response_format json_object + schema");

        // Remembered for the endpoint: the next session's emulated tool step goes the found way at once.
        createSession("guard", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"auto\"}", "\"toolCallMode\":\"emulated\"");
        fake.then(call("open_gate", "{\"gate\":\"north\"}"), text("{\"answer\":\"It is open.\"}"));
        c.request(3, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Open the north gate.\",\"stream\":true}");
        c.reply(c.toolCall(), "{\"output\":\"opened\"}");
        JsonNode turn = c.result(3);
        assertThat(turn.path("text").asText()).isEqualTo("It is open.");
        assertThat(streamedText(c.events(3))).isEqualTo("It is open.");
        assertThat(fake.chats()).hasSize(4);
        for (int i = 2; i < 4; i++) {
            JsonNode body = fake.chat(i).body();
            assertThat(body.path("response_format").path("type").asText()).isEqualTo("json_object");
            assertThat(body.path("response_format").path("schema").path("anyOf"))
                    .hasSize(2);
        }
        assertThat(fake.problems()).isEmpty();
    }

    @Test
    void anIgnoredSchemaIsRetractedFromTheStreamBeforeTheNextWayIsTried() throws Exception {
        open(Quirk.IGNORES_RESPONSE_FORMAT_SCHEMA);
        createSession("guard", "[" + GATE_TOOL + "]", "{\"toolChoice\":\"auto\"}", "\"toolCallMode\":\"emulated\"");
        fake.then(text("{\"answer\":\"Halt.\"}"));
        c.request(1, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Hello.\",\"stream\":true}");
        JsonNode turn = c.result(1);
        assertThat(turn.path("text").asText()).isEqualTo("Halt.");
        assertThat(streamedText(c.events(1))).isEqualTo("Halt.");
        assertThat(fake.chats()).hasSize(2);
        assertThat(fake.chat(1).body().path("response_format").path("type").asText())
                .isEqualTo("json_object");
    }

    @Test
    void aServerThatHonoursNoWayIsCheckedNotTrustedAndTheSearchEnds() throws Exception {
        open(Quirk.IGNORES_SCHEMAS);
        c.request(1, "decision/decide", DECIDE.formatted(fake.spec("")));
        JsonNode error = c.error(1);
        assertThat(error.path("code").asInt()).as("%s", error).isEqualTo(-32012);
        // Each way once, then the decision's own retry (maxAttempts) in the standard way.
        assertThat(fake.chats()).hasSize(SchemaFormat.CANDIDATES.size() + 1);
        assertThat(fake.chat(5).body().path("response_format").path("type").asText())
                .isEqualTo("json_schema");
        assertThat(fake.chat(0).body().path("response_format").path("type").asText())
                .isEqualTo("json_schema");
        assertThat(fake.chat(1).body().path("response_format").path("type").asText())
                .isEqualTo("json_object");
        assertThat(fake.chat(1).body().path("response_format").has("schema")).isTrue();
        assertThat(fake.chat(2).body().path("json_schema").isObject()).isTrue();
        assertThat(fake.chat(2).body().has("response_format")).isFalse();
        assertThat(fake.chat(3).body().path("guided_json").isObject()).isTrue();
        assertThat(fake.chat(4).body().path("format").isObject()).isTrue();
        assertThat(logs()).contains("honoured a JSON Schema in none of the ways tried");

        // The search is over: the standard way is sent, and the unconstrained answer is still refused.
        int before = fake.chats().size();
        c.request(2, "decision/decide", DECIDE.formatted(fake.spec("")));
        JsonNode again = c.error(2);
        assertThat(again.path("code").asInt()).isEqualTo(-32012);
        assertThat(fake.chats().subList(before, fake.chats().size()))
                .allSatisfy(chat -> assertThat(
                                chat.body().path("response_format").path("type").asText())
                        .isEqualTo("json_schema"));
    }
}
