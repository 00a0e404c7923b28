package dev.oam.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Bad input gets its documented status and OpenAI's error envelope, never reaches the model, and the server keeps
 * serving: the scripted model's one step is still there at the end of every test.
 */
class BadInputTest {
    private static final String CHAT = "/v1/chat/completions";
    private static final String TOOLS =
            "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"look\",\"parameters\":"
                    + "{\"type\":\"object\",\"properties\":{}}}}]";
    private static final String CALLS = "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":["
            + "{\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"look\",\"arguments\":\"{}\"}},"
            + "{\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"look\",\"arguments\":\"{}\"}}]}";

    private static OpenAIServer server;

    @BeforeAll
    static void start() throws IOException {
        server = TestServers.start(
                TestServers.script("[]"),
                options -> options.withLimits(
                        4,
                        64,
                        java.time.Duration.ofSeconds(120),
                        java.time.Duration.ofSeconds(30),
                        64 * 1024,
                        8 * 1024));
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    private static void assertEnvelope(String body, String code) throws IOException {
        JsonNode error = Json.parse(body).get("error");
        assertThat(error).as(body).isNotNull();
        assertThat(error.get("code").asText()).as(body).isEqualTo(code);
        assertThat(error.get("message").asText()).isNotBlank();
        assertThat(error.has("type")).isTrue();
        assertThat(error.has("param")).isTrue();
    }

    private static void assertStillServing() throws Exception {
        TestServers.Reply reply = TestServers.post(
                server, CHAT, "{\"model\":\"system\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}");
        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.json().at("/choices/0/message/content").asText()).isEqualTo("(script exhausted)");
    }

    private static TestServers.Reply chat(String messages, String extra) throws Exception {
        return TestServers.post(server, CHAT, "{\"model\":\"system\"," + extra + "\"messages\":" + messages + "}");
    }

    @Test
    void malformedJsonIs400InvalidJson() throws Exception {
        TestServers.Reply reply = TestServers.post(server, CHAT, "{\"model\":\"system\",\"messages\":[");
        assertThat(reply.status()).isEqualTo(400);
        assertEnvelope(reply.body(), "invalid_json");
        reply = TestServers.post(server, CHAT, "");
        assertThat(reply.status()).isEqualTo(400);
        assertEnvelope(reply.body(), "invalid_json");
        reply = TestServers.post(server, CHAT, "[1,2]");
        assertThat(reply.status()).isEqualTo(400);
        assertEnvelope(reply.body(), "invalid_request");
        assertStillServing();
    }

    @Test
    void wrongContentTypeIs415() throws Exception {
        for (String type : new String[] {"text/plain", "application/x-www-form-urlencoded"}) {
            TestServers.Reply reply = TestServers.send(
                    server,
                    java.net.http.HttpRequest.newBuilder(server.uri().resolve(CHAT))
                            .header("Content-Type", type)
                            .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{}")));
            assertThat(reply.status()).isEqualTo(415);
            assertEnvelope(reply.body(), "unsupported_media_type");
        }
        RawHttp.Raw none = RawHttp.exchange(
                server, "POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
        assertThat(none.status()).isEqualTo(415);
        assertStillServing();
    }

    @Test
    void bodyOverTheLimitIs413BeforeReadingAndWhileReadingAChunkedOne() throws Exception {
        RawHttp.Raw declared = RawHttp.exchange(
                server,
                "POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Content-Length: 10000000\r\n\r\n{");
        assertThat(declared.status()).isEqualTo(413);
        assertEnvelope(declared.body(), "malformed_request");

        StringBuilder chunked = new StringBuilder("POST " + CHAT
                + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + "Transfer-Encoding: chunked\r\n\r\n");
        String piece = "x".repeat(4096);
        for (int i = 0; i < 20; i++) {
            chunked.append(Integer.toHexString(piece.length()))
                    .append("\r\n")
                    .append(piece)
                    .append("\r\n");
        }
        chunked.append("0\r\n\r\n");
        RawHttp.Raw streamed = RawHttp.exchange(server, chunked.toString());
        assertThat(streamed.status()).isEqualTo(413);
        assertEnvelope(streamed.body(), "malformed_request");
        assertStillServing();
    }

    @Test
    void aChunkedBodyWithinTheLimitIsServed() throws Exception {
        String body = "{\"model\":\"system\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        String request = "POST " + CHAT
                + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                + "Connection: close\r\n\r\n" + Integer.toHexString(10) + "\r\n" + body.substring(0, 10) + "\r\n"
                + Integer.toHexString(body.length() - 10) + "\r\n" + body.substring(10) + "\r\n0\r\n\r\n";
        RawHttp.Raw raw = RawHttp.exchange(server, request);
        assertThat(raw.status()).isEqualTo(200);
        assertThat(Json.parse(raw.body()).at("/choices/0/message/content").asText())
                .isEqualTo("(script exhausted)");
    }

    @Test
    void headOverTheLimitIs431() throws Exception {
        RawHttp.Raw raw = RawHttp.exchange(
                server, "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + "a".repeat(20_000) + "\r\n\r\n");
        assertThat(raw.status()).isEqualTo(431);
        assertEnvelope(raw.body(), "malformed_request");
        assertStillServing();
    }

    @Test
    void smugglingShapesAreRejectedWith400() throws Exception {
        String[] requests = {
            // Content-Length and Transfer-Encoding together
            "POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 4\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            // white space before the colon
            "GET /health HTTP/1.1\r\nHost: x\r\nContent-Length : 0\r\n\r\n",
            // obs-fold
            "GET /health HTTP/1.1\r\nHost: x\r\nX-A: one\r\n two\r\n\r\n",
            // two Host headers
            "GET /health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
            // no Host in HTTP/1.1
            "GET /health HTTP/1.1\r\n\r\n",
            // two different Content-Lengths
            "POST " + CHAT
                    + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        };
        for (String request : requests) {
            RawHttp.Raw raw = RawHttp.exchange(server, request);
            assertThat(raw.status()).as(request).isEqualTo(400);
            assertEnvelope(raw.body(), "malformed_request");
        }
        assertStillServing();
    }

    @Test
    void keepAlivePipeliningAndHttp10AreServed() throws Exception {
        String body = "{\"model\":\"system\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        String one = "POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length() + "\r\n\r\n" + body;
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            OutputStream out = socket.getOutputStream();
            out.write((one + one + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n").getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = socket.getInputStream();
            assertThat(RawHttp.read(in).status()).isEqualTo(200);
            assertThat(RawHttp.read(in).status()).isEqualTo(200);
            RawHttp.Raw health = RawHttp.read(in);
            assertThat(health.status()).isEqualTo(200);
            assertThat(Json.parse(health.body()).get("status").asText()).isEqualTo("ok");
        }
        RawHttp.Raw old = RawHttp.exchange(server, "GET /v1/models HTTP/1.0\r\n\r\n");
        assertThat(old.status()).isEqualTo(200);
        assertThat(Json.parse(old.body()).at("/data/0/id").asText()).isEqualTo("system");
    }

    @Test
    void expect100ContinueIsAnsweredBeforeTheBodyIsSent() throws Exception {
        String body = "{\"model\":\"system\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            OutputStream out = socket.getOutputStream();
            out.write(("POST " + CHAT
                            + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
                            + "Content-Length: " + body.length() + "\r\n\r\n")
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = socket.getInputStream();
            RawHttp.Raw interim = RawHttp.readHead(in);
            assertThat(interim.status()).isEqualTo(100);
            out.write(body.getBytes(StandardCharsets.UTF_8));
            out.flush();
            assertThat(RawHttp.read(in).status()).isEqualTo(200);
        }
    }

    @Test
    void aClientThatStallsInTheHeadIsDisconnectedByTheIdleTimeout() throws Exception {
        try (OpenAIServer strict = TestServers.start(
                        TestServers.script("[]"),
                        options -> options.withLimits(
                                4,
                                64,
                                java.time.Duration.ofSeconds(120),
                                java.time.Duration.ofMillis(300),
                                64 * 1024,
                                8 * 1024));
                Socket socket = new Socket("127.0.0.1", strict.port())) {
            socket.getOutputStream()
                    .write("GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ".getBytes(StandardCharsets.UTF_8));
            socket.getOutputStream().flush();
            // The server gives up on the silent client and closes: reading ends (with or without a 408 first).
            byte[] rest = socket.getInputStream().readAllBytes();
            String text = new String(rest, StandardCharsets.UTF_8);
            assertThat(text.isEmpty() || text.startsWith("HTTP/1.1 408"))
                    .as(text)
                    .isTrue();
            assertThat(TestServers.get(strict, "/health").status()).isEqualTo(200);
        }
    }

    @Test
    void handleServesARawRequestWithoutASocket() throws Exception {
        String response = server.handle("GET /v1/models HTTP/1.1\r\nHost: local\r\n\r\n");
        assertThat(response).startsWith("HTTP/1.1 200");
        assertThat(response).contains("\"id\":\"system\"");
        String bad = server.handle("POST " + CHAT + " HTTP/1.1\r\nHost: local\r\nContent-Type: application/json\r\n"
                + "Content-Length: 1\r\n\r\n{");
        assertThat(bad).startsWith("HTTP/1.1 400").contains("invalid_json");
    }

    @Test
    void unknownFieldsAndUnsupportedValuesAre400NamingTheParameter() throws Exception {
        String user = "[{\"role\":\"user\",\"content\":\"hi\"}]";
        TestServers.Reply reply = chat(user, "\"temprature\":0.5,");
        assertThat(reply.status()).isEqualTo(400);
        assertEnvelope(reply.body(), "unknown_parameter");
        assertThat(reply.json().at("/error/param").asText()).isEqualTo("temprature");
        reply = chat(user, "\"n\":2,");
        assertThat(reply.status()).isEqualTo(400);
        assertThat(reply.json().at("/error/param").asText()).isEqualTo("n");
        reply = chat(user, "\"temperature\":3,");
        assertThat(reply.status()).isEqualTo(400);
        assertEnvelope(reply.body(), "invalid_value");
        reply = chat(user, "\"temperature\":\"hot\",");
        assertEnvelope(reply.body(), "invalid_type");
        reply = chat(user, "\"stop\":[\"a\",\"b\",\"c\",\"d\",\"e\"],");
        assertThat(reply.json().at("/error/param").asText()).isEqualTo("stop");
        reply = chat(user, "\"functions\":[],");
        assertEnvelope(reply.body(), "unsupported_parameter");
        reply = chat(
                "[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"https://example.com/a.png\"}}]}]",
                "");
        assertEnvelope(reply.body(), "unsupported_content");
        reply = chat(user, "\"tool_choice\":\"required\",");
        assertThat(reply.json().at("/error/param").asText()).isEqualTo("tool_choice");
        reply = chat(user, TOOLS + ",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"jump\"}},");
        assertThat(reply.json().at("/error/param").asText()).isEqualTo("tool_choice");
        reply = chat(
                user,
                "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"x\",\"schema\":{\"type\":\"wobble\"}}},");
        assertEnvelope(reply.body(), "invalid_schema");
        reply = TestServers.post(server, CHAT, "{\"messages\":" + user + "}");
        assertEnvelope(reply.body(), "missing_required_parameter");
        // ignored parameters are accepted
        reply = chat(
                user, "\"user\":\"u1\",\"store\":false,\"logprobs\":false,\"frequency_penalty\":0,\"metadata\":{},");
        assertThat(reply.status()).isEqualTo(200);
    }

    @Test
    void aTrailingAssistantMessageIs400InvalidLastMessage() throws Exception {
        TestServers.Reply reply =
                chat("[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"Once upon\"}]", "");
        assertThat(reply.status()).isEqualTo(400);
        assertEnvelope(reply.body(), "invalid_last_message");
        reply = chat("[{\"role\":\"system\",\"content\":\"Be brief.\"}]", "");
        assertEnvelope(reply.body(), "invalid_last_message");
        assertStillServing();
    }

    @Test
    void toolHistoryIsValidatedStrictly() throws Exception {
        String user = "{\"role\":\"user\",\"content\":\"look around\"}";
        String a = "{\"role\":\"tool\",\"tool_call_id\":\"call_a\",\"content\":\"a door\"}";
        String b = "{\"role\":\"tool\",\"tool_call_id\":\"call_b\",\"content\":\"a window\"}";
        String c = "{\"role\":\"tool\",\"tool_call_id\":\"call_c\",\"content\":\"?\"}";
        String[][] cases = {
            {"[" + user + "," + CALLS + "," + a + "]", "missing_tool_output"},
            {"[" + user + "," + CALLS + "," + a + "," + user + "]", "missing_tool_output"},
            {"[" + user + "," + CALLS + "," + a + "," + a + "," + b + "]", "duplicate_tool_output"},
            {"[" + user + "," + CALLS + "," + a + "," + b + "," + c + "]", "unknown_tool_call_id"},
            {"[" + user + "," + c + "]", "unknown_tool_call_id"},
            {
                "[" + user + "," + CALLS + "," + a + "," + b + "," + user + "," + CALLS + "," + a + "," + b + "]",
                "duplicate_tool_call_id"
            },
        };
        for (String[] test : cases) {
            TestServers.Reply reply = chat(test[0], TOOLS + ",");
            assertThat(reply.status()).as(test[0]).isEqualTo(400);
            assertEnvelope(reply.body(), test[1]);
        }
        assertStillServing();
    }

    @Test
    void unknownPathsAndMethodsGet404And405WithAllow() throws Exception {
        TestServers.Reply reply = TestServers.get(server, "/v2/everything");
        assertThat(reply.status()).isEqualTo(404);
        assertEnvelope(reply.body(), "unknown_url");
        reply = TestServers.get(server, CHAT);
        assertThat(reply.status()).isEqualTo(405);
        assertThat(reply.headers().firstValue("Allow")).contains("POST, OPTIONS");
        assertEnvelope(reply.body(), "method_not_allowed");
        reply = TestServers.get(server, "/v1/models/nope");
        assertThat(reply.status()).isEqualTo(404);
        assertEnvelope(reply.body(), "model_not_found");
    }
}
