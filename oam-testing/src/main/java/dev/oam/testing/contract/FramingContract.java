package dev.oam.testing.contract;

import static dev.oam.testing.contract.ContractSupport.code;
import static dev.oam.testing.contract.ContractSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The framing part of the protocol contract (docs/PROTOCOL.md, "Framing", "Errors"): parse errors, message shapes, ids,
 * params, warnings about unknown members, notifications and hostile input.
 */
public interface FramingContract extends ContractFixture {
    // ---------------------------------------------------------------- framing

    @Test
    default void garbageIsAParseErrorWithNullIdAndTheNextRequestIsServed() throws Exception {
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
    default void invalidUtf8IsAParseError() throws Exception {
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
    default void batchesAreRejectedWithNullId() throws Exception {
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
    default void nonObjectMessagesAreInvalid() throws Exception {
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
    default void jsonrpcVersionIsRequired() throws Exception {
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
    default void idsAreEchoedExactly() throws Exception {
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
    default void unsafeNumericIdsAreRejectedWithNullIdAndAStringIdHint() throws Exception {
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
    default void nullAndNonScalarIdsAreRejected() throws Exception {
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
    default void blankLinesAreIgnored() throws Exception {
        try (Conversation c = open()) {
            c.send("");
            c.send("   ");
            c.send("\t");
            assertThat(c.sync()).isEmpty();
        }
    }

    @Test
    default void paramsMustBeAnObjectAndNullMeansAbsent() throws Exception {
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
    default void unknownMembersAreReportedInWarnings() throws Exception {
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
    default void notificationsAreNeverAnswered() throws Exception {
        try (Conversation c = open()) {
            c.notification("ping", null);
            c.notification("no/such", null);
            c.notification("session/respond", "{\"session\":\"missing\",\"prompt\":\"x\"}");
            c.send("{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"params\":[1]}");
            assertThat(c.sync()).isEmpty();
        }
    }

    @Test
    default void unknownMethodsAreMethodNotFound() throws Exception {
        try (Conversation c = open()) {
            JsonNode error = c.request(1, "npc/dance", "{}").error(1);
            assertThat(error.path("code").asInt()).isEqualTo(-32601);
            assertThat(error.path("data").path("method").asText()).isEqualTo("npc/dance");
            assertThat(code(error)).isEqualTo("method_not_found");
        }
    }

    @Test
    default void responsesToUnknownToolCallIdsAreIgnored() throws Exception {
        try (Conversation c = open()) {
            c.send("{\"jsonrpc\":\"2.0\",\"id\":\"t-99\",\"result\":{\"output\":\"late\"}}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":\"t-98\",\"error\":{\"code\":-32000,\"message\":\"x\"}}");
            c.send("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}");
            assertThat(c.sync()).isEmpty();
        }
    }

    @Test
    default void hugeLinesAreServed() throws Exception {
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
    default void deepNestingIsAParseErrorNotACrash() throws Exception {
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
    default void hugeNumbersNeverCrash() throws Exception {
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
    default void wrongTypesEverywhereGetClearErrors() throws Exception {
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
}
