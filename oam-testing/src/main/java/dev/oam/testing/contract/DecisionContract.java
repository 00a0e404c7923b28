package dev.oam.testing.contract;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The contract for {@code decision/decide}, {@code decision/decideMany} and {@code content/generate} (docs/PROTOCOL.md,
 * "Decisions and content"; docs/GAMES.md), played with scripted models; the {@code content/generate} tests are the
 * default methods of {@link ContentContract}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class DecisionContract extends ContractSupport implements ContentContract {

    /** A step answering a decision with the latest tool output as both the choice and the reason. */
    private static final String ECHO_CHOICE =
            template("{\"reasoning\":\"saw {toolOutput}\",\"choice\":\"{toolOutput}\",\"confidence\":70}");

    /** For the test class that runs this contract against its transport. */
    protected DecisionContract() {}

    private static String template(String text) {
        return "{\"template\":" + Json.write(TextNode.valueOf(text)) + "}";
    }

    private static String answer(String choice, String reasoning, Object confidence) {
        return "{\"json\":{\"reasoning\":\"" + reasoning + "\",\"choice\":\"" + choice + "\",\"confidence\":"
                + confidence + "}}";
    }

    /** The JSON text on one line (requests are written as readable text blocks). */
    private static String line(String json) {
        return Json.write(Conversation.object(json));
    }

    private static List<String> keys(JsonNode node) {
        List<String> keys = new ArrayList<>();
        node.fieldNames().forEachRemaining(keys::add);
        return keys;
    }

    private static void assertZeroUsage(JsonNode usage) {
        assertThat(usage.toString())
                .isEqualTo("{\"inputTokens\":0,\"cachedInputTokens\":0,\"outputTokens\":0,\"totalTokens\":0}");
    }

    private static long toolCallsSoFar(Conversation c) {
        return c.messages().stream()
                .filter(m -> "tool/call".equals(m.path("method").asText()))
                .count();
    }

    // ---------------------------------------------------------------- decision/decide

    @Test
    void aDecisionAnswersWithTheResultKeysInOrder() throws Exception {
        try (Conversation c = open()) {
            JsonNode result = c.call(1, "decision/decide", line("""
                    {"situation": "Three wolves circle Snik.",
                     "options": [{"id": "flee", "description": "Run into the woods"}, {"id": "fight", "description": "Draw the knife"}],
                     "model": {"type": "scripted", "steps": [{"json": {"confidence": 80, "choice": "flee", "reasoning": "Snik is timid."}}]}}
                    """));
            assertThat(keys(result))
                    .containsExactly("optionID", "reasoning", "confidence", "toolCalls", "usage", "isFallback");
            assertThat(result.path("optionID").asText()).isEqualTo("flee");
            assertThat(result.path("reasoning").asText()).isEqualTo("Snik is timid.");
            assertThat(result.path("confidence").asInt()).isEqualTo(80);
            assertThat(result.path("toolCalls").toString()).isEqualTo("[]");
            assertThat(result.path("isFallback").asBoolean(true)).isFalse();
            assertThat(keys(result.path("usage")))
                    .containsExactly("inputTokens", "cachedInputTokens", "outputTokens", "totalTokens");
            assertThat(result.path("usage").path("totalTokens").asInt()).isPositive();
        }
    }

    @Test
    void optionsMayBeIdStringsAreTrimmedAndTheChoiceIsMatchedExactlyThenIgnoringCase() throws Exception {
        try (Conversation c = open()) {
            JsonNode trimmed = c.call(1, "decision/decide", line("""
                    {"situation": {"enemy": "knight", "distance": 3}, "options": [" flee ", "fight"],
                     "model": {"type": "scripted", "steps": [%s]}}""".formatted(answer("FLEE", "Too strong.", 60))));
            assertThat(trimmed.path("optionID").asText()).isEqualTo("flee");
            String bothCases = "{\"situation\": \"x\", \"options\": [\"Flee\", \"flee\"], \"model\": {\"type\": "
                    + "\"scripted\", \"steps\": [%s]}}";
            assertThat(c.call(2, "decision/decide", line(bothCases.formatted(answer("flee", "r", 60))))
                            .path("optionID")
                            .asText())
                    .isEqualTo("flee");
            assertThat(c.call(3, "decision/decide", line(bothCases.formatted(answer("FLEE", "r", 60))))
                            .path("optionID")
                            .asText())
                    .isEqualTo("Flee");
        }
    }

    @Test
    void confidenceIsRoundedClampedAndFiftyWhenMissing() throws Exception {
        try (Conversation c = open()) {
            JsonNode results = c.call(1, "decision/decideMany", line("""
                    {"maxConcurrency": 1,
                     "requests": [{"situation": "a", "options": ["x", "y"]}, {"situation": "b", "options": ["x", "y"]},
                                  {"situation": "c", "options": ["x", "y"]}, {"situation": "d", "options": ["x", "y"]}],
                     "model": {"type": "scripted", "steps": [%s, %s, %s, {"json": {"reasoning": "r", "choice": "y"}}]}}
                    """.formatted(
                                    answer("x", "r", 250), answer("y", "r", -20), answer("x", "r", 66.5))))
                    .path("results");
            assertThat(results).extracting(r -> r.path("confidence").asInt()).containsExactly(100, 0, 67, 50);
            assertThat(results).extracting(r -> r.path("optionID").asText()).containsExactly("x", "y", "x", "y");
        }
    }

    @Test
    void aChoiceOfNoOptionFailsWithGenerationFailed() throws Exception {
        try (Conversation c = open()) {
            JsonNode error = c.request(1, "decision/decide", line("""
                    {"situation": "Music plays.", "options": ["flee", "fight"],
                     "model": {"type": "scripted", "steps": [%s]}}""".formatted(answer("dance", "r", 50))))
                    .error(1);
            assertThat(error.path("code").asInt()).isEqualTo(-32012);
            assertThat(code(error)).isEqualTo("generation_failed");
            assertThat(error.path("message").asText()).contains("dance");
        }
    }

    @Test
    void aSingleOptionComesBackAtOnceWithoutConsumingAModelStep() throws Exception {
        try (Conversation c = open()) {
            JsonNode only = c.call(1, "decision/decide", line("""
                    {"situation": "Nothing to do.", "options": [{"id": " wait ", "description": "Stand still"}],
                     "model": {"type": "scripted", "steps": [{"error": "guardrail_violation"}]}}"""));
            assertThat(keys(only))
                    .containsExactly("optionID", "reasoning", "confidence", "toolCalls", "usage", "isFallback");
            assertThat(only.path("optionID").asText()).isEqualTo("wait");
            assertThat(only.path("reasoning").asText()).isEmpty();
            assertThat(only.path("confidence").asInt()).isEqualTo(100);
            assertThat(only.path("toolCalls").toString()).isEqualTo("[]");
            assertZeroUsage(only.path("usage"));
            assertThat(only.path("isFallback").asBoolean(true)).isFalse();
            JsonNode results = c.call(2, "decision/decideMany", line("""
                    {"maxConcurrency": 1,
                     "requests": [{"situation": "a", "options": ["wait"]}, {"situation": "b", "options": ["left", "right"]}],
                     "model": {"type": "scripted", "steps": [%s]}}""".formatted(
                                    answer("right", "The first step is mine.", 90))))
                    .path("results");
            assertThat(results.get(0).path("optionID").asText()).isEqualTo("wait");
            assertThat(results.get(1).path("optionID").asText()).isEqualTo("right");
            assertThat(results.get(1).path("reasoning").asText()).isEqualTo("The first step is mine.");
        }
    }

    @Test
    void guardrailsAndRefusalsGiveTheFallbackOptionWhenThereIsOne() throws Exception {
        try (Conversation c = open()) {
            String params = "{\"situation\": \"Blood everywhere.\", \"options\": [\"flee\", \"fight\"], %s"
                    + "\"model\": {\"type\": \"scripted\", \"steps\": [{\"error\": \"%s\"}]}}";
            JsonNode answered = c.call(
                            "answered",
                            "decision/decide",
                            line(("{\"situation\": \"Blood everywhere.\", "
                                            + "\"options\": [\"flee\", \"fight\"], \"fallbackOptionID\": \" "
                                            + "flee \", \"model\": {\"type\": \"scripted\", "
                                            + "\"steps\": [%s]}}")
                                    .formatted(answer("fight", "r", 50))))
                    .path("usage");
            for (String error : List.of("guardrail_violation", "refusal")) {
                JsonNode result = c.call(
                        error, "decision/decide", line(params.formatted("\"fallbackOptionID\": \" flee \",", error)));
                assertThat(keys(result))
                        .as(error)
                        .containsExactly("optionID", "reasoning", "confidence", "toolCalls", "usage", "isFallback");
                assertThat(result.path("optionID").asText()).isEqualTo("flee");
                assertThat(result.path("reasoning").asText()).isEmpty();
                assertThat(result.path("confidence").asInt()).isZero();
                assertThat(result.path("toolCalls").toString()).isEqualTo("[]");
                // The blocked step read the whole prompt (as the answered one did) and wrote nothing.
                assertThat(result.path("usage").toString())
                        .isEqualTo("{\"inputTokens\":"
                                + answered.path("inputTokens").asInt()
                                + ",\"cachedInputTokens\":0,\"outputTokens\":0,\"totalTokens\":"
                                + answered.path("inputTokens").asInt() + "}");
                assertThat(result.path("isFallback").asBoolean()).isTrue();
            }
            JsonNode blocked = c.request(3, "decision/decide", line(params.formatted("", "guardrail_violation")))
                    .error(3);
            assertThat(blocked.path("code").asInt()).isEqualTo(-32002);
            assertThat(code(blocked)).isEqualTo("guardrail_violation");
            JsonNode other = c.request(
                            4,
                            "decision/decide",
                            line(params.formatted("\"fallbackOptionID\": \"flee\",", "context_size_exceeded")))
                    .error(4);
            assertThat(other.path("code").asInt())
                    .as("only guardrails and refusals fall back")
                    .isEqualTo(-32004);
        }
    }

    @Test
    void theUsageOfAnAttemptAskedAgainIsCounted() throws Exception {
        try (Conversation c = open()) {
            String params = "{\"situation\": \"A locked door.\", \"options\": [\"pick\", \"leave\"], "
                    + "\"model\": {\"type\": \"scripted\", \"steps\": [%s]}}";
            JsonNode once = c.call(1, "decision/decide", line(params.formatted(answer("pick", "r", 50))))
                    .path("usage");
            // A transient failure is asked again (maxAttempts 2): the failed attempt read the prompt too.
            JsonNode twice = c.call(
                            2,
                            "decision/decide",
                            line(params.formatted("{\"error\": \"generation_failed\"}, " + answer("pick", "r", 50))))
                    .path("usage");
            assertThat(twice.path("inputTokens").asInt())
                    .isEqualTo(2 * once.path("inputTokens").asInt());
            assertThat(twice.path("outputTokens").asInt())
                    .isEqualTo(once.path("outputTokens").asInt());
        }
    }

    @Test
    void aClientToolRunsDuringTheDecision() throws Exception {
        try (Conversation c = open()) {
            c.request(7, "decision/decide", line("""
                    {"situation": "A noise in the dark.", "options": ["flee", "fight"], "tools": [%s], "toolChoice": "required",
                     "model": {"type": "scripted", "steps": [%s, %s]}}""".formatted(SCOUT_TOOL, SCOUT_CALL, ECHO_CHOICE)));
            JsonNode call = c.toolCall();
            assertThat(keys(call.path("params"))).containsExactly("requestId", "call");
            assertThat(call.path("params").path("requestId").asInt()).isEqualTo(7);
            assertThat(call.path("params").path("call").path("name").asText()).isEqualTo("scout");
            c.reply(call, "{\"output\":\"flee\"}");
            JsonNode result = c.result(7);
            assertThat(result.path("optionID").asText()).isEqualTo("flee");
            assertThat(result.path("reasoning").asText()).isEqualTo("saw flee");
            assertThat(result.path("confidence").asInt()).isEqualTo(70);
            JsonNode record = result.path("toolCalls").get(0);
            assertThat(record.path("call").path("name").asText()).isEqualTo("scout");
            assertThat(record.path("output").asText()).isEqualTo("flee");
            assertThat(record.path("isError").asBoolean(true)).isFalse();
            assertThat(c.indexOf(call)).isLessThan(c.indexOf(c.response(7)));
        }
    }

    @Test
    void withoutToolsTheModelMayNotCallOneAndToolsStopAfterTwoRoundsByDefault() throws Exception {
        try (Conversation c = open()) {
            JsonNode noTools = c.request(1, "decision/decide", line("""
                    {"situation": "x", "options": ["flee", "fight"], "toolChoice": "required",
                     "model": {"type": "scripted", "steps": [%s]}}""".formatted(SCOUT_CALL)))
                    .error(1);
            assertThat(noTools.path("code").asInt())
                    .as("tool choice none without tools")
                    .isEqualTo(-32012);
            c.request(2, "decision/decide", line("""
                    {"situation": "x", "options": ["flee", "fight"], "tools": [%s],
                     "model": {"type": "scripted", "steps": [%s, %s, %s]}}""".formatted(SCOUT_TOOL, SCOUT_CALL, SCOUT_CALL, SCOUT_CALL)));
            c.reply(c.toolCall(), "{\"output\":\"one\"}");
            c.reply(c.toolCall(), "{\"output\":\"two\"}");
            JsonNode third = c.error(2);
            assertThat(third.path("code").asInt())
                    .as("a third tool round is past maxToolRounds 2")
                    .isEqualTo(-32012);
            c.request(3, "decision/decide", line("""
                    {"situation": "x", "options": ["flee", "fight"], "tools": [%s], "maxToolRounds": 3,
                     "model": {"type": "scripted", "steps": [%s, %s, %s, %s]}}""".formatted(
                            SCOUT_TOOL, SCOUT_CALL, SCOUT_CALL, SCOUT_CALL, ECHO_CHOICE)));
            c.reply(c.toolCall(), "{\"output\":\"one\"}");
            c.reply(c.toolCall(), "{\"output\":\"two\"}");
            c.reply(c.toolCall(), "{\"output\":\"fight\"}");
            JsonNode result = c.result(3);
            assertThat(result.path("optionID").asText()).isEqualTo("fight");
            assertThat(result.path("toolCalls")).hasSize(3);
        }
    }

    @Test
    void anActorIsAPersonaOrTheIdOfAnExistingNpc() throws Exception {
        try (Conversation c = open()) {
            JsonNode persona = c.call(1, "decision/decide", line("""
                    {"situation": "A merchant offers a deal.", "options": ["accept", "haggle"],
                     "actor": {"name": "Snik", "role": "a goblin scout", "personality": "Greedy", "goals": ["Get rich"]},
                     "context": {"gold": 3}, "model": {"type": "scripted", "steps": [%s]}}""".formatted(answer("haggle", "Greedy.", 75))));
            assertThat(persona.path("optionID").asText()).isEqualTo("haggle");
            assertThat(persona.has("warnings")).isFalse();
            JsonNode missing = c.request(2, "decision/decide", line("""
                    {"situation": "x", "options": ["a", "b"], "actor": "ghost", "model": "scripted"}""")).error(2);
            assertThat(missing.path("code").asInt()).isEqualTo(-32050);
            assertThat(code(missing)).isEqualTo("npc_not_found");
            assertThat(missing.path("data").path("npc").asText()).isEqualTo("ghost");
        }
    }

    @Test
    void unknownParametersAndFieldsAreWarnedAfterTheResult() throws Exception {
        try (Conversation c = open()) {
            JsonNode result = c.call(1, "decision/decide", line("""
                    {"situation": "x", "mood": "grim", "options": [{"id": "a", "weight": 2}, "b"],
                     "actor": {"name": "Snik", "colour": "green"},
                     "model": {"type": "scripted", "steps": [%s]}}""".formatted(answer("b", "r", 10))));
            assertThat(keys(result))
                    .containsExactly(
                            "optionID", "reasoning", "confidence", "toolCalls", "usage", "isFallback", "warnings");
            assertThat(result.path("warnings"))
                    .extracting(JsonNode::asText)
                    .containsExactly(
                            "Unknown parameter 'mood' was ignored.",
                            "Unknown parameter 'actor.colour' was ignored.",
                            "Unknown parameter 'options[0].weight' was ignored.");
        }
    }

    @Test
    void invalidParametersFailBeforeAnyModelCallNamingTheParameter() throws Exception {
        try (Conversation c = open()) {
            String[][] cases = {
                {"{\"options\": [\"a\", \"b\"]}", "'situation'"},
                {"{\"situation\": \"x\"}", "'options'"},
                {"{\"situation\": \"x\", \"options\": []}", "'options'"},
                {"{\"situation\": \"x\", \"options\": \"a\"}", "'options'"},
                {"{\"situation\": \"x\", \"options\": [\"a\", 5]}", "'options[1]'"},
                {"{\"situation\": \"x\", \"options\": [{\"description\": \"d\"}, \"b\"]}", "'options[0].id'"},
                {"{\"situation\": \"x\", \"options\": [{\"id\": 5}, \"b\"]}", "'options[0].id'"},
                {"{\"situation\": \"x\", \"options\": [\"a\", \"  \"]}", "'options[1]'"},
                {"{\"situation\": \"x\", \"options\": [\"a\", \" a \"]}", "'options[1]'"},
                {"{\"situation\": \"x\", \"options\": [{\"id\": \"a\"}, {\"id\": \"a \"}]}", "'options[1].id'"},
                {
                    "{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"fallbackOptionID\": \"hide\"}",
                    "'fallbackOptionID'"
                },
                {"{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"fallbackOptionID\": 1}", "'fallbackOptionID'"},
                {"{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"actor\": 5}", "'actor'"},
                {
                    "{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"actor\": {\"role\": \"a goblin\"}}",
                    "'actor.name'"
                },
                {"{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"tools\": \"scout\"}", "'tools'"},
                {
                    "{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"tools\": [{\"name\": \"bad name\"}]}",
                    "'tools[0].name'"
                },
                {"{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"toolChoice\": \"sometimes\"}", "'toolChoice'"},
                {
                    "{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"toolChoice\": {\"tool\": \"scout\"}}",
                    "'toolChoice'"
                },
                {"{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"maxToolRounds\": -1}", "'maxToolRounds'"},
                {"{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"temperature\": -1}", "'temperature'"},
                {"{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"instructions\": 5}", "'instructions'"},
                {
                    "{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"toolTimeoutSeconds\": 86401}",
                    "'toolTimeoutSeconds'"
                },
                {"{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"model\": {\"type\": \"nope\"}}", "'model.type'"
                },
                {
                    "{\"situation\": \"x\", \"options\": [\"a\", \"b\"], \"model\": {\"type\": "
                            + "\"scripted\", \"steps\": 5}}",
                    "'model.steps'"
                },
                {"{}", "'situation'"},
            };
            int id = 0;
            for (String[] bad : cases) {
                id++;
                JsonNode error = c.request(id, "decision/decide", line(bad[0])).error(id);
                assertThat(error.path("code").asInt()).as(bad[0]).isEqualTo(-32602);
                assertThat(code(error)).isEqualTo("invalid_params");
                assertThat(error.path("message").asText()).as(bad[0]).contains(bad[1]);
            }
            String[][] many = {
                {"{}", "'requests'"},
                {"{\"requests\": {}}", "'requests'"},
                {"{\"requests\": [], \"maxConcurrency\": 0}", "'maxConcurrency'"},
                {"{\"requests\": [], \"maxToolRounds\": \"two\"}", "'maxToolRounds'"},
                {"{\"requests\": [], \"model\": 5}", "'model'"},
            };
            for (String[] bad : many) {
                id++;
                JsonNode error =
                        c.request(id, "decision/decideMany", line(bad[0])).error(id);
                assertThat(error.path("code").asInt()).as(bad[0]).isEqualTo(-32602);
                assertThat(error.path("message").asText()).as(bad[0]).contains(bad[1]);
            }
            assertThat(c.call(++id, "decision/decideMany", "{\"requests\":[]}").toString())
                    .isEqualTo("{\"results\":[]}");
        }
    }

    // ---------------------------------------------------------------- decision/decideMany

    @Test
    void decideManyKeepsRequestOrderAndEachFailureInItsItem() throws Exception {
        try (Conversation c = open()) {
            JsonNode result = c.call(1, "decision/decideMany", line("""
                    {"maxConcurrency": 1, "mood": "grim",
                     "requests": [{"situation": "first", "options": ["a", "b"]},
                                  {"situation": "no options"},
                                  {"situation": "blocked", "options": ["a", "b"]},
                                  {"situation": "last", "options": ["a", "b"], "colour": "red"},
                                  {"situation": "as a ghost", "options": ["a", "b"], "actor": "ghost"},
                                  5],
                     "model": {"type": "scripted", "steps": [%s, {"error": "guardrail_violation"}, %s]}}
                    """.formatted(
                            answer("a", "first step", 11), answer("b", "third step", 33))));
            assertThat(keys(result)).containsExactly("results", "warnings");
            assertThat(result.path("warnings"))
                    .extracting(JsonNode::asText)
                    .containsExactly("Unknown parameter 'mood' was ignored.");
            JsonNode results = result.path("results");
            assertThat(results).hasSize(6);
            assertThat(results.get(0).path("optionID").asText()).isEqualTo("a");
            assertThat(results.get(0).path("reasoning").asText()).isEqualTo("first step");
            assertThat(keys(results.get(1))).containsExactly("error");
            assertThat(keys(results.get(1).path("error"))).containsExactly("code", "message", "data");
            assertThat(results.get(1).path("error").path("code").asInt()).isEqualTo(-32602);
            assertThat(results.get(1).path("error").path("message").asText()).contains("'requests[1].options'");
            assertThat(code(results.get(1).path("error"))).isEqualTo("invalid_params");
            assertThat(results.get(2).path("error").path("code").asInt()).isEqualTo(-32002);
            assertThat(code(results.get(2).path("error"))).isEqualTo("guardrail_violation");
            assertThat(results.get(3).path("optionID").asText()).isEqualTo("b");
            assertThat(results.get(3).path("reasoning").asText()).isEqualTo("third step");
            assertThat(keys(results.get(3)))
                    .containsExactly(
                            "optionID", "reasoning", "confidence", "toolCalls", "usage", "isFallback", "warnings");
            assertThat(results.get(3).path("warnings").get(0).asText())
                    .isEqualTo("Unknown parameter 'requests[3].colour' was ignored.");
            assertThat(results.get(4).path("error").path("code").asInt()).isEqualTo(-32050);
            assertThat(results.get(4).path("error").path("data").path("npc").asText())
                    .isEqualTo("ghost");
            assertThat(results.get(5).path("error").path("message").asText()).contains("'requests[5]'");
        }
    }

    @Test
    void decideManySharesEngineSettingsThatEachRequestMayOverride() throws Exception {
        try (Conversation c = open()) {
            c.request(1, "decision/decideMany", line("""
                    {"maxConcurrency": 1, "maxToolRounds": 0,
                     "requests": [{"situation": "no rounds left", "options": ["a", "b"], "tools": [%1$s]},
                                  {"situation": "own model", "options": ["a", "b"],
                                   "model": {"type": "scripted", "steps": [%2$s]}},
                                  {"situation": "one round", "options": ["a", "b"], "tools": [%1$s], "maxToolRounds": 1}],
                     "model": {"type": "scripted", "steps": [%3$s, %3$s, %4$s]}}
                    """.formatted(
                            SCOUT_TOOL, answer("a", "own script", 1), SCOUT_CALL, ECHO_CHOICE)));
            JsonNode call = c.toolCall();
            assertThat(call.path("params").path("index").asInt()).isEqualTo(2);
            c.reply(call, "{\"output\":\"b\"}");
            JsonNode results = c.result(1).path("results");
            assertThat(results.get(0).path("error").path("code").asInt())
                    .as("shared maxToolRounds 0")
                    .isEqualTo(-32012);
            assertThat(results.get(1).path("reasoning").asText()).isEqualTo("own script");
            assertThat(results.get(2).path("optionID").asText()).isEqualTo("b");
            assertThat(results.get(2).path("reasoning").asText()).isEqualTo("saw b");
        }
    }

    @Test
    void decideManyRunsAtMostMaxConcurrencyDecisionsAtOnceTwoByDefault() throws Exception {
        try (Conversation c = open()) {
            String item = "{\"situation\": \"s\", \"options\": [\"flee\", \"fight\", \"beg\"], \"tools\": ["
                    + SCOUT_TOOL + "], \"toolChoice\": \"required\"}";
            // Steps are shared in consumption order: both running decisions call the tool, the first one answered
            // takes the answer step, then the third decision starts and calls the tool.
            c.request("crowd", "decision/decideMany", line("""
                    {"requests": [%1$s, %1$s, %1$s], "model": {"type": "scripted", "steps": [%2$s, %2$s, %3$s, %2$s, %3$s, %3$s]}}
                    """.formatted(item, SCOUT_CALL, ECHO_CHOICE)));
            JsonNode first = c.toolCall();
            JsonNode second = c.toolCall();
            List<Integer> running = List.of(
                    first.path("params").path("index").asInt(),
                    second.path("params").path("index").asInt());
            assertThat(running).containsExactlyInAnyOrder(0, 1);
            assertThat(keys(first.path("params"))).containsExactly("index", "requestId", "call");
            assertThat(first.path("params").path("requestId").asText()).isEqualTo("crowd");
            c.sync();
            assertThat(toolCallsSoFar(c))
                    .as("the third decision waits for a free slot")
                    .isEqualTo(2);
            JsonNode zero = running.get(0) == 0 ? first : second;
            JsonNode one = running.get(0) == 0 ? second : first;
            c.reply(zero, "{\"output\":\"flee\"}");
            JsonNode third = c.toolCall();
            assertThat(third.path("params").path("index").asInt()).isEqualTo(2);
            c.reply(one, "{\"output\":\"fight\"}");
            c.reply(third, "{\"output\":\"beg\"}");
            JsonNode results = c.result("crowd").path("results");
            assertThat(results).extracting(r -> r.path("optionID").asText()).containsExactly("flee", "fight", "beg");
            assertThat(results)
                    .extracting(r -> r.path("reasoning").asText())
                    .containsExactly("saw flee", "saw fight", "saw beg");
        }
    }

    @Test
    void decideManyWithMaxConcurrencyOneRunsOneDecisionAfterAnother() throws Exception {
        try (Conversation c = open()) {
            String item = "{\"situation\": \"s\", \"options\": [\"flee\", \"fight\"], \"tools\": [" + SCOUT_TOOL
                    + "], \"toolChoice\": \"required\"}";
            c.request(1, "decision/decideMany", line("""
                    {"maxConcurrency": 1, "requests": [%1$s, %1$s], "model": {"type": "scripted", "steps": [%2$s, %3$s, %2$s, %3$s]}}
                    """.formatted(item, SCOUT_CALL, ECHO_CHOICE)));
            JsonNode first = c.toolCall();
            assertThat(first.path("params").path("index").asInt()).isZero();
            c.sync();
            assertThat(toolCallsSoFar(c)).isEqualTo(1);
            c.reply(first, "{\"output\":\"fight\"}");
            JsonNode second = c.toolCall();
            assertThat(second.path("params").path("index").asInt()).isEqualTo(1);
            c.reply(second, "{\"output\":\"flee\"}");
            assertThat(c.result(1).path("results"))
                    .extracting(r -> r.path("optionID").asText())
                    .containsExactly("fight", "flee");
        }
    }

    @Test
    void shutdownCancelsADecisionWaitingForItsTool() throws Exception {
        try (Conversation c = open()) {
            c.request(1, "decision/decide", line("""
                    {"situation": "s", "options": ["flee", "fight"], "tools": [%s], "toolChoice": "required", "toolTimeoutSeconds": 0,
                     "model": {"type": "scripted", "steps": [%s, %s]}}""".formatted(SCOUT_TOOL, SCOUT_CALL, ECHO_CHOICE)));
            JsonNode call = c.toolCall();
            c.request(2, "shutdown", null);
            JsonNode cancelled = c.error(1);
            assertThat(cancelled.path("code").asInt()).isEqualTo(-32009);
            assertThat(c.result(2)).isEqualTo(Json.object());
            assertThat(c.indexOf(c.response(1))).isLessThan(c.indexOf(c.response(2)));
            JsonNode toolCancel = c.await(m -> Conversation.isEvent(m, "tool/cancel"), "tool/cancel");
            assertThat(toolCancel.path("params").path("id").asText())
                    .isEqualTo(call.path("id").asText());
            c.client().endInput();
            assertThat(c.client().awaitStopped(Duration.ofSeconds(20))).isTrue();
        }
    }

    @Test
    void initializeListsTheDecisionAndContentMethods() throws Exception {
        try (Conversation c = open()) {
            JsonNode methods =
                    c.call(1, "initialize", null).path("capabilities").path("methods");
            assertThat(methods)
                    .extracting(JsonNode::asText)
                    .contains("content/generate", "decision/decide", "decision/decideMany");
        }
    }
}
