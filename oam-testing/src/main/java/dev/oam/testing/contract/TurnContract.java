package dev.oam.testing.contract;

import static dev.oam.testing.contract.ContractSupport.BELL_TOOL;
import static dev.oam.testing.contract.ContractSupport.code;
import static dev.oam.testing.contract.ContractSupport.create;
import static dev.oam.testing.contract.ContractSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The turn part of the protocol contract: plain and streamed turns, their validation, and every step form, failure and
 * retry of the scripted model (docs/PROTOCOL.md, "Scripted model").
 */
public interface TurnContract extends ContractFixture {
    // ---------------------------------------------------------------- turns

    @Test
    default void aPlainTurnAnswersWithTextUsageAndSteps() throws Exception {
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
    default void respondValidatesItsParams() throws Exception {
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
    default void streamingSendsEventsBeforeTheResponseAndDeltasAddUp() throws Exception {
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
    default void eventRequestIdsUsePlainDigits() throws Exception {
        try (Conversation c = open()) {
            create(c, "g", "[]", "{}", "[{\"text\":\"ok\"}]");
            c.send(
                    "{\"jsonrpc\":\"2.0\",\"id\":3.0,\"method\":\"session/respond\",\"params\":{\"session\":\"g\",\"prompt\":\"x\",\"stream\":true}}");
            c.result(3);
            JsonNode event = c.await(m -> Conversation.isEvent(m, "session/event"), "event");
            assertThat(Json.write(event.path("params").path("requestId"))).isEqualTo("3");
        }
    }

    // ---------------------------------------------------------------- scripted model

    @Test
    default void everyAgentErrorCodeCanBeScripted() throws Exception {
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
    default void transientFailuresAreRetriedWithinMaxAttempts() throws Exception {
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
    default void retriesNeverHappenAfterAToolRan() throws Exception {
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
    default void scriptedShorthandAndFallback() throws Exception {
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
    default void jsonStepsAnswerAsJsonText() throws Exception {
        try (Conversation c = open()) {
            create(c, "j", "[]", "{}", "[{\"json\":{\"choice\":\"refuse\",\"n\":1}}]");
            JsonNode turn = c.call(2, "session/respond", "{\"session\":\"j\",\"prompt\":\"x\"}");
            assertThat(turn.path("text").asText()).isEqualTo("{\"choice\":\"refuse\",\"n\":1}");
        }
    }

    @Test
    default void templatePlaceholdersSeeThisTurnsToolOutputs() throws Exception {
        try (Conversation c = open()) {
            create(
                    c,
                    "t",
                    "[" + BELL_TOOL + "]",
                    "{}",
                    "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]},{\"toolCalls\":[{\"name\":\"ring_bell\"}]},"
                            + "{\"template\":\"[{prompt}] [{toolOutput}] "
                            + "[{toolOutputs}]\"},{\"template\":\"[{toolOutput}]\"}]");
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
    default void aFailedTurnLeavesNoTrace() throws Exception {
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
    default void toolCallsInADisallowedStepFailTheTurnClearly() throws Exception {
        try (Conversation c = open()) {
            create(c, "x", "[]", "{}", "[{\"toolCalls\":[{\"name\":\"ring_bell\"}]}]");
            JsonNode error = c.request(2, "session/respond", "{\"session\":\"x\",\"prompt\":\"x\"}")
                    .error(2);
            assertThat(error.path("code").asInt()).isEqualTo(-32012);
            assertThat(error.path("message").asText()).contains("disabled");
        }
    }
}
