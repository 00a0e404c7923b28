package dev.oam.model.openai;

import static dev.oam.testing.openai.FakeOpenAIServer.error;
import static dev.oam.testing.openai.FakeOpenAIServer.text;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.openai.FakeOpenAIServer;
import java.net.ServerSocket;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Server failures become the protocol's errors; cancellation and timeouts abort the HTTP request. */
@Timeout(60)
class ErrorsTest extends WireSupport {
    private JsonNode failingTurn(String options, String modelExtra) {
        createSession("s", "[]", options, modelExtra);
        c.request("turn", "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\",\"stream\":true}");
        return c.error("turn");
    }

    @Test
    void rateLimitingCarriesRetryAfter() throws Exception {
        open();
        fake.then(error(
                429,
                "{\"error\":{\"message\":\"Too many requests\",\"type\":\"rate_limit_exceeded\"}}",
                Map.of("Retry-After", "7")));
        JsonNode error = failingTurn("{}", "");
        assertThat(error.path("code").asInt()).isEqualTo(-32005);
        assertThat(error.path("data").path("code").asText()).isEqualTo("rate_limited");
        assertThat(error.path("data").path("retryAfterSeconds").asInt()).isEqualTo(7);
        Instant at = Instant.parse(error.path("data").path("retryAfter").asText());
        assertThat(at).isBetween(Instant.now().plusSeconds(3), Instant.now().plusSeconds(9));
        assertThat(error.path("message").asText()).contains("Too many requests");
        assertThat(fake.chats()).as("rate limits are not retried").hasSize(1);
    }

    @Test
    void contentFilterIsAGuardrailViolation() throws Exception {
        open();
        fake.then(new FakeOpenAIServer.Filtered("The orc raises his"));
        JsonNode error = failingTurn("{}", "");
        assertThat(error.path("code").asInt()).isEqualTo(-32002);
        assertThat(error.path("data").path("code").asText()).isEqualTo("guardrail_violation");
    }

    @Test
    void contentFilterErrorStatusIsAGuardrailViolation() throws Exception {
        open();
        fake.then(error(
                400,
                "{\"error\":{\"message\":\"blocked\",\"type\":\"invalid_request_error\",\"code\":\"content_filter\"}}",
                Map.of()));
        assertThat(failingTurn("{}", "").path("code").asInt()).isEqualTo(-32002);
    }

    @Test
    void refusalIsARefusal() throws Exception {
        open();
        fake.then(new FakeOpenAIServer.Refusal("I can't help with that."));
        JsonNode error = failingTurn("{}", "");
        assertThat(error.path("code").asInt()).isEqualTo(-32003);
        assertThat(error.path("message").asText()).contains("I can't help with that.");
    }

    @Test
    void contextLengthErrorsAreContextSizeExceeded() throws Exception {
        open();
        fake.then(
                error(
                        400,
                        "{\"error\":{\"message\":\"This model's maximum context length is 4096 tokens. However, you "
                                + "requested 5000 tokens.\",\"type\":\"invalid_request_error\",\"code\":\"context_length_exceeded\"}}",
                        Map.of()),
                // llama-server's form
                error(
                        400,
                        "{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size, try increasing it\","
                                + "\"type\":\"exceed_context_size_error\"}}",
                        Map.of()));
        assertThat(failingTurn("{}", "").path("code").asInt()).isEqualTo(-32004);
        c.request("again", "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}");
        assertThat(c.error("again").path("data").path("code").asText()).isEqualTo("context_size_exceeded");
    }

    @Test
    void unknownModelIsModelUnavailable() throws Exception {
        open();
        c.call(
                "create",
                "session/create",
                "{\"session\":\"s\",\"model\":{\"type\":\"openai\",\"baseUrl\":\"" + fake.baseUrl()
                        + "\",\"model\":\"nope:7b\"}}");
        c.request("turn", "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}");
        JsonNode error = c.error("turn");
        assertThat(error.path("code").asInt()).isEqualTo(-32001);
        assertThat(error.path("message").asText()).contains("nope:7b", "not found");
    }

    @Test
    void unreachableServerIsModelUnavailable() throws Exception {
        int port;
        try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        connect(Map.of(), null);
        c.call(
                "create",
                "session/create",
                "{\"session\":\"s\",\"model\":{\"type\":\"openai\",\"baseUrl\":\"http://127.0.0.1:" + port
                        + "/v1\",\"model\":\"m\"}}");
        c.request("turn", "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}");
        JsonNode error = c.error("turn");
        assertThat(error.path("code").asInt()).isEqualTo(-32001);
        assertThat(error.path("message").asText())
                .contains("Cannot reach the model server at http://127.0.0.1:" + port + "/v1");
    }

    @Test
    void otherServerErrorsAreRetriedThenGenerationFailedWithTheMessageShortened() throws Exception {
        open();
        String longMessage = "CUDA error: out of memory " + "x".repeat(2000);
        fake.then(
                error(500, "{\"error\":{\"message\":\"" + longMessage + "\",\"type\":\"server_error\"}}", Map.of()),
                error(500, "{\"error\":{\"message\":\"" + longMessage + "\",\"type\":\"server_error\"}}", Map.of()));
        JsonNode error = failingTurn("{\"maxAttempts\":2}", "");
        assertThat(error.path("code").asInt()).isEqualTo(-32012);
        assertThat(error.path("message").asText())
                .contains("HTTP 500: CUDA error: out of memory")
                .hasSizeLessThan(500);
        assertThat(fake.chats()).hasSize(2);
    }

    @Test
    void aServerThatAnswersGarbageFailsTheTurnNamingTheCauseAndTheSessionGoesOn() throws Exception {
        open();
        // A proxy's HTML page with 200, then a 200 whose body is not JSON at all: neither is a completion.
        fake.then(error(200, "<html><body>502 Bad Gateway</body></html>", Map.of()), error(200, "garbage", Map.of()));
        createSession("s", "[]", "{\"maxAttempts\":1}", "");
        c.request("html", "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}");
        JsonNode html = c.error("html");
        assertThat(html.path("code").asInt()).as("%s", html).isEqualTo(-32012);
        assertThat(html.path("message").asText()).contains("not JSON").contains("502 Bad Gateway");
        c.request("stream", "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\",\"stream\":true}");
        JsonNode stream = c.error("stream");
        assertThat(stream.path("code").asInt()).as("%s", stream).isEqualTo(-32012);
        assertThat(stream.path("message").asText()).as("%s", stream).isNotBlank();
        fake.then(text("Halt."));
        c.request("after", "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello.\"}");
        assertThat(c.result("after").path("text").asText()).isEqualTo("Halt.");
    }

    @Test
    void aConnectionDroppedMidStreamIsRetriedAndTheStreamedTextReset() throws Exception {
        open();
        fake.then(new FakeOpenAIServer.Drop("The gate is"), text("The gate is shut."));
        createSession("s", "[]", "{\"maxAttempts\":2}", "");
        c.request(1, "session/respond", "{\"session\":\"s\",\"prompt\":\"Gate?\",\"stream\":true}");
        JsonNode result = c.result(1);
        assertThat(result.path("text").asText()).isEqualTo("The gate is shut.");
        // Whether the client saw "The gate is" before the drop depends on the network; if it did, a reset
        // took it back, so the deltas and resets always add up to the answer.
        assertThat(streamedText(c.events(1))).isEqualTo("The gate is shut.");
        assertThat(fake.chats()).hasSize(2);

        fake.then(new FakeOpenAIServer.Drop("Half"));
        createSession("once", "[]", "{\"maxAttempts\":1}", "");
        c.request(2, "session/respond", "{\"session\":\"once\",\"prompt\":\"Again?\",\"stream\":true}");
        JsonNode error = c.error(2);
        assertThat(error.path("code").asInt()).isEqualTo(-32012);
        assertThat(error.path("message").asText()).contains("broke before the answer was complete");
    }

    @Test
    void aStreamThatEndsWithoutFinishingIsAFailure() throws Exception {
        open();
        fake.then(new FakeOpenAIServer.Truncated("The gate"));
        JsonNode error = failingTurn("{\"maxAttempts\":1}", "");
        assertThat(error.path("code").asInt()).isEqualTo(-32012);
        assertThat(error.path("message").asText()).contains("before the answer was complete");
    }

    @Test
    void cancelAbortsTheHttpRequestPromptly() throws Exception {
        open();
        fake.then(new FakeOpenAIServer.Hang("Let me think"));
        createSession("s", "[]", "{}", "");
        c.request(1, "session/respond", "{\"session\":\"s\",\"prompt\":\"Think.\",\"stream\":true}");
        c.await(
                m -> "session/event".equals(m.path("method").asText())
                        && m.path("params").path("event").path("type").asText().equals("text"),
                "the first text event");
        long start = System.nanoTime();
        c.call(2, "session/cancel", "{\"session\":\"s\"}");
        JsonNode error = c.error(1);
        assertThat(error.path("code").asInt()).isEqualTo(-32009);
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)).isLessThan(5000);
        assertThat(fake.clientLeft.await(10, TimeUnit.SECONDS))
                .as("the server saw the connection go")
                .isTrue();
    }

    @Test
    void aRequestThatRunsOutOfTimeIsAborted() throws Exception {
        open();
        fake.then(new FakeOpenAIServer.Hang("Slow"));
        JsonNode error = failingTurn("{\"maxAttempts\":1}", "\"timeoutSeconds\":0.3");
        assertThat(error.path("code").asInt()).isEqualTo(-32012);
        assertThat(error.path("message").asText()).contains("within 0.3 s", "timeoutSeconds");
        assertThat(fake.clientLeft.await(10, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void apiKeyComesFromTheHostAndNeverAppearsInErrors() throws Exception {
        open(Map.of("OAM_API_KEY", "sk-host-key-123456", "OTHER_API_KEY", "sk-wrong-key-987654"));
        fake.requireKey("sk-host-key-123456").then(text("Welcome."));
        createSession("ok", "[]", "{}", "\"headers\":{\"X-Title\":\"My Game\"}");
        c.call(1, "session/respond", "{\"session\":\"ok\",\"prompt\":\"Hi.\"}");
        assertThat(fake.chat(0).header("Authorization")).isEqualTo("Bearer sk-host-key-123456");
        assertThat(fake.chat(0).header("X-Title")).isEqualTo("My Game");

        createSession("bad", "[]", "{}", "\"apiKeyEnv\":\"OTHER_API_KEY\"");
        c.request(2, "session/respond", "{\"session\":\"bad\",\"prompt\":\"Hi.\"}");
        JsonNode error = c.error(2);
        assertThat(error.path("code").asInt()).isEqualTo(-32001);
        assertThat(error.path("message").asText())
                .contains("HTTP 401", "OTHER_API_KEY")
                .doesNotContain("sk-wrong-key-987654");
        assertThat(fake.chat(1).header("Authorization")).isEqualTo("Bearer sk-wrong-key-987654");
        assertThat(logs()).doesNotContain("sk-wrong-key").doesNotContain("sk-host-key");
        assertThat(c.call(3, "session/list", "{}").toString()).doesNotContain("sk-");
    }
}
