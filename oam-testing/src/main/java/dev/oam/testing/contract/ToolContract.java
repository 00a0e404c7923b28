package dev.oam.testing.contract;

import static dev.oam.testing.contract.ContractSupport.BELL_TOOL;
import static dev.oam.testing.contract.ContractSupport.GATE_TOOL;
import static dev.oam.testing.contract.ContractSupport.create;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The client-tool part of the protocol contract: tool calls with and without streaming, every reply form, tool choice,
 * limits and timeouts.
 */
public interface ToolContract extends ContractFixture {
    @Test
    default void forcedToolAppliesToFirstStepOnly() throws Exception {
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
    default void toolCallsAreSentWithoutStreamingToo() throws Exception {
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
    default void everyToolReplyFormReachesTheModelAsSpecified() throws Exception {
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
    default void parallelCallsAreSentBackToBackAndRecordedInCompletionOrder() throws Exception {
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
    default void explicitChoiceHidesRespondDirectly() throws Exception {
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
    default void namedToolChoiceEnablesOnlyThatToolAndIsCheckedWhenTheTurnStarts() throws Exception {
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
    default void noneAndDisabledToolsAreHiddenFromTheModel() throws Exception {
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
    default void disabledToolsCannotBeCalled() throws Exception {
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
    default void maxToolCallsGivesExtraCallsAnErrorOutput() throws Exception {
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
    default void maxToolRoundsDisablesToolsAfterwards() throws Exception {
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
    default void aToolTimeoutSendsToolCancelAndTheModelSeesAnError() throws Exception {
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
    default void theSessionToolTimeoutAppliesWhenTheToolHasNone() throws Exception {
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
    default void theHostToolTimeoutFlagSetsTheDefault() throws Exception {
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
}
