package dev.oam.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The protocol contract: JSON text in, parsed JSON out. Every transport runs it by extending this
 * class and saying how to connect ({@code bin/oam stdio} flags; the in-process engine maps them to
 * its configuration).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class ProtocolContract extends ContractSupport {
    /** For the test class that runs this contract against its transport. */
    protected ProtocolContract() {}

    // ---------------------------------------------------------------- framing (§1, §8)

    @Test
    void garbageIsAParseErrorWithNullIdAndTheNextRequestIsServed() throws Exception {
        try (Conversation c = open()) {
            c.send("{not json");
            JsonNode error = c.await(Conversation::isResponse, "parse error");
            assertThat(error.get("id").isNull()).isTrue();
            assertThat(error.path("error").path("code").asInt()).isEqualTo(-32700);
            assertThat(code(error.get("error"))).isEqualTo("parse_error");
            assertThat(c.call(1, "ping", null)).isEqualTo(Json.object());
        }
    }

    @Test
    void invalidUtf8IsAParseError() throws Exception {
        try (Conversation c = open()) {
            byte[] prefix = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\""
                    .getBytes(StandardCharsets.UTF_8);
            byte[] suffix = "\"}}".getBytes(StandardCharsets.UTF_8);
            byte[] line = new byte[prefix.length + 2 + suffix.length];
            System.arraycopy(prefix, 0, line, 0, prefix.length);
            line[prefix.length] = (byte) 0xC3;
            line[prefix.length + 1] = (byte) 0x28;
            System.arraycopy(suffix, 0, line, prefix.length + 2, suffix.length);
            c.sendBytes(line);
            JsonNode error = c.await(Conversation::isResponse, "parse error");
            assertThat(error.path("error").path("code").asInt()).isEqualTo(-32700);
            assertThat(error.get("id").isNull()).isTrue();
            assertThat(c.call(2, "ping", null)).isEqualTo(Json.object());
        }
    }

    @Test
    void batchesAreRejectedWithNullId() throws Exception {
        try (Conversation c = open()) {
            c.send("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]");
            JsonNode error = c.await(Conversation::isResponse, "batch error");
            assertThat(error.get("id").isNull()).isTrue();
            assertThat(error.path("error").path("code").asInt()).isEqualTo(-32600);
            assertThat(code(error.get("error"))).isEqualTo("invalid_message");
            assertThat(c.sync()).isEmpty();
        }
    }

    @Test
    void nonObjectMessagesAreInvalid() throws Exception {
        try (Conversation c = open()) {
            c.send("42");
            c.send("\"ping\"");
            c.send("null");
            List<JsonNode> before = c.sync();
            assertThat(before).hasSize(3).allSatisfy(m -> {
                assertThat(m.path("error").path("code").asInt()).isEqualTo(-32600);
                assertThat(m.get("id").isNull()).isTrue();
            });
        }
    }

    @Test
    void jsonrpcVersionIsRequired() throws Exception {
        try (Conversation c = open()) {
            c.send("{\"id\":1,\"method\":\"ping\"}");
            assertThat(c.error(1).path("code").asInt()).isEqualTo(-32600);
            c.send("{\"jsonrpc\":\"1.0\",\"id\":2,\"method\":\"ping\"}");
            assertThat(c.error(2).path("code").asInt()).isEqualTo(-32600);
            c.send("{\"jsonrpc\":2.0,\"id\":3,\"method\":\"ping\"}");
            assertThat(c.error(3).path("code").asInt()).isEqualTo(-32600);
        }
    }

    @Test
    void idsAreEchoedExactly() throws Exception {
        try (Conversation c = open()) {
            c.send("{\"jsonrpc\":\"2.0\",\"id\":\"abc-1\",\"method\":\"ping\"}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":8.0,\"method\":\"ping\"}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":1e3,\"method\":\"ping\"}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":9007199254740991,\"method\":\"ping\"}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":-9007199254740991,\"method\":\"ping\"}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"ping\"}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":\"\",\"method\":\"ping\"}");
            List<JsonNode> responses = c.sync();
            assertThat(responses)
                    .extracting(m -> Json.write(m.get("id")))
                    .containsExactly(
                            "\"abc-1\"", "7", "8", "1000", "9007199254740991", "-9007199254740991", "0", "\"\"");
        }
    }

    @Test
    void unsafeNumericIdsAreRejectedWithNullIdAndAStringIdHint() throws Exception {
        try (Conversation c = open()) {
            for (String id : List.of(
                    "9007199254740992",
                    "-9007199254740992",
                    "1e999",
                    "-1e999",
                    "123456789012345678901234567890",
                    "1.5e300")) {
                int before = c.size();
                c.send("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"ping\"}");
                JsonNode error =
                        c.await(m -> Conversation.isResponse(m) && c.indexOf(m) >= before, "rejection of " + id);
                assertThat(error.get("id").isNull()).as(id).isTrue();
                assertThat(error.path("error").path("code").asInt()).as(id).isEqualTo(-32600);
                assertThat(error.path("error").path("message").asText()).as(id).contains("string id");
            }
            assertThat(c.call(1, "ping", null)).isEqualTo(Json.object());
        }
    }

    @Test
    void nullAndNonScalarIdsAreRejected() throws Exception {
        try (Conversation c = open()) {
            c.send("{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"ping\"}");
            List<JsonNode> errors = c.sync();
            assertThat(errors).hasSize(3).allSatisfy(m -> {
                assertThat(m.get("id").isNull()).isTrue();
                assertThat(m.path("error").path("code").asInt()).isEqualTo(-32600);
            });
        }
    }

    @Test
    void blankLinesAreIgnored() throws Exception {
        try (Conversation c = open()) {
            c.send("");
            c.send("   ");
            c.send("\t");
            assertThat(c.sync()).isEmpty();
        }
    }

    @Test
    void paramsMustBeAnObjectAndNullMeansAbsent() throws Exception {
        try (Conversation c = open()) {
            c.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1,2]}");
            assertThat(c.error(1).path("code").asInt()).isEqualTo(-32602);
            c.send("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":\"x\"}");
            assertThat(c.error(2).path("code").asInt()).isEqualTo(-32602);
            c.send("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\",\"params\":null}");
            assertThat(c.result(3)).isEqualTo(Json.object());
            JsonNode created =
                    c.call(4, "session/create", "{\"session\":null,\"instructions\":null,\"model\":\"scripted\"}");
            assertThat(created.path("session").asText()).isEqualTo("s1");
            assertThat(created.path("warnings")).isEmpty();
        }
    }

    @Test
    void unknownMembersAreReportedInWarnings() throws Exception {
        try (Conversation c = open()) {
            JsonNode created = c.call(
                    1,
                    "session/create",
                    "{\"session\":\"a\",\"instructionz\":\"x\","
                            + "\"options\":{\"temprature\":0.5},\"model\":\"scripted\"}");
            assertThat(created.path("warnings").toString())
                    .contains("'instructionz'")
                    .contains("'options.temprature'");
            JsonNode turn = c.call(2, "session/respond", "{\"session\":\"a\",\"prompt\":\"hi\",\"promt\":1}");
            assertThat(turn.path("warnings").toString()).contains("'promt'");
            JsonNode clean = c.call(3, "session/respond", "{\"session\":\"a\",\"prompt\":\"hi\"}");
            assertThat(clean.has("warnings")).isFalse();
        }
    }

    @Test
    void notificationsAreNeverAnswered() throws Exception {
        try (Conversation c = open()) {
            c.notification("ping", null);
            c.notification("no/such", null);
            c.notification("session/respond", "{\"session\":\"missing\",\"prompt\":\"x\"}");
            c.send("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"params\":[1]}");
            assertThat(c.sync()).isEmpty();
        }
    }

    @Test
    void unknownMethodsAreMethodNotFound() throws Exception {
        try (Conversation c = open()) {
            JsonNode error = c.request(1, "npc/dance", "{}").error(1);
            assertThat(error.path("code").asInt()).isEqualTo(-32601);
            assertThat(error.path("data").path("method").asText()).isEqualTo("npc/dance");
            assertThat(code(error)).isEqualTo("method_not_found");
        }
    }

    @Test
    void responsesToUnknownToolCallIdsAreIgnored() throws Exception {
        try (Conversation c = open()) {
            c.send("{\"jsonrpc\":\"2.0\",\"id\":\"t-99\",\"result\":{\"output\":\"late\"}}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":\"t-98\",\"error\":{\"code\":-32000,\"message\":\"x\"}}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
            assertThat(c.sync()).isEmpty();
        }
    }

    @Test
    void hugeLinesAreServed() throws Exception {
        try (Conversation c = open()) {
            String pad = "x".repeat(16 * 1024 * 1024 + 10);
            c.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"pad\":\"" + pad + "\"}}");
            assertThat(c.result(1)).isEqualTo(Json.object());
            c.call(
                    2,
                    "session/create",
                    "{\"session\":\"big\",\"model\":" + scripted("[{\"template\":\"{prompt}\"}]") + "}");
            JsonNode tooLong = c.request(3, "session/respond", "{\"session\":\"big\",\"prompt\":\"" + pad + "\"}")
                    .error(3);
            assertThat(code(tooLong)).isEqualTo("context_size_exceeded");
            assertThat(c.call(4, "ping", null)).isEqualTo(Json.object());
        }
    }

    @Test
    void deepNestingIsAParseErrorNotACrash() throws Exception {
        try (Conversation c = open()) {
            int depth = 100_000;
            String line = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"a\":" + "[".repeat(depth)
                    + "]".repeat(depth) + "}}";
            c.send(line);
            JsonNode error = c.await(Conversation::isResponse, "parse error");
            assertThat(error.path("error").path("code").asInt()).isEqualTo(-32700);
            c.send("{\"a\":" + "{\"a\":".repeat(depth) + "1" + "}".repeat(depth + 1));
            assertThat(c.call(2, "ping", null)).isEqualTo(Json.object());
        }
    }

    @Test
    void hugeNumbersNeverCrash() throws Exception {
        try (Conversation c = open()) {
            assertThat(c.call(1, "ping", "{\"x\":1e999,\"y\":-1e999999999,\"z\":123456789012345678901234567890}"))
                    .isEqualTo(Json.object());
            JsonNode error = c.request(
                            2, "session/create", "{\"model\":\"scripted\",\"options\":{\"temperature\":1e999}}")
                    .error(2);
            assertThat(error.path("code").asInt()).isEqualTo(-32602);
            assertThat(error.path("message").asText()).contains("'options.temperature'");
            error = c.request(
                            3, "session/create", "{\"model\":\"scripted\",\"options\":{\"maxToolRounds\":1e999999999}}")
                    .error(3);
            assertThat(error.path("message").asText()).contains("'options.maxToolRounds'");
            error = c.request(
                            4, "session/create", "{\"model\":\"scripted\",\"options\":{\"toolTimeoutSeconds\":1e999}}")
                    .error(4);
            assertThat(error.path("message").asText()).contains("from 0 to 86400");
        }
    }

    @Test
    void wrongTypesEverywhereGetClearErrors() throws Exception {
        try (Conversation c = open()) {
            c.send("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":42}");
            assertThat(c.error(1).path("code").asInt()).isEqualTo(-32600);
            assertThat(c.request(2, "session/create", "{\"session\":5}")
                            .error(2)
                            .path("message")
                            .asText())
                    .contains("'session'");
            assertThat(c.request(3, "session/create", "{\"tools\":{}}")
                            .error(3)
                            .path("message")
                            .asText())
                    .contains("'tools'");
            assertThat(c.request(4, "session/create", "{\"options\":[]}")
                            .error(4)
                            .path("message")
                            .asText())
                    .contains("'options'");
            assertThat(c.request(5, "session/create", "{\"model\":5}")
                            .error(5)
                            .path("message")
                            .asText())
                    .contains("'model'");
            assertThat(c.request(6, "session/respond", "{\"session\":[],\"prompt\":\"x\"}")
                            .error(6)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32602);
            assertThat(c.request(7, "initialize", "{\"protocolVersion\":1}")
                            .error(7)
                            .path("message")
                            .asText())
                    .contains("'protocolVersion'");
            assertThat(c.call(8, "ping", null)).isEqualTo(Json.object());
        }
    }

    // ---------------------------------------------------------------- core methods

    @Test
    void initializeListsOnlyRegisteredCapabilities() throws Exception {
        try (Conversation c = open()) {
            JsonNode result = c.call(
                    1, "initialize", "{\"client\":{\"name\":\"Test\",\"version\":\"1\"},\"protocolVersion\":\"1.0\"}");
            assertThat(result.path("protocolVersion").asText()).isEqualTo("1.0");
            assertThat(result.path("server").path("name").asText()).isEqualTo("open-apple-models");
            assertThat(result.path("server").path("version").asText()).isNotBlank();
            JsonNode caps = result.path("capabilities");
            List<String> methods = new ArrayList<>();
            caps.path("methods").forEach(m -> methods.add(m.asText()));
            assertThat(methods)
                    .contains(
                            "initialize",
                            "ping",
                            "model/availability",
                            "shutdown",
                            "session/create",
                            "session/respond",
                            "session/cancel",
                            "session/reset",
                            "session/delete",
                            "session/list",
                            "session/setInstructions",
                            "session/setContextNote",
                            "session/setTools")
                    .isSorted();
            for (String method : methods) {
                int id = 100 + methods.indexOf(method);
                if (!method.equals("shutdown")) {
                    c.request(id, method, "{}");
                    JsonNode response = c.response(id);
                    assertThat(response.path("error").path("code").asInt())
                            .as(method)
                            .isNotEqualTo(-32601);
                }
            }
            assertThat(caps.path("notifications").get(0).asText()).isEqualTo("session/event");
            assertThat(caps.path("notifications").toString()).contains("tool/cancel");
            assertThat(caps.path("clientRequests").toString()).isEqualTo("[\"tool/call\"]");
            assertThat(caps.path("batch").asBoolean(true)).isFalse();
            assertThat(caps.path("streaming").asBoolean()).isTrue();
            assertThat(caps.path("maxSessions").asInt()).isEqualTo(64);
            assertThat(caps.path("models").toString()).contains("\"system\"").contains("\"scripted\"");
            assertThat(result.path("model").path("available").isBoolean()).isTrue();
        }
    }

    @Test
    void initializeRejectsAnotherMajorVersion() throws Exception {
        try (Conversation c = open()) {
            assertThat(c.request(1, "initialize", "{\"protocolVersion\":\"2.0\"}")
                            .error(1)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32602);
            assertThat(c.call(2, "initialize", "{\"protocolVersion\":\"1.3\"}")
                            .path("protocolVersion")
                            .asText())
                    .isEqualTo("1.0");
            assertThat(c.call(3, "initialize", null).path("protocolVersion").asText())
                    .isEqualTo("1.0");
        }
    }

    @Test
    void modelAvailabilityWithoutSystemModelIsModelNotReady() throws Exception {
        try (Conversation c = open()) {
            JsonNode result = c.call(1, "model/availability", null);
            assertThat(result.path("available").asBoolean(true)).isFalse();
            assertThat(result.path("reason").asText()).isEqualTo("model_not_ready");
            assertThat(result.path("message").asText()).contains("--model");
            assertThat(result.path("supportedLanguages").isArray()).isTrue();
            assertThat(result.has("variant")).isFalse();
        }
    }

    @Test
    void systemModelSessionsAreCreatedWithAWarningAndTheirTurnsFailModelUnavailable() throws Exception {
        try (Conversation c = open()) {
            JsonNode created = c.call(1, "session/create", "{\"session\":\"sys\"}");
            assertThat(created.path("warnings").toString()).contains("model_not_ready");
            JsonNode error = c.request(2, "session/respond", "{\"session\":\"sys\",\"prompt\":\"hi\"}")
                    .error(2);
            assertThat(error.path("code").asInt()).isEqualTo(-32001);
            assertThat(code(error)).isEqualTo("model_unavailable");
        }
    }

    @Test
    void pingAnswersEmptyObject() throws Exception {
        try (Conversation c = open()) {
            assertThat(c.call("p", "ping", "{}")).isEqualTo(Json.object());
        }
    }

    // ---------------------------------------------------------------- session/create

    @Test
    void generatedSessionIdsCountOnlyGeneratedIds() throws Exception {
        try (Conversation c = open()) {
            assertThat(c.call(1, "session/create", "{\"model\":\"scripted\"}")
                            .path("session")
                            .asText())
                    .isEqualTo("s1");
            assertThat(c.call(2, "session/create", "{\"session\":\"s3\",\"model\":\"scripted\"}")
                            .path("session")
                            .asText())
                    .isEqualTo("s3");
            assertThat(c.call(3, "session/create", "{\"session\":\"guard\",\"model\":\"scripted\"}")
                            .path("session")
                            .asText())
                    .isEqualTo("guard");
            assertThat(c.call(4, "session/create", "{\"model\":\"scripted\"}")
                            .path("session")
                            .asText())
                    .isEqualTo("s2");
            assertThat(c.call(5, "session/create", "{\"model\":\"scripted\"}")
                            .path("session")
                            .asText())
                    .isEqualTo("s4");
        }
    }

    @Test
    void duplicateSessionIdsAreRejected() throws Exception {
        try (Conversation c = open()) {
            c.call(1, "session/create", "{\"session\":\"a\",\"model\":\"scripted\"}");
            JsonNode error = c.request(2, "session/create", "{\"session\":\"a\",\"model\":\"scripted\"}")
                    .error(2);
            assertThat(error.path("code").asInt()).isEqualTo(-32021);
            assertThat(code(error)).isEqualTo("session_exists");
            assertThat(error.path("data").path("session").asText()).isEqualTo("a");
        }
    }

    @Test
    void sessionLimitIsEnforced() throws Exception {
        try (Conversation c = open("--max-sessions", "2")) {
            c.call(1, "session/create", "{\"model\":\"scripted\"}");
            c.call(2, "session/create", "{\"model\":\"scripted\"}");
            JsonNode error =
                    c.request(3, "session/create", "{\"model\":\"scripted\"}").error(3);
            assertThat(error.path("code").asInt()).isEqualTo(-32022);
            assertThat(code(error)).isEqualTo("session_limit");
            assertThat(error.path("data").path("limit").asInt()).isEqualTo(2);
            c.call(4, "session/delete", "{\"session\":\"s1\"}");
            assertThat(c.call(5, "session/create", "{\"model\":\"scripted\"}")
                            .path("session")
                            .asText())
                    .isEqualTo("s3");
        }
    }

    @Test
    void theDefaultLimitIs64Sessions() throws Exception {
        try (Conversation c = open()) {
            for (int i = 0; i < 64; i++) {
                c.request(i, "session/create", "{\"model\":\"scripted\"}");
            }
            c.request(64, "session/create", "{\"model\":\"scripted\"}");
            assertThat(c.result(63).path("session").asText()).isEqualTo("s64");
            assertThat(c.error(64).path("data").path("limit").asInt()).isEqualTo(64);
        }
    }

    @Test
    void sessionIdsMustBePrintableAndAtMost128Characters() throws Exception {
        try (Conversation c = open()) {
            for (String bad : List.of("\"\"", "\"a\\nb\"", "\"" + "x".repeat(129) + "\"", "\"tab\\there\"")) {
                String id = "bad-" + bad.length();
                JsonNode error = c.request(id, "session/create", "{\"session\":" + bad + ",\"model\":\"scripted\"}")
                        .error(id);
                assertThat(error.path("message").asText()).as(bad).contains("'session'");
            }
            assertThat(c.call(1, "session/create", "{\"session\":\"" + "y".repeat(128) + "\",\"model\":\"scripted\"}")
                            .path("session")
                            .asText())
                    .hasSize(128);
            assertThat(c.call(2, "session/create", "{\"session\":\"Gorm the Smith (äö) 🗡\",\"model\":\"scripted\"}")
                            .path("session")
                            .asText())
                    .isEqualTo("Gorm the Smith (äö) 🗡");
        }
    }

    @Test
    void everyOptionIsValidatedWithItsName() throws Exception {
        try (Conversation c = open()) {
            String[][] cases = {
                {"toolChoice", "\"sometimes\""},
                {"toolChoice", "{\"tool\":5}"},
                {"toolChoice", "{\"name\":\"x\"}"},
                {"maxToolRounds", "-1"},
                {"maxToolRounds", "1.5"},
                {"maxToolCalls", "\"3\""},
                {"enabledTools", "[1]"},
                {"enabledTools", "\"open_gate\""},
                {"temperature", "-0.1"},
                {"maxResponseTokens", "0"},
                {"sampling", "\"random\""},
                {"sampling", "{\"topK\":0}"},
                {"sampling", "{\"topP\":1.5}"},
                {"sampling", "{\"topK\":3,\"topP\":0.5}"},
                {"toolTimeoutSeconds", "86401"},
                {"toolTimeoutSeconds", "-1"},
                {"toolTimeoutSeconds", "\"10\""},
                {"trimHistory", "\"yes\""},
                {"reservedResponseTokens", "-5"},
                {"maxAttempts", "0"},
            };
            int id = 0;
            for (String[] bad : cases) {
                id++;
                JsonNode error = c.request(
                                id,
                                "session/create",
                                "{\"model\":\"scripted\",\"options\":{\"" + bad[0] + "\":" + bad[1] + "}}")
                        .error(id);
                assertThat(error.path("code").asInt()).as(bad[0] + "=" + bad[1]).isEqualTo(-32602);
                assertThat(error.path("message").asText())
                        .as(bad[0] + "=" + bad[1])
                        .contains("'options." + bad[0]);
            }
            JsonNode seconds = c.request(
                            99, "session/create", "{\"model\":\"scripted\",\"options\":{\"toolTimeoutSeconds\":1e9}}")
                    .error(99);
            assertThat(seconds.path("message").asText())
                    .contains("must be a number of seconds from 0 to 86400 (0 means no limit)");
            JsonNode ok = c.call(
                    100,
                    "session/create",
                    "{\"model\":\"scripted\",\"tools\":[" + GATE_TOOL + "],\"options\":{"
                            + "\"toolChoice\":{\"tool\":\"open_gate\"},\"maxToolRounds\":0,\"maxToolCalls\":0,\"enabledTools\":[\"open_gate\"],"
                            + "\"temperature\":0,\"maxResponseTokens\":1,\"sampling\":{\"topP\":0.9,\"seed\":7},\"toolTimeoutSeconds\":86400,"
                            + "\"trimHistory\":false,\"reservedResponseTokens\":0,\"maxAttempts\":1}}");
            assertThat(ok.path("warnings")).isEmpty();
            c.call(
                    101,
                    "session/create",
                    "{\"model\":\"scripted\",\"options\":{\"sampling\":\"greedy\",\"toolTimeoutSeconds\":0}}");
            c.call(102, "session/create", "{\"model\":\"scripted\",\"options\":{\"sampling\":{\"topK\":40}}}");
        }
    }

    @Test
    void toolDefinitionsAreValidated() throws Exception {
        try (Conversation c = open()) {
            String[][] cases = {
                {"[{\"description\":\"x\"}]", "'tools[0].name'"},
                {"[{\"name\":\"bad name\"}]", "'tools[0].name'"},
                {"[{\"name\":\"" + "n".repeat(65) + "\"}]", "'tools[0].name'"},
                {"[" + GATE_TOOL + "," + GATE_TOOL + "]", "'tools[1].name'"},
                {"[{\"name\":\"respond_directly\",\"description\":\"x\"}]", "respond_directly"},
                {"[{\"name\":\"a\",\"description\":\"x\",\"execution\":\"local\"}]", "'tools[0].execution'"},
                {"[{\"name\":\"a\",\"description\":\"x\",\"timeoutSeconds\":86401}]", "'tools[0].timeoutSeconds'"},
                {"[{\"name\":\"a\",\"description\":\"x\",\"timeoutSeconds\":-1}]", "'tools[0].timeoutSeconds'"},
                {"[{\"name\":\"a\",\"description\":\"x\",\"parameters\":\"none\"}]", "'tools[0].parameters'"},
                {"[\"open_gate\"]", "'tools[0]'"},
            };
            int id = 0;
            for (String[] bad : cases) {
                id++;
                JsonNode error = c.request(id, "session/create", "{\"model\":\"scripted\",\"tools\":" + bad[0] + "}")
                        .error(id);
                assertThat(error.path("code").asInt()).as(bad[0]).isEqualTo(-32602);
                assertThat(error.path("message").asText()).as(bad[0]).contains(bad[1]);
            }
            JsonNode wrapped = c.call(
                    50,
                    "session/create",
                    "{\"session\":\"w\",\"model\":\"scripted\",\"tools\":[{\"type\":\"function\","
                            + "\"function\":{\"name\":\"open.gate-2_x\",\"description\":\"Opens.\",\"parameters\":{\"type\":\"object\"}}}]}");
            assertThat(wrapped.path("warnings")).isEmpty();
            JsonNode list = c.call(51, "session/list", null);
            assertThat(list.path("sessions").get(0).path("tools").toString()).isEqualTo("[\"open.gate-2_x\"]");
        }
    }

    @Test
    void warningsNameMissingDescriptionsAndTooManyTools() throws Exception {
        try (Conversation c = open()) {
            StringBuilder tools = new StringBuilder("[{\"name\":\"wave\"}");
            for (int i = 1; i < 6; i++) {
                tools.append(",{\"name\":\"tool")
                        .append(i)
                        .append("\",\"description\":\"Tool ")
                        .append(i)
                        .append(".\"}");
            }
            tools.append("]");
            JsonNode created = c.call(1, "session/create", "{\"model\":\"scripted\",\"tools\":" + tools + "}");
            String warnings = created.path("warnings").toString();
            assertThat(warnings).contains("wave:").contains("description").contains("6 tools");
            JsonNode five = c.call(2, "session/create", "{\"model\":\"scripted\",\"tools\":[" + GATE_TOOL + "]}");
            assertThat(five.path("warnings")).isEmpty();
        }
    }

    @Test
    void scriptedModelsCanBeDisabledByTheHost() throws Exception {
        try (Conversation c = open("--no-scripted-models")) {
            JsonNode error =
                    c.request(1, "session/create", "{\"model\":\"scripted\"}").error(1);
            assertThat(error.path("code").asInt()).isEqualTo(-32602);
            assertThat(error.path("message").asText()).contains("scripted");
            JsonNode caps = c.call(2, "initialize", null).path("capabilities");
            assertThat(caps.path("models").toString()).doesNotContain("scripted");
        }
    }

    @Test
    void badScriptsAndModelsAreInvalidParams() throws Exception {
        try (Conversation c = open()) {
            String[][] cases = {
                {scripted("[{\"chunks\":2}]"), "'model.steps[0]'"},
                {scripted("[{\"text\":\"a\",\"chunks\":0}]"), "'model.steps[0].chunks'"},
                {scripted("[{\"error\":\"session_not_found\"}]"), "'model.steps[0].error'"},
                {scripted("[{\"toolCalls\":[{\"arguments\":{}}]}]"), "'model.steps[0].toolCalls[0].name'"},
                {scripted("[{\"text\":\"a\",\"delayMs\":-1}]"), "'model.steps[0].delayMs'"},
                {"{\"type\":\"scripted\",\"steps\":{}}", "'model.steps'"},
                {"{\"type\":\"quantum\"}", "'model.type'"},
                {"\"gpt\"", "'model'"},
            };
            int id = 0;
            for (String[] bad : cases) {
                id++;
                JsonNode error = c.request(id, "session/create", "{\"model\":" + bad[0] + "}")
                        .error(id);
                assertThat(error.path("code").asInt()).as(bad[0]).isEqualTo(-32602);
                assertThat(error.path("message").asText()).as(bad[0]).contains(bad[1]);
            }
        }
    }

    // ---------------------------------------------------------------- turns

    @Test
    void aPlainTurnAnswersWithTextUsageAndSteps() throws Exception {
        try (Conversation c = open()) {
            create(c, "g", "[]", "{}", "[{\"text\":\"Hmph.\"}]");
            JsonNode turn = c.call(2, "session/respond", "{\"session\":\"g\",\"prompt\":\"Hello\"}");
            assertThat(turn.path("session").asText()).isEqualTo("g");
            assertThat(turn.path("text").asText()).isEqualTo("Hmph.");
            assertThat(turn.path("toolCalls")).isEmpty();
            assertThat(turn.path("usage").path("totalTokens").asInt())
                    .isEqualTo(turn.path("usage").path("inputTokens").asInt()
                            + turn.path("usage").path("outputTokens").asInt());
            assertThat(turn.path("usage").has("cachedInputTokens")).isTrue();
            assertThat(turn.path("steps")).hasSize(1);
            assertThat(turn.path("steps").get(0).path("toolCallingMode").asText())
                    .isEqualTo("disallowed");
            assertThat(turn.path("steps").get(0).path("enabledTools")).isEmpty();
            List<String> keys = new ArrayList<>();
            turn.fieldNames().forEachRemaining(keys::add);
            assertThat(keys).containsExactly("session", "text", "toolCalls", "usage", "steps");
            assertThat(c.messages().stream().filter(m -> Conversation.isEvent(m, "session/event")))
                    .isEmpty();
        }
    }

    @Test
    void respondValidatesItsParams() throws Exception {
        try (Conversation c = open()) {
            create(c, "g", "[]", "{}", "[]");
            JsonNode missing =
                    c.request(1, "session/respond", "{\"session\":\"g\"}").error(1);
            assertThat(missing.path("message").asText()).contains("'prompt'");
            JsonNode unknown = c.request(2, "session/respond", "{\"session\":\"nope\",\"prompt\":\"x\"}")
                    .error(2);
            assertThat(unknown.path("code").asInt()).isEqualTo(-32020);
            assertThat(unknown.path("data").path("session").asText()).isEqualTo("nope");
            assertThat(c.request(3, "session/respond", "{\"session\":\"g\",\"prompt\":\"x\",\"stream\":\"yes\"}")
                            .error(3)
                            .path("message")
                            .asText())
                    .contains("'stream'");
            assertThat(c.request(4, "session/respond", "{\"session\":\"g\",\"prompt\":\"x\",\"toolChoice\":\"always\"}")
                            .error(4)
                            .path("message")
                            .asText())
                    .contains("'toolChoice'");
            assertThat(c.call(5, "session/respond", "{\"session\":\"g\",\"prompt\":\"\"}")
                            .path("text")
                            .asText())
                    .isEqualTo("(script exhausted)");
        }
    }

    @Test
    void streamingSendsEventsBeforeTheResponseAndDeltasAddUp() throws Exception {
        try (Conversation c = open()) {
            create(c, "g", "[]", "{}", "[{\"text\":\"The north gate remains shut today.\",\"chunks\":4}]");
            c.request(7, "session/respond", "{\"session\":\"g\",\"prompt\":\"Hello\",\"stream\":true}");
            JsonNode turn = c.result(7);
            List<JsonNode> events = c.events(7);
            assertThat(events.get(0).path("type").asText()).isEqualTo("modelStep");
            List<JsonNode> texts = events.stream()
                    .filter(e -> e.path("type").asText().equals("text"))
                    .toList();
            assertThat(texts.size()).isGreaterThanOrEqualTo(3);
            StringBuilder whole = new StringBuilder();
            for (JsonNode text : texts) {
                whole.append(text.path("delta").asText());
                assertThat(text.path("text").asText()).isEqualTo(whole.toString());
                assertThat(text.path("isReset").asBoolean(true)).isFalse();
            }
            assertThat(whole.toString()).isEqualTo(turn.path("text").asText());
            int response = c.indexOf(c.response(7));
            for (JsonNode m : c.messages()) {
                if (Conversation.isEvent(m, "session/event")) {
                    assertThat(c.indexOf(m)).isLessThan(response);
                    assertThat(m.path("params").path("session").asText()).isEqualTo("g");
                }
            }
        }
    }

    @Test
    void eventRequestIdsUsePlainDigits() throws Exception {
        try (Conversation c = open()) {
            create(c, "g", "[]", "{}", "[{\"text\":\"ok\"}]");
            c.send(
                    "{\"jsonrpc\":\"2.0\",\"id\":3.0,\"method\":\"session/respond\",\"params\":{\"session\":\"g\",\"prompt\":\"x\",\"stream\":true}}");
            c.result(3);
            JsonNode event = c.await(m -> Conversation.isEvent(m, "session/event"), "event");
            assertThat(Json.write(event.path("params").path("requestId"))).isEqualTo("3");
        }
    }

    @Test
    void forcedToolAppliesToFirstStepOnly() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "guard",
                    "[" + GATE_TOOL + "]",
                    "{\"toolChoice\":\"required\"}",
                    "[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"north\"}}]},{\"template\":\"Gate says: {toolOutput}\"}]");
            c.request(
                    3,
                    "session/respond",
                    "{\"session\":\"guard\",\"prompt\":\"Please open the north gate.\",\"stream\":true}");
            JsonNode call = c.toolCall();
            assertThat(call.path("id").asText()).isEqualTo("t-1");
            assertThat(call.path("params").path("session").asText()).isEqualTo("guard");
            assertThat(Json.write(call.path("params").path("requestId"))).isEqualTo("3");
            assertThat(call.path("params").path("call").path("name").asText()).isEqualTo("open_gate");
            assertThat(call.path("params").path("call").path("id").asText()).startsWith("call_");
            assertThat(call.path("params").path("call").path("arguments").toString())
                    .isEqualTo("{\"gate\":\"north\"}");
            c.reply(call, "{\"output\":{\"opened\":false,\"reason\":\"the portcullis chain is jammed\"}}");
            JsonNode turn = c.result(3);
            assertThat(turn.path("text").asText())
                    .isEqualTo("Gate says: {\"opened\":false,\"reason\":\"the portcullis chain is jammed\"}");
            assertThat(turn.path("steps").get(0).path("toolCallingMode").asText())
                    .isEqualTo("required");
            assertThat(turn.path("steps").get(0).path("enabledTools").toString())
                    .isEqualTo("[\"open_gate\"]");
            assertThat(turn.path("steps").get(1).path("toolCallingMode").asText())
                    .isEqualTo("allowed");
            assertThat(turn.path("steps").get(1).path("completedToolRounds").asInt())
                    .isEqualTo(1);
            JsonNode record = turn.path("toolCalls").get(0);
            assertThat(record.path("output").path("opened").asBoolean(true)).isFalse();
            assertThat(record.path("isError").asBoolean(true)).isFalse();
            assertThat(record.path("durationSeconds").isNumber()).isTrue();
            List<String> types =
                    c.events(3).stream().map(e -> e.path("type").asText()).toList();
            assertThat(types)
                    .containsSubsequence("modelStep", "toolCallStarted", "toolCallCompleted", "modelStep", "text");
            JsonNode started = c.events(3).stream()
                    .filter(e -> e.path("type").asText().equals("toolCallStarted"))
                    .findFirst()
                    .orElseThrow();
            assertThat(started.path("execution").asText()).isEqualTo("client");
            assertThat(c.indexOf(c.response(3))).isGreaterThan(c.indexOf(call));
            JsonNode list = c.call(4, "session/list", null).path("sessions").get(0);
            assertThat(list.path("entries").asInt()).isEqualTo(4);
        }
    }

    @Test
    void toolCallsAreSentWithoutStreamingToo() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "g",
                    "[" + GATE_TOOL + "]",
                    "{}",
                    "[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"n\"},\"id\":\"call_fixed\"}]},{\"text\":\"done\"}]");
            c.request(2, "session/respond", "{\"session\":\"g\",\"prompt\":\"x\"}");
            JsonNode call = c.toolCall();
            assertThat(call.path("params").path("call").path("id").asText()).isEqualTo("call_fixed");
            c.reply(call, "{\"output\":\"ok\"}");
            assertThat(c.result(2)
                            .path("toolCalls")
                            .get(0)
                            .path("call")
                            .path("id")
                            .asText())
                    .isEqualTo("call_fixed");
            assertThat(c.messages().stream().filter(m -> Conversation.isEvent(m, "session/event")))
                    .isEmpty();
        }
    }

    @Test
    void everyToolReplyFormReachesTheModelAsSpecified() throws Exception {
        try (Conversation c = open()) {
            String[][] cases = {
                {"{\"result\":{\"output\":\"The gate opened.\"}}", "The gate opened.", "\"The gate opened.\"", "false"},
                {"{\"result\":{\"output\":{\"opened\":true}}}", "{\"opened\":true}", "{\"opened\":true}", "false"},
                {
                    "{\"result\":{\"output\":\"Chain jammed.\",\"isError\":true}}",
                    "Error: Chain jammed.",
                    "\"Chain jammed.\"",
                    "true"
                },
                {
                    "{\"error\":{\"code\":-32000,\"message\":\"Gate subsystem offline\"}}",
                    "Error: Gate subsystem offline",
                    "\"Gate subsystem offline\"",
                    "true"
                },
                {"{\"result\":{\"opened\":true}}", "{\"opened\":true}", "{\"opened\":true}", "false"},
            };
            int n = 0;
            for (String[] form : cases) {
                n++;
                String session = "form" + n;
                create(
                        c,
                        session,
                        "[" + GATE_TOOL + "]",
                        "{\"toolChoice\":\"required\"}",
                        "[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"n\"}}]},{\"template\":\"{toolOutput}\"}]");
                c.request(session, "session/respond", "{\"session\":\"" + session + "\",\"prompt\":\"x\"}");
                JsonNode call = c.toolCall();
                c.send("{\"jsonrpc\":\"2.0\",\"id\":\"" + call.path("id").asText() + "\"," + form[0].substring(1));
                JsonNode turn = c.result(session);
                assertThat(turn.path("text").asText()).as(form[0]).isEqualTo(form[1]);
                JsonNode record = turn.path("toolCalls").get(0);
                assertThat(Json.write(record.path("output"))).as(form[0]).isEqualTo(form[2]);
                assertThat(record.path("isError").toString()).as(form[0]).isEqualTo(form[3]);
            }
        }
    }

    @Test
    void parallelCallsAreSentBackToBackAndRecordedInCompletionOrder() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "p",
                    "[" + GATE_TOOL + "," + BELL_TOOL + "]",
                    "{}",
                    "[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"a\"}},{\"name\":\"ring_bell\"}]},"
                            + "{\"template\":\"{toolOutputs}\"}]");
            c.request(2, "session/respond", "{\"session\":\"p\",\"prompt\":\"x\",\"stream\":true}");
            JsonNode first = c.toolCall();
            JsonNode second = c.toolCall();
            assertThat(c.indexOf(second)).isEqualTo(c.indexOf(first) + 1);
            assertThat(first.path("params").path("call").path("name").asText()).isEqualTo("open_gate");
            assertThat(second.path("params").path("call").path("name").asText()).isEqualTo("ring_bell");
            c.reply(second, "{\"output\":\"ding\"}");
            c.await(
                    m -> Conversation.isEvent(m, "session/event")
                            && m.path("params")
                                    .path("event")
                                    .path("type")
                                    .asText()
                                    .equals("toolCallCompleted"),
                    "first completion");
            c.reply(first, "{\"output\":\"opened\"}");
            JsonNode turn = c.result(2);
            assertThat(turn.path("toolCalls").get(0).path("call").path("name").asText())
                    .isEqualTo("ring_bell");
            assertThat(turn.path("toolCalls").get(1).path("call").path("name").asText())
                    .isEqualTo("open_gate");
            assertThat(turn.path("text").asText()).isEqualTo("ding\nopened");
        }
    }

    @Test
    void explicitChoiceHidesRespondDirectly() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "e",
                    "[" + GATE_TOOL + "]",
                    "{\"toolChoice\":\"explicit\"}",
                    "[{\"toolCalls\":[{\"name\":\"respond_directly\"}]},{\"text\":\"No need.\"}]");
            c.request(2, "session/respond", "{\"session\":\"e\",\"prompt\":\"hi\",\"stream\":true}");
            JsonNode turn = c.result(2);
            assertThat(turn.path("text").asText()).isEqualTo("No need.");
            assertThat(turn.path("toolCalls")).isEmpty();
            assertThat(turn.path("steps").get(0).path("toolCallingMode").asText())
                    .isEqualTo("required");
            assertThat(turn.path("steps").get(0).path("enabledTools").toString())
                    .isEqualTo("[\"open_gate\"]");
            assertThat(turn.path("steps").get(1).path("toolCallingMode").asText())
                    .isEqualTo("disallowed");
            assertThat(turn.path("steps").get(1).path("enabledTools")).isEmpty();
            assertThat(c.messages().toString()).doesNotContain("respond_directly");
            assertThat(c.call(3, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("entries")
                            .asInt())
                    .isEqualTo(2);
        }
    }

    @Test
    void namedToolChoiceEnablesOnlyThatToolAndIsCheckedWhenTheTurnStarts() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "n",
                    "[" + GATE_TOOL + "]",
                    "{}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"text\":\"rang\"}]");
            JsonNode error = c.request(
                            2,
                            "session/respond",
                            "{\"session\":\"n\",\"prompt\":\"x\",\"toolChoice\":{\"tool\":\"ring_bell\"}}")
                    .error(2);
            assertThat(error.path("code").asInt()).isEqualTo(-32602);
            c.request(3, "session/setTools", "{\"session\":\"n\",\"tools\":[" + GATE_TOOL + "," + BELL_TOOL + "]}");
            c.request(
                    4,
                    "session/respond",
                    "{\"session\":\"n\",\"prompt\":\"x\",\"toolChoice\":{\"tool\":\"ring_bell\"}}");
            JsonNode call = c.toolCall();
            c.reply(call, "{\"output\":\"ding\"}");
            JsonNode turn = c.result(4);
            assertThat(turn.path("steps").get(0).path("enabledTools").toString())
                    .isEqualTo("[\"ring_bell\"]");
            assertThat(turn.path("steps").get(0).path("toolCallingMode").asText())
                    .isEqualTo("required");
            assertThat(turn.path("steps").get(1).path("enabledTools").toString())
                    .isEqualTo("[\"open_gate\",\"ring_bell\"]");
        }
    }

    @Test
    void noneAndDisabledToolsAreHiddenFromTheModel() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "n",
                    "[" + GATE_TOOL + "," + BELL_TOOL + "]",
                    "{\"enabledTools\":[\"ring_bell\"]}",
                    "[{\"text\":\"a\"},{\"text\":\"b\"},{\"text\":\"c\"}]");
            JsonNode first = c.call(2, "session/respond", "{\"session\":\"n\",\"prompt\":\"x\"}");
            assertThat(first.path("steps").get(0).path("enabledTools").toString())
                    .isEqualTo("[\"ring_bell\"]");
            assertThat(first.path("steps").get(0).path("toolCallingMode").asText())
                    .isEqualTo("allowed");
            JsonNode none =
                    c.call(3, "session/respond", "{\"session\":\"n\",\"prompt\":\"x\",\"toolChoice\":\"none\"}");
            assertThat(none.path("steps").get(0).path("toolCallingMode").asText())
                    .isEqualTo("disallowed");
            assertThat(none.path("steps").get(0).path("enabledTools")).isEmpty();
            JsonNode override = c.call(
                    4, "session/respond", "{\"session\":\"n\",\"prompt\":\"x\",\"enabledTools\":[\"open_gate\"]}");
            assertThat(override.path("steps").get(0).path("enabledTools").toString())
                    .isEqualTo("[\"open_gate\"]");
        }
    }

    @Test
    void disabledToolsCannotBeCalled() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "d",
                    "[" + GATE_TOOL + "," + BELL_TOOL + "]",
                    "{\"enabledTools\":[\"ring_bell\"]}",
                    "[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"x\"}}]},{\"template\":\"{toolOutput}\"}]");
            JsonNode turn = c.call(2, "session/respond", "{\"session\":\"d\",\"prompt\":\"x\"}");
            assertThat(turn.path("toolCalls").get(0).path("isError").asBoolean())
                    .isTrue();
            assertThat(turn.path("text").asText()).startsWith("Error: Tool 'open_gate' is not available");
            assertThat(c.messages().stream()
                            .filter(m -> "tool/call".equals(m.path("method").asText())))
                    .isEmpty();
        }
    }

    @Test
    void maxToolCallsGivesExtraCallsAnErrorOutput() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "m",
                    "[" + BELL_TOOL + "]",
                    "{\"maxToolCalls\":1}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"},{\"name\":\"ring_bell\"}]},{\"template\":\"{toolOutputs}\"}]");
            c.request(2, "session/respond", "{\"session\":\"m\",\"prompt\":\"x\"}");
            c.reply(c.toolCall(), "{\"output\":\"ding\"}");
            JsonNode turn = c.result(2);
            assertThat(turn.path("toolCalls")).hasSize(2);
            JsonNode extra = turn.path("toolCalls").get(0);
            assertThat(extra.path("isError").asBoolean()).isTrue();
            assertThat(extra.path("output").asText()).contains("maxToolCalls");
            assertThat(turn.path("steps").get(1).path("toolCallingMode").asText())
                    .isEqualTo("disallowed");
            assertThat(c.messages().stream()
                            .filter(m -> "tool/call".equals(m.path("method").asText())))
                    .hasSize(1);
        }
    }

    @Test
    void maxToolRoundsDisablesToolsAfterwards() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "r",
                    "[" + BELL_TOOL + "]",
                    "{\"maxToolRounds\":1}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"text\":\"done\"}]");
            c.request(2, "session/respond", "{\"session\":\"r\",\"prompt\":\"x\"}");
            c.reply(c.toolCall(), "{\"output\":\"ding\"}");
            JsonNode turn = c.result(2);
            assertThat(turn.path("steps").get(1).path("toolCallingMode").asText())
                    .isEqualTo("disallowed");
            JsonNode zero = c.call(3, "session/respond", "{\"session\":\"r\",\"prompt\":\"x\",\"maxToolRounds\":0}");
            assertThat(zero.path("steps").get(0).path("toolCallingMode").asText())
                    .isEqualTo("disallowed");
        }
    }

    @Test
    void aToolTimeoutSendsToolCancelAndTheModelSeesAnError() throws Exception {
        try (Conversation c = open()) {
            String tool = "{\"name\":\"open_gate\",\"description\":\"Open.\",\"timeoutSeconds\":0.2}";
            create(
                    c,
                    "t",
                    "[" + tool + "]",
                    "{}",
                    "[{\"toolCalls\":[{\"name\":\"open_gate\",\"id\":\"call_1\"}]},{\"template\":\"{toolOutput}\"}]");
            c.request(2, "session/respond", "{\"session\":\"t\",\"prompt\":\"x\"}");
            JsonNode call = c.toolCall();
            JsonNode cancel = c.await(m -> Conversation.isEvent(m, "tool/cancel"), "tool/cancel");
            assertThat(cancel.path("params").path("id").asText())
                    .isEqualTo(call.path("id").asText());
            assertThat(cancel.path("params").path("callId").asText()).isEqualTo("call_1");
            assertThat(cancel.path("params").path("session").asText()).isEqualTo("t");
            assertThat(Json.write(cancel.path("params").path("requestId"))).isEqualTo("2");
            assertThat(cancel.path("params").path("reason").asText())
                    .isEqualTo("Error: Tool 'open_gate' timed out after 0.2s.");
            JsonNode turn = c.result(2);
            assertThat(turn.path("text").asText()).isEqualTo("Error: Tool 'open_gate' timed out after 0.2s.");
            assertThat(turn.path("toolCalls").get(0).path("isError").asBoolean())
                    .isTrue();
            c.reply(call, "{\"output\":\"too late\"}");
            assertThat(c.sync()).isEmpty();
        }
    }

    @Test
    void theSessionToolTimeoutAppliesWhenTheToolHasNone() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "t",
                    "[" + BELL_TOOL + "]",
                    "{\"toolTimeoutSeconds\":0.1}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"template\":\"{toolOutput}\"}]");
            c.request(2, "session/respond", "{\"session\":\"t\",\"prompt\":\"x\"}");
            assertThat(c.result(2).path("text").asText()).isEqualTo("Error: Tool 'ring_bell' timed out after 0.1s.");
        }
    }

    @Test
    void theHostToolTimeoutFlagSetsTheDefault() throws Exception {
        try (Conversation c = open("--tool-timeout", "0.1")) {
            create(
                    c,
                    "t",
                    "[" + BELL_TOOL + "]",
                    "{}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"template\":\"{toolOutput}\"}]");
            c.request(2, "session/respond", "{\"session\":\"t\",\"prompt\":\"x\"}");
            assertThat(c.result(2).path("text").asText()).isEqualTo("Error: Tool 'ring_bell' timed out after 0.1s.");
        }
    }

    @Test
    void cancelWhileAToolCallIsOutstandingLeavesNoTrace() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "c",
                    "[" + GATE_TOOL + "]",
                    "{\"toolChoice\":\"required\"}",
                    "[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"n\"}}]},{\"text\":\"after\"}]");
            c.request(2, "session/respond", "{\"session\":\"c\",\"prompt\":\"x\"}");
            JsonNode call = c.toolCall();
            JsonNode cancelled = c.call(3, "session/cancel", "{\"session\":\"c\"}");
            assertThat(cancelled.path("cancelled").asInt()).isEqualTo(1);
            JsonNode error = c.error(2);
            assertThat(error.path("code").asInt()).isEqualTo(-32009);
            assertThat(code(error)).isEqualTo("cancelled");
            JsonNode toolCancel = c.await(m -> Conversation.isEvent(m, "tool/cancel"), "tool/cancel");
            assertThat(toolCancel.path("params").path("id").asText())
                    .isEqualTo(call.path("id").asText());
            assertThat(c.indexOf(toolCancel)).isLessThan(c.indexOf(c.response(2)));
            c.reply(call, "{\"output\":\"late\"}");
            JsonNode list = c.call(4, "session/list", null).path("sessions").get(0);
            assertThat(list.path("entries").asInt()).isEqualTo(0);
            assertThat(list.path("busy").asBoolean()).isFalse();
            assertThat(c.call(5, "session/respond", "{\"session\":\"c\",\"prompt\":\"y\",\"toolChoice\":\"none\"}")
                            .path("text")
                            .asText())
                    .isEqualTo("after");
        }
    }

    @Test
    void cancelAsANotificationCancelsWithoutAnAnswer() throws Exception {
        try (Conversation c = open()) {
            create(c, "c", "[]", "{}", "[{\"text\":\"slow\",\"delayMs\":60000}]");
            c.request(2, "session/respond", "{\"session\":\"c\",\"prompt\":\"x\"}");
            c.await(m -> true, "anything");
            c.notification("session/cancel", "{\"session\":\"c\"}");
            assertThat(c.error(2).path("code").asInt()).isEqualTo(-32009);
            List<JsonNode> rest = c.sync();
            assertThat(rest).isEmpty();
        }
    }

    @Test
    void cancelCountsTheRunningAndEveryQueuedOperationAndAnswersQueuedOnesAtOnce() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "q",
                    "[" + BELL_TOOL + "]",
                    "{}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"text\":\"x\"}]");
            c.request(2, "session/respond", "{\"session\":\"q\",\"prompt\":\"one\"}");
            JsonNode call = c.toolCall();
            c.request(3, "session/respond", "{\"session\":\"q\",\"prompt\":\"two\"}");
            c.request(4, "session/setInstructions", "{\"session\":\"q\",\"instructions\":\"new\"}");
            c.request(5, "session/reset", "{\"session\":\"q\"}");
            JsonNode pending = c.call(6, "session/list", null).path("sessions").get(0);
            assertThat(pending.path("busy").asBoolean()).isTrue();
            assertThat(pending.path("pendingOperations").asInt()).isEqualTo(3);
            JsonNode cancelled = c.call(7, "session/cancel", "{\"session\":\"q\"}");
            assertThat(cancelled.path("cancelled").asInt()).isEqualTo(4);
            for (int id = 2; id <= 5; id++) {
                assertThat(c.error(id).path("code").asInt()).as("id %d", id).isEqualTo(-32009);
            }
            for (int id = 3; id <= 5; id++) {
                assertThat(c.indexOf(c.response(id)))
                        .as("queued id %d answered before the cancel response", id)
                        .isLessThan(c.indexOf(c.response(7)));
            }
            c.reply(call, "{\"output\":\"late\"}");
            JsonNode after = c.call(8, "session/list", null).path("sessions").get(0);
            assertThat(after.has("instructions")).isFalse();
            assertThat(c.call(9, "session/cancel", "{\"session\":\"q\"}")
                            .path("cancelled")
                            .asInt())
                    .isEqualTo(0);
        }
    }

    @Test
    void perSessionOperationsRunInArrivalOrder() throws Exception {
        try (Conversation c = open()) {
            create(c, "o", "[]", "{}", "[{\"text\":\"first\",\"delayMs\":50},{\"template\":\"second {prompt}\"}]");
            c.request(2, "session/respond", "{\"session\":\"o\",\"prompt\":\"a\"}");
            c.request(3, "session/setInstructions", "{\"session\":\"o\",\"instructions\":\"Be brief.\"}");
            c.request(4, "session/setContextNote", "{\"session\":\"o\",\"note\":\"It rains.\"}");
            c.request(5, "session/respond", "{\"session\":\"o\",\"prompt\":\"b\"}");
            c.request(6, "session/reset", "{\"session\":\"o\"}");
            c.request(7, "session/list", null);
            JsonNode list = c.result(7).path("sessions").get(0);
            assertThat(list.path("busy").asBoolean()
                            || list.path("pendingOperations").asInt() > 0)
                    .isTrue();
            assertThat(c.result(5).path("text").asText()).isEqualTo("second b");
            c.result(6);
            List<Integer> order = new ArrayList<>();
            for (JsonNode m : c.messages()) {
                if (Conversation.isResponse(m)
                        && m.get("id").isInt()
                        && m.get("id").asInt() >= 2
                        && m.get("id").asInt() <= 6) {
                    order.add(m.get("id").asInt());
                }
            }
            assertThat(order).containsExactly(2, 3, 4, 5, 6);
            JsonNode after = c.call(8, "session/list", null).path("sessions").get(0);
            assertThat(after.path("entries").asInt()).isEqualTo(0);
            assertThat(after.path("instructions").asText()).isEqualTo("Be brief.");
        }
    }

    @Test
    void longTurnsDoNotBlockOtherSessionsOrRequests() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "slow",
                    "[" + BELL_TOOL + "]",
                    "{\"toolChoice\":\"required\"}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"text\":\"slow done\"}]");
            create(c, "fast", "[]", "{}", "[{\"text\":\"fast done\"}]");
            c.request(3, "session/respond", "{\"session\":\"slow\",\"prompt\":\"x\"}");
            JsonNode call = c.toolCall();
            assertThat(c.call(4, "session/respond", "{\"session\":\"fast\",\"prompt\":\"x\"}")
                            .path("text")
                            .asText())
                    .isEqualTo("fast done");
            create(c, "later", "[]", "{}", "[{\"text\":\"later done\"}]");
            assertThat(c.call(6, "session/respond", "{\"session\":\"later\",\"prompt\":\"x\"}")
                            .path("text")
                            .asText())
                    .isEqualTo("later done");
            assertThat(c.call(7, "session/list", null).path("sessions")).hasSize(3);
            c.reply(call, "{\"output\":\"ding\"}");
            assertThat(c.result(3).path("text").asText()).isEqualTo("slow done");
        }
    }

    @Test
    void sessionsRunInParallel() throws Exception {
        try (Conversation c = open()) {
            for (int i = 0; i < 4; i++) {
                create(
                        c,
                        "p" + i,
                        "[" + BELL_TOOL + "]",
                        "{\"toolChoice\":\"required\"}",
                        "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"template\":\"{prompt}: {toolOutput}\"}]");
            }
            for (int i = 0; i < 4; i++) {
                c.request(10 + i, "session/respond", "{\"session\":\"p" + i + "\",\"prompt\":\"turn" + i + "\"}");
            }
            List<JsonNode> calls = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                calls.add(c.toolCall());
            }
            for (int i = 3; i >= 0; i--) {
                JsonNode call = calls.get(i);
                c.reply(
                        call,
                        "{\"output\":\"" + call.path("params").path("session").asText() + "\"}");
            }
            for (int i = 0; i < 4; i++) {
                assertThat(c.result(10 + i).path("text").asText()).isEqualTo("turn" + i + ": p" + i);
            }
        }
    }

    @Test
    void pipelinedCreateAndRespondWork() throws Exception {
        try (Conversation c = open()) {
            c.request(
                    1, "session/create", "{\"session\":\"pipe\",\"model\":" + scripted("[{\"text\":\"hello\"}]") + "}");
            c.request(2, "session/respond", "{\"session\":\"pipe\",\"prompt\":\"hi\"}");
            c.request(3, "session/delete", "{\"session\":\"pipe\"}");
            assertThat(c.result(1).path("session").asText()).isEqualTo("pipe");
            c.result(3);
            JsonNode turn = c.response(2);
            assertThat(turn.has("result") || turn.path("error").path("code").asInt() == -32009)
                    .isTrue();
        }
    }

    @Test
    void deleteCancelsAndFreesTheSession() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "d",
                    "[" + BELL_TOOL + "]",
                    "{\"toolChoice\":\"required\"}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]}]");
            c.request(2, "session/respond", "{\"session\":\"d\",\"prompt\":\"x\"}");
            JsonNode call = c.toolCall();
            JsonNode deleted = c.call(3, "session/delete", "{\"session\":\"d\"}");
            assertThat(deleted.path("session").asText()).isEqualTo("d");
            assertThat(deleted.path("deleted").asBoolean()).isTrue();
            assertThat(c.error(2).path("code").asInt()).isEqualTo(-32009);
            JsonNode toolCancel = c.await(m -> Conversation.isEvent(m, "tool/cancel"), "tool/cancel");
            assertThat(toolCancel.path("params").path("id").asText())
                    .isEqualTo(call.path("id").asText());
            assertThat(c.request(4, "session/respond", "{\"session\":\"d\",\"prompt\":\"x\"}")
                            .error(4)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32020);
            assertThat(c.request(5, "session/delete", "{\"session\":\"d\"}")
                            .error(5)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32020);
            assertThat(c.call(6, "session/list", null).path("sessions")).isEmpty();
            create(c, "d", "[]", "{}", "[]");
        }
    }

    @Test
    void resetClearsTheConversationAndNoteButKeepsInstructionsAndTools() throws Exception {
        try (Conversation c = open()) {
            c.call(
                    1,
                    "session/create",
                    "{\"session\":\"r\",\"instructions\":\"Guard.\",\"tools\":[" + BELL_TOOL
                            + "],\"model\":\"scripted\"}");
            c.call(2, "session/setContextNote", "{\"session\":\"r\",\"note\":\"Night.\"}");
            c.call(3, "session/respond", "{\"session\":\"r\",\"prompt\":\"x\"}");
            assertThat(c.call(4, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("entries")
                            .asInt())
                    .isEqualTo(2);
            assertThat(c.call(5, "session/reset", "{\"session\":\"r\"}").toString())
                    .isEqualTo("{\"session\":\"r\"}");
            JsonNode item = c.call(6, "session/list", null).path("sessions").get(0);
            assertThat(item.path("entries").asInt()).isEqualTo(0);
            assertThat(item.path("instructions").asText()).isEqualTo("Guard.");
            assertThat(item.path("tools").toString()).isEqualTo("[\"ring_bell\"]");
        }
    }

    @Test
    void sessionListHasEveryField() throws Exception {
        try (Conversation c = open()) {
            c.call(1, "session/create", "{\"session\":\"b\",\"model\":\"scripted\"}");
            c.call(
                    2,
                    "session/create",
                    "{\"session\":\"a\",\"instructions\":\"Hi.\",\"tools\":[" + GATE_TOOL + "," + BELL_TOOL + "]}");
            JsonNode sessions = c.call(3, "session/list", null).path("sessions");
            assertThat(sessions).hasSize(2);
            JsonNode b = sessions.get(0);
            assertThat(b.path("session").asText()).isEqualTo("b");
            assertThat(b.path("model").asText()).isEqualTo("scripted");
            assertThat(b.has("instructions")).isFalse();
            assertThat(b.path("tools")).isEmpty();
            assertThat(b.path("busy").asBoolean(true)).isFalse();
            assertThat(b.path("pendingOperations").asInt(-1)).isEqualTo(0);
            assertThat(b.path("entries").asInt(-1)).isEqualTo(0);
            assertThat(b.path("createdAt").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
            JsonNode a = sessions.get(1);
            assertThat(a.path("model").asText()).isEqualTo("system");
            assertThat(a.path("instructions").asText()).isEqualTo("Hi.");
            assertThat(a.path("tools").toString()).isEqualTo("[\"open_gate\",\"ring_bell\"]");
        }
    }

    @Test
    void settersAnswerWithTheSessionAndApplyFromTheNextTurn() throws Exception {
        try (Conversation c = open()) {
            c.call(1, "session/create", "{\"session\":\"s\",\"instructions\":\"Old.\",\"model\":\"scripted\"}");
            assertThat(c.call(2, "session/setInstructions", "{\"session\":\"s\",\"instructions\":\"New.\"}")
                            .toString())
                    .isEqualTo("{\"session\":\"s\"}");
            assertThat(c.call(3, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("instructions")
                            .asText())
                    .isEqualTo("New.");
            c.call(4, "session/setInstructions", "{\"session\":\"s\",\"instructions\":null}");
            assertThat(c.call(5, "session/list", null).path("sessions").get(0).has("instructions"))
                    .isFalse();
            assertThat(c.call(6, "session/setContextNote", "{\"session\":\"s\",\"note\":\"The gate is jammed.\"}")
                            .toString())
                    .isEqualTo("{\"session\":\"s\"}");
            JsonNode tools = c.call(7, "session/setTools", "{\"session\":\"s\",\"tools\":[{\"name\":\"wave\"}]}");
            assertThat(tools.path("session").asText()).isEqualTo("s");
            assertThat(tools.path("warnings").toString()).contains("wave:");
            assertThat(c.call(8, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("tools")
                            .toString())
                    .isEqualTo("[\"wave\"]");
            assertThat(c.request(9, "session/setTools", "{\"session\":\"s\"}")
                            .error(9)
                            .path("message")
                            .asText())
                    .contains("'tools'");
            assertThat(c.request(10, "session/setInstructions", "{\"session\":\"s\",\"instructions\":5}")
                            .error(10)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32602);
            assertThat(c.request(11, "session/setContextNote", "{\"session\":\"zz\",\"note\":\"x\"}")
                            .error(11)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32020);
        }
    }

    // ---------------------------------------------------------------- scripted model (§10)

    @Test
    void everyAgentErrorCodeCanBeScripted() throws Exception {
        try (Conversation c = open()) {
            String[] codes = {
                "model_unavailable",
                "guardrail_violation",
                "refusal",
                "context_size_exceeded",
                "rate_limited",
                "unsupported_language",
                "invalid_schema",
                "tool_failed",
                "cancelled",
                "busy",
                "invalid_request",
                "generation_failed"
            };
            int[] numbers = {
                -32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009, -32010, -32011, -32012
            };
            for (int i = 0; i < codes.length; i++) {
                String session = "e" + i;
                c.call(
                        "c" + i,
                        "session/create",
                        "{\"session\":\"" + session + "\",\"options\":{\"maxAttempts\":1},\"model\":"
                                + scripted(
                                        "[{\"error\":\"" + codes[i] + "\",\"message\":\"scripted " + codes[i] + "\"}]")
                                + "}");
                JsonNode error = c.request(
                                "r" + i, "session/respond", "{\"session\":\"" + session + "\",\"prompt\":\"x\"}")
                        .error("r" + i);
                assertThat(error.path("code").asInt()).as(codes[i]).isEqualTo(numbers[i]);
                assertThat(code(error)).isEqualTo(codes[i]);
                assertThat(error.path("message").asText()).isEqualTo("scripted " + codes[i]);
                assertThat(c.call("l" + i, "session/list", null)
                                .path("sessions")
                                .get(i)
                                .path("entries")
                                .asInt())
                        .isEqualTo(0);
            }
        }
    }

    @Test
    void transientFailuresAreRetriedWithinMaxAttempts() throws Exception {
        try (Conversation c = open()) {
            create(c, "r", "[]", "{}", "[{\"error\":\"generation_failed\"},{\"text\":\"recovered\"}]");
            c.request(2, "session/respond", "{\"session\":\"r\",\"prompt\":\"x\",\"stream\":true}");
            JsonNode turn = c.result(2);
            assertThat(turn.path("text").asText()).isEqualTo("recovered");
            assertThat(turn.path("steps")).hasSize(1);
            create(c, "g", "[]", "{}", "[{\"error\":\"guardrail_violation\"},{\"text\":\"not reached\"}]");
            assertThat(c.request(4, "session/respond", "{\"session\":\"g\",\"prompt\":\"x\"}")
                            .error(4)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32002);
            create(c, "once", "[]", "{\"maxAttempts\":1}", "[{\"error\":\"generation_failed\"},{\"text\":\"second\"}]");
            assertThat(c.request(6, "session/respond", "{\"session\":\"once\",\"prompt\":\"x\"}")
                            .error(6)
                            .path("code")
                            .asInt())
                    .isEqualTo(-32012);
        }
    }

    @Test
    void retriesNeverHappenAfterAToolRan() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "t",
                    "[" + BELL_TOOL + "]",
                    "{\"maxAttempts\":3}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"error\":\"generation_failed\"},{\"text\":\"never\"}]");
            c.request(2, "session/respond", "{\"session\":\"t\",\"prompt\":\"x\"}");
            c.reply(c.toolCall(), "{\"output\":\"ding\"}");
            assertThat(c.error(2).path("code").asInt()).isEqualTo(-32012);
            assertThat(c.call(3, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("entries")
                            .asInt())
                    .isEqualTo(0);
        }
    }

    @Test
    void scriptedShorthandAndFallback() throws Exception {
        try (Conversation c = open()) {
            c.call(1, "session/create", "{\"session\":\"a\",\"model\":\"scripted\"}");
            assertThat(c.call(2, "session/respond", "{\"session\":\"a\",\"prompt\":\"x\"}")
                            .path("text")
                            .asText())
                    .isEqualTo("(script exhausted)");
            c.call(
                    3,
                    "session/create",
                    "{\"session\":\"b\",\"model\":{\"type\":\"scripted\",\"steps\":[{\"text\":\"one\"}],\"fallback\":{\"template\":\"again {prompt}\"}}}");
            assertThat(c.call(4, "session/respond", "{\"session\":\"b\",\"prompt\":\"x\"}")
                            .path("text")
                            .asText())
                    .isEqualTo("one");
            assertThat(c.call(5, "session/respond", "{\"session\":\"b\",\"prompt\":\"y\"}")
                            .path("text")
                            .asText())
                    .isEqualTo("again y");
            assertThat(c.call(6, "session/respond", "{\"session\":\"b\",\"prompt\":\"z\"}")
                            .path("text")
                            .asText())
                    .isEqualTo("again z");
        }
    }

    @Test
    void jsonStepsAnswerAsJsonText() throws Exception {
        try (Conversation c = open()) {
            create(c, "j", "[]", "{}", "[{\"json\":{\"choice\":\"refuse\",\"n\":1}}]");
            JsonNode turn = c.call(2, "session/respond", "{\"session\":\"j\",\"prompt\":\"x\"}");
            assertThat(turn.path("text").asText()).isEqualTo("{\"choice\":\"refuse\",\"n\":1}");
        }
    }

    @Test
    void templatePlaceholdersSeeThisTurnsToolOutputs() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "t",
                    "[" + BELL_TOOL + "]",
                    "{}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"toolCalls\":[{\"name\":\"ring_bell\"}]},"
                            + "{\"template\":\"[{prompt}] [{toolOutput}] [{toolOutputs}]\"},{\"template\":\"[{toolOutput}]\"}]");
            c.request(2, "session/respond", "{\"session\":\"t\",\"prompt\":\"Ring twice\"}");
            c.reply(c.toolCall(), "{\"output\":\"one\"}");
            c.reply(c.toolCall(), "{\"output\":{\"n\":2}}");
            assertThat(c.result(2).path("text").asText()).isEqualTo("[Ring twice] [{\"n\":2}] [one\n{\"n\":2}]");
            assertThat(c.call(3, "session/respond", "{\"session\":\"t\",\"prompt\":\"again\"}")
                            .path("text")
                            .asText())
                    .isEqualTo("[]");
        }
    }

    @Test
    void aFailedTurnLeavesNoTrace() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "f",
                    "[" + BELL_TOOL + "]",
                    "{\"maxAttempts\":1}",
                    "[{\"text\":\"ok\"},{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"error\":\"refusal\"},{\"text\":\"fine\"}]");
            c.call(2, "session/respond", "{\"session\":\"f\",\"prompt\":\"x\"}");
            c.request(3, "session/respond", "{\"session\":\"f\",\"prompt\":\"y\"}");
            c.reply(c.toolCall(), "{\"output\":\"ding\"}");
            assertThat(c.error(3).path("code").asInt()).isEqualTo(-32003);
            assertThat(c.call(4, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("entries")
                            .asInt())
                    .isEqualTo(2);
            c.call(5, "session/respond", "{\"session\":\"f\",\"prompt\":\"z\"}");
            assertThat(c.call(6, "session/list", null)
                            .path("sessions")
                            .get(0)
                            .path("entries")
                            .asInt())
                    .isEqualTo(4);
        }
    }

    @Test
    void toolCallsInADisallowedStepFailTheTurnClearly() throws Exception {
        try (Conversation c = open()) {
            create(c, "x", "[]", "{}", "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]}]");
            JsonNode error = c.request(2, "session/respond", "{\"session\":\"x\",\"prompt\":\"x\"}")
                    .error(2);
            assertThat(error.path("code").asInt()).isEqualTo(-32012);
            assertThat(error.path("message").asText()).contains("disabled");
        }
    }

    // ---------------------------------------------------------------- stress

    /**
     * Thousands of pipelined requests over dozens of sessions, with tool calls answered as they come
     * and random cancels: every request id is answered exactly once, and nothing else is answered.
     */
    @Test
    void stressEveryRequestIsAnsweredExactlyOnce() throws Exception {
        java.util.Random random = new java.util.Random(20261202L);
        int sessions = 24;
        int requests = 3000;
        ProtocolClient client = connect("--tool-timeout", "30");
        try {
            java.util.Map<String, Integer> answers = new java.util.concurrent.ConcurrentHashMap<>();
            java.util.Set<String> expected = new java.util.HashSet<>();
            java.util.Set<String> streaming = new java.util.HashSet<>();
            List<String> toSend = new ArrayList<>();
            for (int s = 0; s < sessions; s++) {
                StringBuilder steps = new StringBuilder("[");
                for (int k = 0; k < 300; k++) {
                    if (k > 0) {
                        steps.append(',');
                    }
                    int kind = random.nextInt(10);
                    String delay = random.nextInt(4) == 0 ? ",\"delayMs\":" + random.nextInt(3) : "";
                    if (kind < 5) {
                        steps.append("{\"text\":\"answer ")
                                .append(k)
                                .append(" of s")
                                .append(s)
                                .append("\",\"chunks\":3")
                                .append(delay)
                                .append('}');
                    } else if (kind < 8) {
                        steps.append("{\"toolCalls\":[{\"name\":\"ring_bell\"}")
                                .append(kind == 7 ? ",{\"name\":\"ring_bell\"}" : "")
                                .append("]")
                                .append(delay)
                                .append('}');
                    } else if (kind == 8) {
                        steps.append("{\"template\":\"{prompt} {toolOutputs}\"")
                                .append(delay)
                                .append('}');
                    } else {
                        steps.append("{\"error\":\"guardrail_violation\"}");
                    }
                }
                steps.append(']');
                String id = "c" + s;
                expected.add("\"" + id + "\"");
                toSend.add("{\"jsonrpc\":\"2.0\",\"id\":\"" + id
                        + "\",\"method\":\"session/create\",\"params\":{\"session\":\"s" + s
                        + "\",\"tools\":[" + BELL_TOOL + "],\"options\":{\"maxToolRounds\":3},\"model\":"
                        + scripted(steps.toString()) + "}}");
            }
            for (int i = 0; i < requests; i++) {
                String session = "s" + random.nextInt(sessions);
                int kind = random.nextInt(100);
                String method;
                String params;
                boolean notification = false;
                if (kind < 50) {
                    boolean stream = random.nextBoolean();
                    method = "session/respond";
                    params = "{\"session\":\"" + session + "\",\"prompt\":\"p" + i + "\",\"stream\":" + stream + "}";
                    if (stream) {
                        streaming.add(String.valueOf(i));
                    }
                } else if (kind < 58) {
                    method = "session/setContextNote";
                    params = "{\"session\":\"" + session + "\",\"note\":\"n" + i + "\"}";
                } else if (kind < 64) {
                    method = "session/list";
                    params = null;
                } else if (kind < 72) {
                    method = "ping";
                    params = null;
                } else if (kind < 80) {
                    method = "session/cancel";
                    params = "{\"session\":\"" + session + "\"}";
                } else if (kind < 86) {
                    method = "session/cancel";
                    params = "{\"session\":\"" + session + "\"}";
                    notification = true;
                } else if (kind < 92) {
                    method = "session/reset";
                    params = "{\"session\":\"" + session + "\"}";
                } else if (kind < 97) {
                    method = "session/setInstructions";
                    params = "{\"session\":\"" + session + "\",\"instructions\":\"i" + i + "\"}";
                } else {
                    method = "session/respond";
                    params = "{\"session\":\"missing\",\"prompt\":\"x\"}";
                }
                if (notification) {
                    toSend.add("{\"jsonrpc\":\"2.0\",\"method\":\"" + method + "\",\"params\":" + params + "}");
                } else {
                    expected.add(String.valueOf(i));
                    toSend.add("{\"jsonrpc\":\"2.0\",\"id\":" + i + ",\"method\":\"" + method + "\""
                            + (params == null ? "" : ",\"params\":" + params) + "}");
                }
            }
            Thread sender = Thread.ofPlatform().start(() -> toSend.forEach(client::send));
            java.util.Map<String, Integer> responseIndex = new java.util.HashMap<>();
            java.util.Map<String, Integer> lastEventIndex = new java.util.HashMap<>();
            java.util.Set<String> toolCallIds = new java.util.HashSet<>();
            int[] cancelled = {0};
            int index = 0;
            long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
            while (answers.size() < expected.size() && System.nanoTime() < deadline) {
                JsonNode message = client.poll(Duration.ofMillis(500));
                if (message == null) {
                    continue;
                }
                index++;
                String method = message.path("method").asText(null);
                if ("tool/call".equals(method)) {
                    assertThat(toolCallIds.add(message.get("id").asText()))
                            .as("tool/call ids are unique")
                            .isTrue();
                    if (random.nextInt(10) > 0) {
                        client.send("{\"jsonrpc\":\"2.0\",\"id\":\""
                                + message.get("id").asText() + "\",\"result\":{\"output\":\"ding\"}}");
                    } else {
                        client.send("{\"jsonrpc\":\"2.0\",\"id\":\""
                                + message.get("id").asText() + "\",\"error\":{\"code\":1,\"message\":\"jammed\"}}");
                    }
                } else if ("session/event".equals(method)) {
                    String requestId = Json.write(message.path("params").path("requestId"));
                    assertThat(streaming).as("events only for streaming turns").contains(requestId);
                    assertThat(responseIndex).as("no event after its response").doesNotContainKey(requestId);
                    lastEventIndex.put(requestId, index);
                } else if (method == null) {
                    String id = Json.write(message.get("id"));
                    answers.merge(id, 1, Integer::sum);
                    if (message.path("error").path("code").asInt() == -32009) {
                        cancelled[0]++;
                    }
                    responseIndex.put(id, index);
                    assertThat(expected).as("only requests are answered").contains(id);
                } else {
                    assertThat(method).isIn("tool/cancel");
                }
            }
            sender.join();
            assertThat(answers.keySet()).containsExactlyInAnyOrderElementsOf(expected);
            assertThat(answers.values()).allMatch(count -> count == 1);
            ProtocolClient c = client;
            c.send("{\"jsonrpc\":\"2.0\",\"id\":\"final\",\"method\":\"ping\"}");
            JsonNode last;
            do {
                last = c.poll(Duration.ofSeconds(30));
                assertThat(last).as("the final ping is answered").isNotNull();
                if (last.has("id") && !last.has("method")) {
                    assertThat(Json.write(last.get("id")))
                            .as("nothing else is answered")
                            .isEqualTo("\"final\"");
                }
            } while (!(last.has("id") && !last.has("method")));
            assertThat(client.garbage()).isEmpty();
            assertThat(toolCallIds).as("the stress run exercised tool calls").hasSizeGreaterThan(10);
            assertThat(cancelled[0]).as("the stress run exercised cancellation").isGreaterThan(10);
        } finally {
            client.close();
        }
    }

    // ---------------------------------------------------------------- shutdown and end of input

    @Test
    void shutdownCancelsRunningWorkAnswersItFirstThenRejectsEverything() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "s",
                    "[" + BELL_TOOL + "]",
                    "{\"toolChoice\":\"required\"}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]}]");
            create(c, "slow", "[]", "{}", "[{\"text\":\"x\",\"delayMs\":60000}]");
            c.request(3, "session/respond", "{\"session\":\"s\",\"prompt\":\"x\"}");
            JsonNode call = c.toolCall();
            c.request(4, "session/respond", "{\"session\":\"slow\",\"prompt\":\"x\"}");
            c.request(5, "session/respond", "{\"session\":\"slow\",\"prompt\":\"queued\"}");
            c.request(6, "shutdown", null);
            c.request(7, "ping", null);
            JsonNode done = c.result(6);
            assertThat(done).isEqualTo(Json.object());
            for (int id = 3; id <= 5; id++) {
                assertThat(c.error(id).path("code").asInt()).as("id %d", id).isEqualTo(-32009);
                assertThat(c.indexOf(c.response(id))).isLessThan(c.indexOf(c.response(6)));
            }
            JsonNode toolCancel = c.await(m -> Conversation.isEvent(m, "tool/cancel"), "tool/cancel");
            assertThat(toolCancel.path("params").path("id").asText())
                    .isEqualTo(call.path("id").asText());
            // A request written after shutdown is refused (oam stdio answers what the client had written, then exits
            // without waiting for end of input: StdioShutdownIT).
            JsonNode refused = c.error(7);
            assertThat(refused.path("code").asInt()).isEqualTo(-32023);
            assertThat(code(refused)).isEqualTo("shut_down");
            c.client().endInput();
            assertThat(c.client().awaitStopped(Duration.ofSeconds(20))).isTrue();
            assertThat(c.client().exitCode()).isEqualTo(0);
            assertThat(c.client().garbage()).isEmpty();
        }
    }

    @Test
    void endOfInputWaitsForOutstandingWorkThenStops() throws Exception {
        try (Conversation c = open()) {
            create(c, "e", "[]", "{}", "[{\"text\":\"finished\",\"delayMs\":300}]");
            c.request(2, "session/respond", "{\"session\":\"e\",\"prompt\":\"x\"}");
            c.client().endInput();
            assertThat(c.result(2).path("text").asText()).isEqualTo("finished");
            assertThat(c.client().awaitStopped(Duration.ofSeconds(20))).isTrue();
            assertThat(c.client().exitCode()).isEqualTo(0);
        }
    }

    @Test
    void stdoutCarriesOnlyProtocolMessages() throws Exception {
        try (Conversation c = open("--log-level", "debug")) {
            create(
                    c,
                    "g",
                    "[" + BELL_TOOL + "]",
                    "{}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"text\":\"done\",\"chunks\":3}]");
            c.request(2, "session/respond", "{\"session\":\"g\",\"prompt\":\"x\",\"stream\":true}");
            c.reply(c.toolCall(), "{\"output\":\"ding\"}");
            c.result(2);
            c.send("garbage");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":\"t-77\",\"result\":{}}");
            c.sync();
            assertThat(c.client().garbage()).isEmpty();
            // The turn's events, the tool call, its response and the parse error for "garbage", at least.
            assertThat(c.messages())
                    .hasSizeGreaterThanOrEqualTo(5)
                    .allSatisfy(m -> assertThat(m.path("jsonrpc").asText()).isEqualTo("2.0"));
            assertThat(c.messages())
                    .anySatisfy(m ->
                            assertThat(m.path("error").path("code").asInt()).isEqualTo(-32700));
        }
    }
}
