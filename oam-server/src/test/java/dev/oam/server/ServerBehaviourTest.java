package dev.oam.server;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.Sampling;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.UnavailableModel;
import dev.oam.core.tool.ToolDefinition;
import java.io.OutputStream;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.net.http.HttpRequest;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ServerBehaviourTest {
    private static final String CHAT = "/v1/chat/completions";
    private static final String TOOLS =
            "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"look\",\"parameters\":"
                    + "{\"type\":\"object\",\"properties\":{}}}},{\"type\":\"function\",\"function\":{\"name\":\"take\",\"parameters\":"
                    + "{\"type\":\"object\",\"properties\":{\"item\":{\"type\":\"string\"}},\"required\":[\"item\"]}}}]";
    private static final String HI = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";

    private static String body(String fields) {
        return "{\"model\":\"system\"," + fields + "}";
    }

    @Test
    void stopSequencesCutTheTextAndAreNotReturnedEvenAcrossChunks() throws Exception {
        String script = "[{\"text\":\"The cellar door is locked. END of story\",\"chunks\":9},"
                + "{\"text\":\"alpha beta gamma\",\"chunks\":3},{\"text\":\"no stop here\",\"chunks\":4}]";
        try (OpenAIServer server = TestServers.start(TestServers.script(script))) {
            TestServers.Reply reply = TestServers.post(server, CHAT, body(HI + ",\"stop\":[\"END\",\"zzz\"]"));
            assertThat(reply.json().at("/choices/0/message/content").asText()).isEqualTo("The cellar door is locked. ");
            assertThat(reply.json().at("/choices/0/finish_reason").asText()).isEqualTo("stop");
            List<String> deltas =
                    streamedContent(TestServers.post(server, CHAT, body(HI + ",\"stream\":true,\"stop\":\"a g\""))
                            .body());
            assertThat(String.join("", deltas)).isEqualTo("alpha bet");
            reply = TestServers.post(server, CHAT, body(HI + ",\"stop\":\"xyz\""));
            assertThat(reply.json().at("/choices/0/message/content").asText()).isEqualTo("no stop here");
        }
    }

    @Test
    void maxTokensCutsTheAnswerWithFinishReasonLength() throws Exception {
        String script = "[{\"text\":\"" + "word ".repeat(40) + "\",\"chunks\":10},{\"text\":\"short\"}]";
        try (OpenAIServer server = TestServers.start(TestServers.script(script))) {
            TestServers.Reply reply = TestServers.post(server, CHAT, body(HI + ",\"max_completion_tokens\":5"));
            JsonNode choice = reply.json().at("/choices/0");
            assertThat(choice.get("finish_reason").asText()).isEqualTo("length");
            // the scripted model counts a token per four bytes
            assertThat(choice.at("/message/content").asText()).isEqualTo("word word word word ");
            assertThat(reply.json().at("/usage/completion_tokens").asInt()).isEqualTo(5);
            reply = TestServers.post(server, CHAT, body(HI + ",\"max_tokens\":5"));
            assertThat(reply.json().at("/choices/0/finish_reason").asText()).isEqualTo("stop");
        }
    }

    @Test
    void toolChoiceAndAllowedToolsDecideWhatTheStepOffers() throws Exception {
        RecordingModel model = new RecordingModel(TestServers.script("[]"), false);
        try (OpenAIServer server = TestServers.start(model)) {
            String[] choices = {
                "\"auto\"",
                "\"none\"",
                "\"required\"",
                "{\"type\":\"function\",\"function\":{\"name\":\"take\"}}",
                "{\"type\":\"allowed_tools\",\"allowed_tools\":{\"mode\":\"required\",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"look\"}}]}}"
            };
            for (String choice : choices) {
                assertThat(TestServers.post(server, CHAT, body(HI + "," + TOOLS + ",\"tool_choice\":" + choice))
                                .status())
                        .isEqualTo(200);
            }
            List<ToolCallingMode> modes =
                    model.requests.stream().map(ModelRequest::mode).toList();
            List<List<String>> offered = model.requests.stream()
                    .map(r -> r.tools().stream().map(ToolDefinition::name).toList())
                    .toList();
            assertThat(modes)
                    .containsExactly(
                            ToolCallingMode.ALLOWED,
                            ToolCallingMode.DISALLOWED,
                            ToolCallingMode.REQUIRED,
                            ToolCallingMode.REQUIRED,
                            ToolCallingMode.REQUIRED);
            assertThat(offered)
                    .containsExactly(
                            List.of("look", "take"),
                            List.of(),
                            List.of("look", "take"),
                            List.of("take"),
                            List.of("look"));
        }
    }

    @Test
    void samplingSettingsReachTheModel() throws Exception {
        RecordingModel model = new RecordingModel(TestServers.script("[]"), false);
        try (OpenAIServer server = TestServers.start(model)) {
            TestServers.post(server, CHAT, body(HI + ",\"temperature\":0"));
            TestServers.post(
                    server, CHAT, body(HI + ",\"temperature\":0.7,\"top_p\":0.9,\"seed\":42,\"max_tokens\":64"));
            assertThat(model.requests.get(0).options().sampling()).isEqualTo(Sampling.GREEDY);
            assertThat(model.requests.get(1).options().sampling()).isEqualTo(new Sampling.TopP(0.9, 42L));
            assertThat(model.requests.get(1).options().temperature()).isEqualTo(0.7);
            assertThat(model.requests.get(1).options().maxResponseTokens()).isEqualTo(64);
        }
    }

    @Test
    void historyBecomesInstructionsMergedPromptsAndToolOutputsInCallOrder() throws Exception {
        RecordingModel model = new RecordingModel(TestServers.script("[]"), false);
        try (OpenAIServer server = TestServers.start(model, options -> options.withInstructions("Server rules."))) {
            String messages =
                    "\"messages\":[{\"role\":\"system\",\"content\":\"Be Mira.\"},{\"role\":\"developer\",\"content\":\"Be brief.\"},"
                            + "{\"role\":\"user\",\"content\":\"one\"},{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"two\"}]},"
                            + "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"look\",\"arguments\":\"{}\"}},"
                            + "{\"id\":\"c2\",\"type\":\"function\",\"function\":{\"name\":\"take\",\"arguments\":\"{\\\"item\\\":\\\"key\\\"}\"}}]},"
                            + "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":\"taken\"},{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"a key\"}]";
            assertThat(TestServers.post(server, CHAT, body(messages + "," + TOOLS))
                            .status())
                    .isEqualTo(200);
            ModelRequest seen = model.requests.get(0);
            assertThat(seen.instructions()).isEqualTo("Server rules.\n\nBe Mira.\n\nBe brief.");
            assertThat(seen.prompt()).isEqualTo("one\n\ntwo");
            assertThat(seen.turnToolOutputs()).containsExactly("a key", "taken");
        }
    }

    @Test
    void parallelToolCallsFalseReturnsOnlyTheFirstCall() throws Exception {
        String calls = "{\"toolCalls\":[{\"name\":\"look\"},{\"name\":\"take\",\"arguments\":{\"item\":\"key\"}}]}";
        try (OpenAIServer server = TestServers.start(TestServers.script("[" + calls + "," + calls + "]"))) {
            JsonNode all =
                    TestServers.post(server, CHAT, body(HI + "," + TOOLS)).json();
            assertThat(all.at("/choices/0/message/tool_calls")).hasSize(2);
            JsonNode first = TestServers.post(server, CHAT, body(HI + "," + TOOLS + ",\"parallel_tool_calls\":false"))
                    .json();
            assertThat(first.at("/choices/0/message/tool_calls")).hasSize(1);
            assertThat(first.at("/choices/0/message/tool_calls/0/function/name").asText())
                    .isEqualTo("look");
            assertThat(first.at("/choices/0/finish_reason").asText()).isEqualTo("tool_calls");
        }
    }

    @Test
    void aCallToAToolTheRequestLacksIsNotPassedOn() throws Exception {
        try (OpenAIServer server = TestServers.start(TestServers.script("[{\"toolCalls\":[{\"name\":\"fly\"}]}]"))) {
            TestServers.Reply reply = TestServers.post(server, CHAT, body(HI + "," + TOOLS));
            assertThat(reply.status()).isEqualTo(500);
            assertThat(reply.errorCode()).isEqualTo("generation_failed");
        }
    }

    @Test
    void jsonObjectIsExtractedFromFencesAndProseOrFails() throws Exception {
        String script = "[{\"text\":\"Sure! ```json\\n{\\\"gold\\\": 3}\\n``` Enjoy.\"},{\"text\":\"no json at all\"}]";
        RecordingModel model = new RecordingModel(TestServers.script(script), false);
        try (OpenAIServer server = TestServers.start(model)) {
            TestServers.Reply reply =
                    TestServers.post(server, CHAT, body(HI + ",\"response_format\":{\"type\":\"json_object\"}"));
            assertThat(reply.json().at("/choices/0/message/content").asText()).isEqualTo("{\"gold\":3}");
            assertThat(model.requests.get(0).instructions()).contains("single JSON object");
            reply = TestServers.post(server, CHAT, body(HI + ",\"response_format\":{\"type\":\"json_object\"}"));
            assertThat(reply.status()).isEqualTo(500);
            assertThat(reply.errorCode()).isEqualTo("invalid_json_output");
        }
    }

    @Test
    void modelFailuresMapToTheStatusTable() throws Exception {
        String script =
                "[{\"error\":\"guardrail_violation\"},{\"error\":\"refusal\",\"message\":\"I cannot help with that.\"},"
                        + "{\"error\":\"rate_limited\"},{\"error\":\"generation_failed\"},{\"error\":\"generation_failed\"}]";
        try (OpenAIServer server = TestServers.start(TestServers.script(script))) {
            TestServers.Reply reply = TestServers.post(server, CHAT, body(HI));
            assertThat(reply.status()).isEqualTo(400);
            assertThat(reply.errorCode()).isEqualTo("content_filter");
            reply = TestServers.post(server, CHAT, body(HI));
            assertThat(reply.status()).isEqualTo(200);
            assertThat(reply.json().at("/choices/0/message/refusal").asText()).isEqualTo("I cannot help with that.");
            assertThat(reply.json().at("/choices/0/message/content").isNull()).isTrue();
            reply = TestServers.post(server, CHAT, body(HI));
            assertThat(reply.status()).isEqualTo(429);
            assertThat(reply.headers().firstValue("Retry-After")).isPresent();
            // generation_failed is tried a second time, then reported
            reply = TestServers.post(server, CHAT, body(HI));
            assertThat(reply.status()).isEqualTo(500);
            assertThat(reply.errorCode()).isEqualTo("generation_failed");
        }
        try (OpenAIServer server = TestServers.start(
                new UnavailableModel(ModelAvailability.unavailable("model_not_ready", "Not configured.")))) {
            TestServers.Reply reply = TestServers.post(server, CHAT, body(HI));
            assertThat(reply.status()).isEqualTo(503);
            assertThat(reply.errorCode()).isEqualTo("model_unavailable");
            TestServers.Reply health = TestServers.get(server, "/health");
            assertThat(health.status()).isEqualTo(503);
            assertThat(health.json().get("status").asText()).isEqualTo("unavailable");
        }
    }

    @Test
    void aStreamThatFailsBeforeItsFirstEventGetsARealStatusAndTheEnvelope() throws Exception {
        try (OpenAIServer server = TestServers.start(
                TestServers.script("[{\"error\":\"rate_limited\"},{\"error\":\"guardrail_violation\"}]"))) {
            TestServers.Reply limited = TestServers.post(server, CHAT, body(HI + ",\"stream\":true"));
            assertThat(limited.status()).isEqualTo(429);
            assertThat(limited.headers().firstValue("Content-Type"))
                    .hasValueSatisfying(v -> assertThat(v).startsWith("application/json"));
            assertThat(limited.errorCode()).isEqualTo("rate_limited");
            assertThat(limited.headers().firstValue("Retry-After")).isPresent();
            TestServers.Reply filtered = TestServers.post(server, CHAT, body(HI + ",\"stream\":true"));
            assertThat(filtered.status()).isEqualTo(400);
            assertThat(filtered.errorCode()).isEqualTo("content_filter");
        }
    }

    @Test
    void aFailureAfterTheStreamStartedIsAnErrorEventThenDone() throws Exception {
        // The scripted model fails before it writes, so a model that writes text and then fails stands in for a late
        // failure.
        dev.oam.core.model.LanguageModel failing = new dev.oam.core.model.LanguageModel() {
            @Override
            public dev.oam.core.model.ModelResponse respond(
                    ModelRequest request,
                    dev.oam.core.model.ModelListener listener,
                    dev.oam.core.model.CancellationToken token)
                    throws dev.oam.core.model.AgentException {
                listener.onText("Half an ans");
                throw new dev.oam.core.model.AgentException(
                        dev.oam.core.ErrorCode.GENERATION_FAILED, "The model crashed.");
            }

            @Override
            public ModelAvailability availability() {
                return ModelAvailability.ready(8192, "test", List.of());
            }
        };
        try (OpenAIServer server = TestServers.start(failing)) {
            TestServers.Reply reply = TestServers.post(server, CHAT, body(HI + ",\"stream\":true"));
            assertThat(reply.status()).isEqualTo(200);
            List<String> data = dataLines(reply.body());
            assertThat(data.get(data.size() - 1)).isEqualTo("[DONE]");
            assertThat(Json.parse(data.get(data.size() - 2)).at("/error/code").asText())
                    .isEqualTo("generation_failed");
            assertThat(String.join("", streamedContent(reply.body()))).isEqualTo("Half an ans");
        }
    }

    @Test
    void aClientThatDisconnectsCancelsItsGeneration() throws Exception {
        for (boolean stream : new boolean[] {false, true}) {
            RecordingModel model = new RecordingModel(TestServers.script("[]"), true);
            try (OpenAIServer server = TestServers.start(model)) {
                String json = body(HI + (stream ? ",\"stream\":true" : ""));
                Socket socket = new Socket("127.0.0.1", server.port());
                socket.getOutputStream()
                        .write(("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                        + "Content-Length: " + json.length() + "\r\n\r\n" + json)
                                .getBytes(StandardCharsets.UTF_8));
                socket.getOutputStream().flush();
                model.started.await();
                socket.close();
                model.cancelled.await();
                assertThat(model.cancelled.getCount()).isZero();
                // and the server goes on serving
                assertThat(TestServers.get(server, "/health").status()).isEqualTo(200);
            }
        }
    }

    @Test
    void aRequestPipelinedBehindASlowCompletionIsHandedBackAndServed() throws Exception {
        // The second request arrives while the first completion runs (it takes 2 s, eight probe periods), so a
        // disconnect probe reads its bytes off the connection: they must go back to Jetty, not be lost.
        RecordingModel model = new RecordingModel(TestServers.script("[{\"text\":\"slow\",\"delayMs\":2000}]"), false);
        try (OpenAIServer server = TestServers.start(model)) {
            String json = body(HI);
            String chat = "POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                    + json.length() + "\r\n\r\n" + json;
            try (Socket socket = new Socket("127.0.0.1", server.port())) {
                OutputStream out = socket.getOutputStream();
                out.write(chat.getBytes(StandardCharsets.UTF_8));
                out.flush();
                model.started.await();
                out.write("GET /v1/models/system HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.UTF_8));
                out.flush();
                var in = socket.getInputStream();
                RawHttp.Raw first = RawHttp.read(in);
                assertThat(first.status()).isEqualTo(200);
                assertThat(Json.parse(first.body())
                                .at("/choices/0/message/content")
                                .asText())
                        .isEqualTo("slow");
                RawHttp.Raw second = RawHttp.read(in);
                assertThat(second.status()).isEqualTo(200);
                assertThat(Json.parse(second.body()).get("id").asText()).isEqualTo("system");
            }
        }
    }

    @Test
    void handleRunsACompletionWithoutASocket() throws Exception {
        try (OpenAIServer server =
                TestServers.start(TestServers.script("[{\"text\":\"in memory\",\"delayMs\":600}]"))) {
            String json = body(HI);
            String response =
                    server.handle("POST " + CHAT + " HTTP/1.1\r\nHost: local\r\nContent-Type: application/json\r\n"
                            + "Content-Length: " + json.length() + "\r\n\r\n" + json);
            assertThat(response).startsWith("HTTP/1.1 200");
            assertThat(response).contains("\"content\":\"in memory\"");
        }
    }

    @Test
    void chatCompletionsWithoutV1IsServedAndGuardedTheSameWay() throws Exception {
        try (OpenAIServer server = TestServers.start(
                TestServers.script("[{\"text\":\"no prefix\"}]"), options -> options.withSecurity("k1", List.of()))) {
            HttpRequest.Builder request = HttpRequest.newBuilder(server.uri().resolve("/chat/completions"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(body(HI)));
            TestServers.Reply refused = TestServers.send(server, request);
            assertThat(refused.status()).isEqualTo(401);
            assertThat(refused.errorCode()).isEqualTo("invalid_api_key");
            assertThat(refused.headers().firstValue("WWW-Authenticate"))
                    .hasValueSatisfying(v -> assertThat(v).startsWith("Bearer"));
            TestServers.Reply served = TestServers.send(server, request.header("Authorization", "Bearer k1"));
            assertThat(served.status()).as(served.body()).isEqualTo(200);
            assertThat(served.json().at("/choices/0/message/content").asText()).isEqualTo("no prefix");
        }
    }

    @Test
    void aCompletionLongerThanTheIdleTimeoutIsAnsweredNotCut() throws Exception {
        // Idle timeout 200 ms, a step of 1.5 s: the connection is silent while the model works, which is not a slow
        // client (the real Gemma model took over 30 s for one answer on a loaded machine, and 30 s is the default).
        try (OpenAIServer server = TestServers.start(
                TestServers.script("[{\"text\":\"patient\",\"delayMs\":1500}]"),
                options -> options.withLimits(
                        4, 64, Duration.ofSeconds(120), Duration.ofMillis(200), 1 << 20, 64 * 1024))) {
            String json = body(HI);
            try (Socket socket = new Socket("127.0.0.1", server.port())) {
                OutputStream out = socket.getOutputStream();
                out.write(("POST " + CHAT + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: "
                                + json.length() + "\r\n\r\n" + json)
                        .getBytes(StandardCharsets.UTF_8));
                out.flush();
                var in = socket.getInputStream();
                RawHttp.Raw answer = RawHttp.read(in);
                assertThat(answer.status()).as(answer.body()).isEqualTo(200);
                assertThat(Json.parse(answer.body())
                                .at("/choices/0/message/content")
                                .asText())
                        .isEqualTo("patient");
            }
        }
    }

    @Test
    void theTimeoutCancelsGenerationWith504() throws Exception {
        RecordingModel model = new RecordingModel(TestServers.script("[]"), true);
        try (OpenAIServer server = TestServers.start(
                model,
                options -> options.withLimits(
                        4, 64, Duration.ofMillis(300), Duration.ofSeconds(30), 1 << 20, 64 * 1024))) {
            TestServers.Reply reply = TestServers.post(server, CHAT, body(HI));
            assertThat(reply.status()).isEqualTo(504);
            assertThat(reply.errorCode()).isEqualTo("timeout");
            assertThat(model.cancelled.getCount()).isZero();
        }
    }

    @Test
    void requestsBeyondTheQueueGet429WithRetryAfterWhileQueuedOnesAreServedInOrder() throws Exception {
        RecordingModel model = new RecordingModel(TestServers.script("[]"), true);
        try (OpenAIServer server = TestServers.start(
                model,
                options -> options.withLimits(
                        1, 1, Duration.ofSeconds(120), Duration.ofSeconds(30), 1 << 20, 64 * 1024))) {
            var pool = Executors.newVirtualThreadPerTaskExecutor();
            CompletableFuture<TestServers.Reply> running =
                    CompletableFuture.supplyAsync(() -> post(server, body(HI)), pool);
            model.started.await();
            CompletableFuture<TestServers.Reply> queued =
                    CompletableFuture.supplyAsync(() -> post(server, body(HI)), pool);
            while (TestServers.get(server, "/health")
                            .json()
                            .get("queued_requests")
                            .asInt()
                    < 1) {
                Thread.onSpinWait();
            }
            TestServers.Reply refused = TestServers.post(server, CHAT, body(HI));
            assertThat(refused.status()).isEqualTo(429);
            assertThat(refused.errorCode()).isEqualTo("rate_limited");
            assertThat(refused.headers().firstValue("Retry-After")).contains("1");
            JsonNode health = TestServers.get(server, "/health").json();
            assertThat(health.get("active_requests").asInt()).isEqualTo(1);
            assertThat(health.get("queued_requests").asInt()).isEqualTo(1);
            assertThat(model.requests).hasSize(1);
            pool.shutdownNow();
        }
    }

    private static TestServers.Reply post(OpenAIServer server, String body) {
        try {
            return TestServers.post(server, CHAT, body);
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    @Test
    void apiKeyGuardsV1ButNotHealth() throws Exception {
        try (OpenAIServer server =
                TestServers.start(TestServers.script("[]"), options -> options.withSecurity("k1", List.of()))) {
            assertThat(TestServers.get(server, "/health").status()).isEqualTo(200);
            TestServers.Reply reply = TestServers.get(server, "/v1/models");
            assertThat(reply.status()).isEqualTo(401);
            assertThat(reply.errorCode()).isEqualTo("invalid_api_key");
            reply = TestServers.send(
                    server,
                    HttpRequest.newBuilder(server.uri().resolve("/v1/models")).header("Authorization", "Bearer k2"));
            assertThat(reply.status()).isEqualTo(401);
            reply = TestServers.send(
                    server,
                    HttpRequest.newBuilder(server.uri().resolve("/v1/models")).header("Authorization", "Bearer k1"));
            assertThat(reply.status()).isEqualTo(200);
        }
    }

    @Test
    void corsAllowsListedOriginsAndRefusesOthers() throws Exception {
        try (OpenAIServer server = TestServers.start(
                TestServers.script("[]"), options -> options.withSecurity("k", List.of("http://game.local")))) {
            TestServers.Reply preflight = TestServers.send(
                    server,
                    HttpRequest.newBuilder(server.uri().resolve(CHAT))
                            .method("OPTIONS", HttpRequest.BodyPublishers.noBody())
                            .header("Origin", "http://game.local")
                            .header("Access-Control-Request-Method", "POST")
                            .header("Access-Control-Request-Headers", "authorization, content-type"));
            assertThat(preflight.status()).isEqualTo(204);
            assertThat(preflight.headers().firstValue("Access-Control-Allow-Origin"))
                    .contains("http://game.local");
            assertThat(preflight.headers().firstValue("Access-Control-Allow-Headers"))
                    .contains("authorization, content-type");
            TestServers.Reply foreign = TestServers.send(
                    server,
                    HttpRequest.newBuilder(server.uri().resolve(CHAT))
                            .header("Origin", "http://evil.example")
                            .header("Content-Type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString(body(HI))));
            assertThat(foreign.status()).isEqualTo(403);
            assertThat(foreign.errorCode()).isEqualTo("origin_not_allowed");
            TestServers.Reply allowed = TestServers.send(
                    server,
                    HttpRequest.newBuilder(server.uri().resolve("/v1/models"))
                            .header("Origin", "http://game.local")
                            .header("Authorization", "Bearer k"));
            assertThat(allowed.status()).isEqualTo(200);
            assertThat(allowed.headers().firstValue("Access-Control-Allow-Origin"))
                    .contains("http://game.local");
        }
    }

    @Test
    void aliasesAreListedWithTheirParentAndServeTheirModel() throws Exception {
        try (OpenAIServer server = TestServers.start(
                TestServers.script("[{\"text\":\"aye\"}]"),
                options -> options.withAliases(Map.of("gpt-4o-mini", "system")))) {
            JsonNode list = TestServers.get(server, "/v1/models").json();
            assertThat(list.get("data")).hasSize(2);
            assertThat(list.at("/data/1/id").asText()).isEqualTo("gpt-4o-mini");
            assertThat(list.at("/data/1/parent").asText()).isEqualTo("system");
            assertThat(TestServers.get(server, "/v1/models/gpt-4o-mini")
                            .json()
                            .get("parent")
                            .asText())
                    .isEqualTo("system");
            TestServers.Reply reply = TestServers.post(server, CHAT, "{\"model\":\"gpt-4o-mini\"," + HI + "}");
            assertThat(reply.json().get("model").asText()).isEqualTo("gpt-4o-mini");
            assertThat(reply.json().at("/choices/0/message/content").asText()).isEqualTo("aye");
        }
    }

    @Test
    void aUnixSocketServesWithOwnerOnlyModeAndNeverReplacesAFile(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("taken");
        Files.writeString(file, "precious");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> OpenAIServer.start(
                        ServerOptions.defaults(TestServers.script("[]")).withListener(null, 0, file)))
                .isInstanceOf(java.io.IOException.class)
                .hasMessageContaining("not a socket");
        assertThat(Files.readString(file)).isEqualTo("precious");

        Path socket = dir.resolve("oam.sock");
        try (OpenAIServer server =
                OpenAIServer.start(ServerOptions.defaults(TestServers.script("[{\"text\":\"via socket\"}]"))
                        .withListener(null, 0, socket))) {
            assertThat(server.port()).isEqualTo(-1);
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)))
                    .isEqualTo("rw-------");
            String json = body(HI);
            try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
                channel.connect(UnixDomainSocketAddress.of(socket));
                channel.write(ByteBuffer.wrap(
                        ("POST " + CHAT + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                                        + "Connection: close\r\nContent-Length: " + json.length() + "\r\n\r\n" + json)
                                .getBytes(StandardCharsets.UTF_8)));
                RawHttp.Raw raw = RawHttp.read(java.nio.channels.Channels.newInputStream(channel));
                assertThat(raw.status()).isEqualTo(200);
                assertThat(Json.parse(raw.body())
                                .at("/choices/0/message/content")
                                .asText())
                        .isEqualTo("via socket");
            }
        }
    }

    private static List<String> dataLines(String sse) {
        List<String> data = new ArrayList<>();
        for (String line : sse.split("\n")) {
            if (line.startsWith("data: ")) {
                data.add(line.substring(6));
            }
        }
        return data;
    }

    private static List<String> streamedContent(String sse) throws Exception {
        List<String> deltas = new ArrayList<>();
        for (String data : dataLines(sse)) {
            if (!data.equals("[DONE]")) {
                JsonNode content = Json.parse(data).at("/choices/0/delta/content");
                if (content.isTextual() && !content.asText().isEmpty()) {
                    deltas.add(content.asText());
                }
            }
        }
        return deltas;
    }
}
