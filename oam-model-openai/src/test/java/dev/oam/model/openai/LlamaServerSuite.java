package dev.oam.model.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.testing.Conversation;
import dev.oam.testing.LlamaServer;
import dev.oam.testing.RealModel;
import dev.oam.testing.RealModels;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The OpenAI wire tests against a real llama.cpp {@code llama-server} (built by bin/lib/real-models.sh) serving a real
 * model on a free loopback port, one subclass per model: Gemma 3 270M with Gemma's turns given as a template
 * ({@link LlamaServerGemmaIT}), SmolLM2-135M-Instruct with its own template through {@code --jinja}
 * ({@link LlamaServerSmolLM2IT}). Tool calls forced, named and auto, parallel sessions, streaming, structured output
 * (and how the server takes a schema, found from outputs), decisions, an NPC conversation, cancel and server errors.
 * One server for the class, stopped at the end whatever happened; a fresh backend per test, so each test learns the
 * endpoint anew. Validity and protocol are asserted, never wording: small models say odd things, but what the
 * constraints and the bridge guarantee holds on any model, and text a game shows has no U+FFFD and no tool-call JSON.
 */
@Tag("real-model")
@Timeout(value = 10, unit = TimeUnit.MINUTES)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class LlamaServerSuite extends WireSupport {
    static final Set<String> EMOTIONS = Set.of(
            "neutral",
            "happy",
            "sad",
            "angry",
            "afraid",
            "surprised",
            "suspicious",
            "amused",
            "disgusted",
            "excited",
            "curious",
            "confused",
            "worried",
            "grateful",
            "annoyed",
            "proud");
    static final String GATE = """
            {"name": "open_gate", "description": "Open one of the town's gates.",
             "parameters": {"type": "object", "properties": {
               "gate": {"type": "string", "enum": ["north", "south"]},
               "delay_seconds": {"type": "integer", "minimum": 0, "maximum": 60}},
              "required": ["gate", "delay_seconds"], "additionalProperties": false}}""";
    static final String STOCK = """
            {"name": "check_inventory", "description": "Look up how many of an item the shop has.",
             "parameters": {"type": "object", "properties": {"item": {"type": "string", "maxLength": 40}},
              "required": ["item"], "additionalProperties": false}}""";

    private final RealModel model;
    private LlamaServer server;
    private String spec;

    LlamaServerSuite(RealModel model) {
        this.model = model;
    }

    @BeforeAll
    void startServer() throws Exception {
        // One slot of 2048 tokens, two threads: what a game developer's laptop gives a small model, on CI's 2 cores.
        server = LlamaServer.start(RealModels.llamaServer(), model, 2048, 1, 2);
    }

    @AfterAll
    void stopServer() throws Exception {
        if (server != null) {
            if (!server.isAlive()) {
                System.err.println("llama-server on " + model + " had stopped; its log:\n" + serverTail());
            }
            server.close();
            assertThat(server.isAlive()).isFalse();
        }
    }

    @BeforeEach
    void bridge() {
        // A server that died in an earlier test says how, instead of every later test failing on a refused connection.
        assertThat(server.isAlive())
                .as("llama-server on %s is running; its log:\n%s", model, serverTail())
                .isTrue();
        connect(
                Map.of(),
                backend -> probedSystemModel(backend, server.baseUrl(), model.id()),
                java.time.Duration.ofMinutes(5));
        spec = "{\"type\":\"openai\",\"baseUrl\":\"" + server.baseUrl() + "\",\"model\":\"" + model.id()
                + "\",\"contextSize\":2048}";
        c.call("init", "initialize", "{\"protocolVersion\":\"1.0\"}");
    }

    private static String compact(String json) {
        try {
            return Json.write(Json.parse(json));
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static GenerationSchema parameters(String tool) throws Exception {
        return GenerationSchema.convertParameters(Json.parse(tool).path("parameters"), "tool");
    }

    /**
     * Answers every tool/call of {@code request} (checking its arguments) until the turn's response; the calls seen.
     */
    private List<JsonNode> answerCalls(Object request, Map<String, String> tools, Map<String, String> outputs)
            throws Exception {
        List<JsonNode> calls = new ArrayList<>();
        while (true) {
            int seen = calls.size();
            int[] index = {0};
            JsonNode next = c.await(
                    m -> (Conversation.isResponse(m)
                                    && Json.write(m.path("id"))
                                            .equals(Json.write(Json.mapper().valueToTree(request))))
                            || ("tool/call".equals(m.path("method").asText()) && index[0]++ == seen),
                    "a tool/call or the response");
            if (Conversation.isResponse(next)) {
                return calls;
            }
            JsonNode call = next.path("params").path("call");
            String name = call.path("name").asText();
            assertThat(tools).as("%s", call).containsKey(name);
            assertThat(parameters(tools.get(name)).firstViolation(call.path("arguments")))
                    .as("%s", call)
                    .isEmpty();
            calls.add(call);
            c.reply(next, outputs.get(name));
        }
    }

    // ---------------------------------------------------------------- plain and streamed

    @Test
    void availabilityAndAStreamedTurn() {
        JsonNode availability = c.call(1, "model/availability", "{}");
        assertThat(availability.path("available").asBoolean())
                .as("%s", availability)
                .isTrue();
        c.call(
                2,
                "session/create",
                "{\"session\":\"s\",\"model\":" + spec + ",\"options\":{\"maxResponseTokens\":16,\"temperature\":0}}");
        c.request(3, "session/respond", "{\"session\":\"s\",\"prompt\":\"Say hello to a traveller.\",\"stream\":true}");
        JsonNode result = c.result(3);
        assertThat(result.path("text").isTextual()).isTrue();
        assertThat(streamedText(c.events(3))).isEqualTo(result.path("text").asText());
        assertAnswer("the answer", result.path("text").asText());
        assertThat(result.path("usage").path("inputTokens").asInt()).isPositive();
        assertThat(result.path("usage").path("outputTokens").asInt()).isBetween(1, 16);
    }

    // ---------------------------------------------------------------- tools

    @Test
    void aForcedChoiceAmongTwoToolsCallsOneWithArgumentsThatFitItsSchema() throws Exception {
        c.call(
                1,
                "session/create",
                "{\"session\":\"s\",\"model\":" + spec + ",\"tools\":[" + compact(GATE) + "," + compact(STOCK)
                        + "],\"options\":{\"toolChoice\":\"required\",\"maxToolRounds\":1,\"maxResponseTokens\":96,\"temperature\":0}}");
        c.request(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Open the north gate in 5 seconds.\"}");
        List<JsonNode> calls = answerCalls(
                2,
                Map.of("open_gate", GATE, "check_inventory", STOCK),
                Map.of("open_gate", "{\"output\":{\"opened\":true}}", "check_inventory", "{\"output\":{\"stock\":3}}"));
        JsonNode result = c.result(2);
        assertThat(calls).as("the forced step called a tool").isNotEmpty();
        assertThat(result.path("toolCalls")).hasSize(calls.size());
        assertThat(result.path("steps").get(0).path("toolCallingMode").asText()).isEqualTo("required");
        assertThat(result.path("text").isTextual()).isTrue();
        assertAnswer("the answer after the tool round", result.path("text").asText());
    }

    @Test
    void aNamedToolIsTheOneCalled() throws Exception {
        c.call(
                1,
                "session/create",
                "{\"session\":\"s\",\"model\":" + spec + ",\"tools\":[" + compact(STOCK)
                        + "],\"options\":{\"toolChoice\":\"required\",\"maxToolRounds\":1,\"maxResponseTokens\":64,\"temperature\":0}}");
        c.request(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Do you have iron swords?\",\"stream\":true}");
        List<JsonNode> calls = answerCalls(
                2, Map.of("check_inventory", STOCK), Map.of("check_inventory", "{\"output\":{\"stock\":2}}"));
        JsonNode result = c.result(2);
        assertThat(calls)
                .isNotEmpty()
                .allSatisfy(call -> assertThat(call.path("name").asText()).isEqualTo("check_inventory"));
        assertThat(result.path("toolCalls").get(0).path("output").path("stock").asInt())
                .isEqualTo(2);
        assertThat(streamedText(c.events(2))).isEqualTo(result.path("text").asText());
        assertAnswer("the answer after the tool round", result.path("text").asText());
    }

    @Test
    void autoChoiceEndsTheTurnWithValidCallsOrAnAnswer() throws Exception {
        c.call(
                1,
                "session/create",
                "{\"session\":\"s\",\"model\":" + spec + ",\"tools\":[" + compact(GATE) + "," + compact(STOCK)
                        + "],\"options\":{\"toolChoice\":\"auto\",\"maxToolRounds\":1,\"maxResponseTokens\":64,\"temperature\":0}}");
        c.request(
                2,
                "session/respond",
                "{\"session\":\"s\",\"prompt\":\"How many shields are in stock?\",\"stream\":true}");
        List<JsonNode> calls = answerCalls(
                2,
                Map.of("open_gate", GATE, "check_inventory", STOCK),
                Map.of("open_gate", "{\"output\":{\"opened\":true}}", "check_inventory", "{\"output\":{\"stock\":3}}"));
        JsonNode result = c.result(2);
        assertThat(result.path("toolCalls")).hasSize(calls.size());
        assertThat(result.path("text").isTextual()).isTrue();
        assertThat(streamedText(c.events(2))).isEqualTo(result.path("text").asText());
        assertAnswer("the answer", result.path("text").asText());
    }

    /**
     * A forced step ends with what the product guarantees, in every toolCallMode, whatever the model writes: a call, or
     * a retryable {@code generation_failed} (which the agent asks again within maxAttempts), never an answer. Which of
     * the two a greedy model produces differs between CPUs, so either passes. And every request carries max_tokens (256
     * for a forced call, with no maxResponseTokens): native and emulated, the one request ends within it; under auto,
     * text that ignored tool_choice is followed by one emulated request, so the step ends within two bounds.
     */
    @Test
    void aForcedCallWithoutMaxResponseTokensEndsWithinTheDefaultBound() throws Exception {
        ToolDefinition gate =
                new ToolDefinition("open_gate", "Open one of the town's gates.", (ObjectNode) Json.parse("""
                {"type": "object", "properties": {"gate": {"type": "string"}, "note": {"type": "string"}},
                 "required": ["gate", "note"]}"""), null);
        ModelRequest request = new ModelRequest(
                "You are the gate keeper.",
                null,
                List.of(TranscriptEntry.Prompt.of("Open the east gate.", null)),
                List.of(gate),
                ToolCallingMode.REQUIRED,
                false,
                null,
                new GenerationOptions(0.0, null, null));
        for (String mode : List.of("native", "emulated", "auto")) {
            LanguageModel model = backend.create(
                    (ObjectNode) Json.parse(spec.replace("}", ",\"toolCallMode\":\"" + mode + "\"}")), "model");
            int bound = ChatRequests.DEFAULT_CALL_TOKENS * (mode.equals("auto") ? 2 : 1);
            long start = System.nanoTime();
            Usage usage;
            String outcome;
            try {
                ModelResponse response = model.respond(request, ModelListener.NONE, CancellationToken.create());
                assertThat(response)
                        .as(
                                "%s: a forced step ends with a call or a retryable error, never an answer: %s",
                                mode, response)
                        .isInstanceOf(ModelResponse.ToolCalls.class);
                assertThat(((ModelResponse.ToolCalls) response).calls())
                        .as("%s: a call", mode)
                        .isNotEmpty();
                usage = response.usage();
                outcome = response.toString();
            } catch (AgentException e) {
                assertThat(e.code()).as("%s: %s", mode, e.getMessage()).isEqualTo(ErrorCode.GENERATION_FAILED);
                assertThat(e.isRetryable()).as("%s: %s", mode, e.getMessage()).isTrue();
                usage = e.usage();
                outcome = e.getMessage();
            }
            System.err.printf(
                    "%s forced call: %d output tokens in %d s: %s%n",
                    mode, usage.outputTokens(), TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start), outcome);
            assertThat(usage.outputTokens())
                    .as("%s\nserver log:\n%s", mode, serverTail())
                    .isBetween(1, bound);
        }
    }

    // ---------------------------------------------------------------- schemas and decisions

    @Test
    void structuredOutputFitsTheSchemaAndTheServersWayIsVerified() throws Exception {
        c.call(
                1,
                "session/create",
                "{\"session\":\"s\",\"model\":" + spec + ",\"options\":{\"maxResponseTokens\":160,\"temperature\":0}}");
        String schema = """
                {"type": "object", "properties": {
                  "mood": {"type": "string", "enum": ["calm", "angry"]},
                  "guards": {"type": "integer", "minimum": 0, "maximum": 9}},
                 "required": ["mood", "guards"], "additionalProperties": false}""";
        JsonNode result = c.call(
                2,
                "session/respond",
                "{\"session\":\"s\",\"prompt\":\"Report on the gate.\",\"schema\":" + compact(schema) + "}");
        JsonNode structured = result.path("structured");
        assertThat(GenerationSchema.convert(Json.parse(schema), "report").firstViolation(structured))
                .as("%s", result)
                .isEmpty();
        assertThat(Json.parse(result.path("text").asText())).isEqualTo(structured);
        assertThat(logs()).contains("honours a JSON Schema sent as");
    }

    @Test
    void aDecisionChoosesAnOfferedOption() {
        JsonNode result = c.call(
                1,
                "decision/decide",
                "{\"situation\":\"A wolf blocks the road.\",\"temperature\":0,"
                        + "\"options\":[{\"id\":\"flee\",\"description\":\"Run back\"},{\"id\":\"fight\",\"description\":\"Draw the sword\"}],"
                        + "\"model\":" + spec + "}");
        assertThat(result.path("optionID").asText()).as("%s", result).isIn("flee", "fight");
        assertThat(result.path("isFallback").asBoolean(true)).as("%s", result).isFalse();
        assertThat(result.path("confidence").asDouble()).isBetween(0.0, 100.0);
        assertThat(result.path("usage").path("outputTokens").asInt()).isPositive();
    }

    @Test
    void parallelDecisionsAndSessionsEachGetTheirOwnValidAnswer() {
        JsonNode many = c.call(
                1,
                "decision/decideMany",
                "{\"maxConcurrency\":2,\"model\":" + spec + ",\"requests\":["
                        + "{\"situation\":\"A customer haggles.\",\"options\":[\"wait\",\"refuse\"],\"actor\":{\"name\":\"Gorm\"}},"
                        + "{\"situation\":\"A wolf howls.\",\"options\":[\"hide\",\"howl\"],\"actor\":{\"name\":\"Pip\"}},"
                        + "{\"situation\":\"A thief runs past.\",\"options\":[\"arrest\",\"ignore\"],\"actor\":{\"name\":\"Bram\"}}]}");
        JsonNode results = many.path("results");
        assertThat(results).hasSize(3);
        String[][] options = {{"wait", "refuse"}, {"hide", "howl"}, {"arrest", "ignore"}};
        for (int i = 0; i < 3; i++) {
            assertThat(results.get(i).has("error")).as("%s", results.get(i)).isFalse();
            assertThat(results.get(i).path("optionID").asText()).isIn((Object[]) options[i]);
        }
        String schema =
                "{\"type\":\"object\",\"properties\":{\"open\":{\"type\":\"boolean\"}},\"required\":[\"open\"]}";
        for (String id : List.of("a", "b")) {
            c.call(
                    "create-" + id,
                    "session/create",
                    "{\"session\":\"" + id + "\",\"model\":" + spec
                            + ",\"options\":{\"maxResponseTokens\":48,\"temperature\":0}}");
        }
        c.request(
                "ra",
                "session/respond",
                "{\"session\":\"a\",\"prompt\":\"Is the gate open?\",\"schema\":" + schema + "}");
        c.request(
                "rb",
                "session/respond",
                "{\"session\":\"b\",\"prompt\":\"Is the door open?\",\"schema\":" + schema + "}");
        assertThat(c.result("ra").path("structured").path("open").isBoolean()).isTrue();
        assertThat(c.result("rb").path("structured").path("open").isBoolean()).isTrue();
    }

    // ---------------------------------------------------------------- NPCs

    @Test
    void anNpcConversationWithAGroundingToolStreamsValidReplies() throws Exception {
        c.call(
                1,
                "npc/create",
                "{\"npc\":\"gorm\",\"persona\":{\"name\":\"Gorm\",\"role\":\"the village blacksmith\","
                        + "\"maxSentences\":1},\"tools\":[" + compact(STOCK) + "],\"model\":" + spec
                        + ",\"options\":{\"groundingTool\":"
                        + "\"check_inventory\",\"maxToolRounds\":1,\"playerOptionCount\":1,\"maximumResponseTokens\":160,\"temperature\":0}}");
        for (int turn = 0; turn < 2; turn++) {
            String id = "talk" + turn;
            c.request(
                    id,
                    "npc/talk",
                    "{\"npc\":\"gorm\",\"line\":\"" + (turn == 0 ? "Got any swords?" : "And shields?")
                            + "\",\"stream\":true}");
            List<JsonNode> calls = answerCalls(
                    id,
                    Map.of("check_inventory", STOCK),
                    Map.of("check_inventory", "{\"output\":{\"stock\":3,\"price_gold\":45}}"));
            JsonNode result = c.result(id);
            assertThat(calls).as("the grounding tool is forced first").isNotEmpty();
            assertThat(result.path("isFallback").asBoolean(true))
                    .as("%s\nserver log:\n%s", result, serverTail())
                    .isFalse();
            assertThat(result.path("line").asText()).isNotBlank();
            assertAnswer("the line", result.path("line").asText());
            for (JsonNode option : result.path("playerOptions")) {
                assertAnswer("a player option", option.asText());
            }
            assertThat(GameWireTest.replay(c, id)).isEqualTo(result.path("line").asText());
            assertThat(result.path("emotion").asText()).isIn(EMOTIONS);
            assertThat(result.path("playerOptions").isArray()).isTrue();
            assertThat(result.path("toolCalls"))
                    .extracting(r -> r.path("call").path("name").asText())
                    .contains("check_inventory");
        }
    }

    // ---------------------------------------------------------------- cancel and errors

    @Test
    void cancelStopsAGenerationAndTheSessionGoesOn() {
        c.call(
                1,
                "session/create",
                "{\"session\":\"s\",\"model\":" + spec + ",\"options\":{\"maxResponseTokens\":400,\"temperature\":0}}");
        c.request(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Tell me a long story.\",\"stream\":true}");
        c.await(
                m -> Conversation.isEvent(m, "session/event")
                        && m.path("params").path("requestId").asInt(-1) == 2
                        && m.path("params").path("event").path("type").asText().equals("text"),
                "the first streamed text");
        assertThat(c.call(3, "session/cancel", "{\"session\":\"s\"}")
                        .path("cancelled")
                        .asInt())
                .isEqualTo(1);
        assertThat(c.error(2).path("code").asInt()).isEqualTo(-32009);
        assertThat(c.call(4, "session/list", "{}")
                        .path("sessions")
                        .get(0)
                        .path("entries")
                        .asInt())
                .as("no trace")
                .isZero();
        // The slot is free again: a schema turn, which its grammar ends after a few tokens, runs on the same session.
        JsonNode after = c.call(
                5,
                "session/respond",
                "{\"session\":\"s\",\"prompt\":\"Done?\",\"schema\":"
                        + "{\"type\":\"object\",\"properties\":{\"done\":{\"type\":\"boolean\"}},\"required\":[\"done\"]}}");
        assertThat(after.path("structured").path("done").isBoolean())
                .as("%s", after)
                .isTrue();
    }

    @Test
    void serverErrorsAreClearAndLeaveTheBridgeAndOtherSessionsAlone() throws Exception {
        // The session claims more context than the server's slot has, so the server itself refuses the prompt.
        String big = spec.replace("\"contextSize\":2048", "\"contextSize\":65536");
        c.call(
                1,
                "session/create",
                "{\"session\":\"big\",\"model\":" + big + ",\"options\":{\"maxResponseTokens\":4}}");
        c.call(
                2,
                "session/create",
                "{\"session\":\"ok\",\"model\":" + spec + ",\"options\":{\"maxResponseTokens\":4,\"temperature\":0}}");
        String prompt = "The gate guard counts sheep. ".repeat(800);
        c.request(
                3,
                "session/respond",
                "{\"session\":\"big\",\"prompt\":" + Json.write(Json.mapper().valueToTree(prompt)) + "}");
        JsonNode tooLong = c.error(3);
        assertThat(tooLong.path("code").asInt()).as("%s", tooLong).isEqualTo(-32004);
        assertThat(tooLong.path("message").asText()).contains("context").contains("2048");

        int port;
        try (java.net.ServerSocket socket =
                new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort();
        }
        c.call(
                4,
                "session/create",
                "{\"session\":\"down\",\"model\":{\"type\":\"openai\",\"baseUrl\":\"http://127.0.0.1:" + port
                        + "/v1\",\"model\":\"gemma\"}}");
        c.request(5, "session/respond", "{\"session\":\"down\",\"prompt\":\"Hello?\"}");
        JsonNode down = c.error(5);
        assertThat(down.path("code").asInt()).as("%s", down).isEqualTo(-32001);
        assertThat(down.path("message").asText()).contains("127.0.0.1:" + port).contains("connection refused");

        JsonNode fine = c.call(6, "session/respond", "{\"session\":\"ok\",\"prompt\":\"Hello.\"}");
        assertThat(fine.path("usage").path("outputTokens").asInt()).isBetween(1, 4);
        assertThat(server.isAlive()).isTrue();
    }

    /** Text a game shows as it is: never a replacement character, never the tool-call JSON of a step. */
    private void assertAnswer(String what, String text) {
        assertThat(text).as("%s on %s has no U+FFFD: %s", what, model, text).doesNotContain("\uFFFD");
        assertThat(text)
                .as("%s on %s is no tool-call JSON: %s", what, model, text)
                .doesNotContain("{\"tool_calls\"");
    }

    private String serverTail() {
        List<String> lines = server.log().lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }
}
