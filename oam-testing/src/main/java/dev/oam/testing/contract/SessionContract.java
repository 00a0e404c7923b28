package dev.oam.testing.contract;

import static dev.oam.testing.contract.ContractSupport.BELL_TOOL;
import static dev.oam.testing.contract.ContractSupport.GATE_TOOL;
import static dev.oam.testing.contract.ContractSupport.code;
import static dev.oam.testing.contract.ContractSupport.create;
import static dev.oam.testing.contract.ContractSupport.scripted;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.Conversation;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The session part of the protocol contract: {@code session/create} and its validation, {@code session/delete},
 * {@code session/reset}, {@code session/list} and the setters.
 */
public interface SessionContract extends ContractFixture {
    // ---------------------------------------------------------------- session/create

    @Test
    default void generatedSessionIdsCountOnlyGeneratedIds() throws Exception {
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
    default void duplicateSessionIdsAreRejected() throws Exception {
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
    default void sessionLimitIsEnforced() throws Exception {
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
    default void theDefaultLimitIs64Sessions() throws Exception {
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
    default void sessionIdsMustBePrintableAndAtMost128Characters() throws Exception {
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
    default void everyOptionIsValidatedWithItsName() throws Exception {
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
                // this edition's extension: the whole sampler chain, its members named in the error
                {"sampler", "\"minP\""},
                {"sampler.minP", "{\"minP\":1.5}"},
                {"sampler.topK", "{\"topK\":-1}"},
                {"sampler.topK", "{\"topK\":2.5}"},
                {"sampler.topP", "{\"topP\":0}"},
                {"sampler.typicalP", "{\"typicalP\":\"high\"}"},
                {"sampler.repeatPenalty", "{\"repeatPenalty\":0}"},
                {"sampler.repeatLastN", "{\"repeatLastN\":-2}"},
                {"sampler.presencePenalty", "{\"presencePenalty\":3}"},
                {"sampler.frequencyPenalty", "{\"frequencyPenalty\":-2.5}"},
                {"sampler.dry", "{\"dry\":0.8}"},
                {"sampler.dry.multiplier", "{\"dry\":{\"base\":2}}"},
                {"sampler.dry.base", "{\"dry\":{\"multiplier\":0.8,\"base\":0.5}}"},
                {"sampler.dry.allowedLength", "{\"dry\":{\"multiplier\":0.8,\"allowedLength\":0}}"},
                {"sampler.dry.penaltyLastN", "{\"dry\":{\"multiplier\":0.8,\"penaltyLastN\":-5}}"},
                {"sampler.dry.sequenceBreakers", "{\"dry\":{\"multiplier\":0.8,\"sequenceBreakers\":[1]}}"},
                {"sampler.dry.sequenceBreakers", "{\"dry\":{\"multiplier\":0.8,\"sequenceBreakers\":[\"\"]}}"},
                {"sampler.xtc", "{\"xtc\":{\"probability\":0.5}}"},
                {"sampler.xtc.probability", "{\"xtc\":{\"probability\":2,\"threshold\":0.1}}"},
                {"sampler.seed", "{\"seed\":1.5}"},
                {"sampler.minp", "{\"minp\":0.1}"},
            };
            int id = 0;
            for (String[] bad : cases) {
                id++;
                JsonNode error = c.request(
                                id,
                                "session/create",
                                "{\"model\":\"scripted\",\"options\":{\"" + bad[0].replaceFirst("\\..*", "") + "\":"
                                        + bad[1] + "}}")
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
            JsonNode chain = c.call(
                    103,
                    "session/create",
                    "{\"model\":\"scripted\",\"options\":{\"temperature\":0.7,\"sampler\":{\"topK\":40,\"topP\":0.95,"
                            + "\"minP\":0.05,\"typicalP\":1,\"repeatPenalty\":1.1,\"repeatLastN\":64,"
                            + "\"presencePenalty\":0.1,\"frequencyPenalty\":0.1,\"dry\":{\"multiplier\":0.8,"
                            + "\"base\":1.75,\"allowedLength\":2,\"penaltyLastN\":-1,\"sequenceBreakers\":[\"\\n\",\":\"]},"
                            + "\"xtc\":{\"probability\":0.5,\"threshold\":0.1},\"seed\":7}}}");
            assertThat(chain.path("warnings")).isEmpty();
            JsonNode turn = c.call(
                    104,
                    "session/respond",
                    "{\"session\":" + chain.path("session") + ",\"prompt\":\"Hi\",\"sampler\":{\"minP\":0.1}}");
            assertThat(turn.path("warnings").isMissingNode()
                            || turn.path("warnings").isEmpty())
                    .as("a turn's own sampler is read, not reported as unknown")
                    .isTrue();
            JsonNode badTurn = c.request(
                            105,
                            "session/respond",
                            "{\"session\":" + chain.path("session") + ",\"prompt\":\"Hi\",\"sampler\":{\"minP\":-1}}")
                    .error(105);
            assertThat(badTurn.path("code").asInt()).isEqualTo(-32602);
            assertThat(badTurn.path("message").asText()).contains("'sampler.minP'");
        }
    }

    @Test
    default void toolDefinitionsAreValidated() throws Exception {
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
    default void warningsNameMissingDescriptionsAndTooManyTools() throws Exception {
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
    default void scriptedModelsCanBeDisabledByTheHost() throws Exception {
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
    default void badScriptsAndModelsAreInvalidParams() throws Exception {
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

    @Test
    default void deleteCancelsAndFreesTheSession() throws Exception {
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
    default void resetClearsTheConversationAndNoteButKeepsInstructionsAndTools() throws Exception {
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
    default void sessionListHasEveryField() throws Exception {
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
    default void settersAnswerWithTheSessionAndApplyFromTheNextTurn() throws Exception {
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
}
