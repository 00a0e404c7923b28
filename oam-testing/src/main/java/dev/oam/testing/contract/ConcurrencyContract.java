package dev.oam.testing.contract;

import static dev.oam.testing.contract.ContractSupport.BELL_TOOL;
import static dev.oam.testing.contract.ContractSupport.GATE_TOOL;
import static dev.oam.testing.contract.ContractSupport.code;
import static dev.oam.testing.contract.ContractSupport.create;
import static dev.oam.testing.contract.ContractSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.Conversation;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The concurrency part of the protocol contract: cancellation, per-session order, sessions in parallel and pipelined
 * requests.
 */
public interface ConcurrencyContract extends ContractFixture {
    @Test
    default void cancelWhileAToolCallIsOutstandingLeavesNoTrace() throws Exception {
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
    default void cancelAsANotificationCancelsWithoutAnAnswer() throws Exception {
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
    default void cancelCountsTheRunningAndEveryQueuedOperationAndAnswersQueuedOnesAtOnce() throws Exception {
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
    default void perSessionOperationsRunInArrivalOrder() throws Exception {
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
    default void longTurnsDoNotBlockOtherSessionsOrRequests() throws Exception {
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
    default void sessionsRunInParallel() throws Exception {
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
    default void pipelinedCreateAndRespondWork() throws Exception {
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
}
