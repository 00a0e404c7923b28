package dev.oam.testing.contract;

import static dev.oam.testing.contract.ContractSupport.BELL_TOOL;
import static dev.oam.testing.contract.ContractSupport.code;
import static dev.oam.testing.contract.ContractSupport.create;
import static dev.oam.testing.contract.ContractSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import dev.oam.testing.ProtocolClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The bridge-wide part of the protocol contract: {@code initialize}, {@code ping}, model availability, a stress run of
 * pipelined requests, shutdown, end of input and a clean stdout.
 */
public interface BridgeContract extends ContractFixture {
    // ---------------------------------------------------------------- core methods

    @Test
    default void initializeListsOnlyRegisteredCapabilities() throws Exception {
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
    default void initializeRejectsAnotherMajorVersion() throws Exception {
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
    default void modelAvailabilityWithoutSystemModelIsModelNotReady() throws Exception {
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
    default void systemModelSessionsAreCreatedWithAWarningAndTheirTurnsFailModelUnavailable() throws Exception {
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
    default void pingAnswersEmptyObject() throws Exception {
        try (Conversation c = open()) {
            assertThat(c.call("p", "ping", "{}")).isEqualTo(Json.object());
        }
    }

    // ---------------------------------------------------------------- stress

    /**
     * Thousands of pipelined requests over dozens of sessions, with tool calls answered as they come and random
     * cancels: every request id is answered exactly once, and nothing else is answered.
     */
    @Test
    default void stressEveryRequestIsAnsweredExactlyOnce() throws Exception {
        java.util.Random random = new java.util.Random(20261202L);
        int sessions = 24;
        int requests = 3000;
        ProtocolClient client = start("--tool-timeout", "30");
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
    default void shutdownCancelsRunningWorkAnswersItFirstThenRejectsEverything() throws Exception {
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
    default void endOfInputWaitsForOutstandingWorkThenStops() throws Exception {
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
    default void stdoutCarriesOnlyProtocolMessages() throws Exception {
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
