package dev.oam.model.llama;

import static dev.oam.model.llama.Fixtures.CHECK_INVENTORY;
import static dev.oam.model.llama.Fixtures.OPEN_GATE;
import static dev.oam.model.llama.Fixtures.prompt;
import static dev.oam.model.llama.Fixtures.request;
import static dev.oam.model.llama.Fixtures.schema;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.agent.Agent;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.SamplerCodec;
import dev.oam.core.agent.TurnContext;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.agent.TurnRequest;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.DialogueForm;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.Sampling;
import dev.oam.core.model.Tokens;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.SamplerExtras;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.prompt.ChatMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The adapter against a fake engine: each step form, streaming, sampling, usage, availability and loading. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class LlamaLanguageModelTest {
    private final FakeEngine engine = new FakeEngine();
    private final LlamaLanguageModel model =
            new LlamaLanguageModel("tiny", 2048, CompletableFuture.completedFuture(engine), null, List.of("en"));
    private final Recording listener = new Recording();

    static final class Recording implements ModelListener {
        final List<String> events = new ArrayList<>();

        @Override
        public void onText(String delta) {
            events.add("text:" + delta);
        }

        @Override
        public void onReset(String text) {
            events.add("reset:" + text);
        }

        @Override
        public void onPartial(JsonNode value) {
            events.add("partial:" + Json.write(value));
        }
    }

    private ModelResponse respond(ModelRequest request) throws AgentException {
        return model.respond(request, listener, CancellationToken.create());
    }

    private void grammarAccepts(String output) {
        assertThat(GbnfChecker.parse(engine.last().grammar()).accepts(output))
                .as("grammar accepts " + output)
                .isTrue();
    }

    @Test
    void requiredStepsReturnParsedCallsWithFreshIdsAndStreamNothing() throws Exception {
        String output = "{\"tool_calls\": [{\"name\": \"open_gate\", \"arguments\": {\"gate\": \"north\"}}, "
                + "{\"name\": \"check_inventory\", \"arguments\": {}}]}";
        engine.then("{\"tool_calls\": [", output.substring("{\"tool_calls\": [".length()));
        ModelResponse response = respond(request(
                prompt("Open it."),
                List.of(OPEN_GATE, CHECK_INVENTORY),
                ToolCallingMode.REQUIRED,
                false,
                null,
                new dev.oam.core.model.GenerationOptions(null, 1024, null, true)));
        grammarAccepts(output);
        List<ToolCall> calls = ((ModelResponse.ToolCalls) response).calls();
        assertThat(calls).extracting(ToolCall::name).containsExactly("open_gate", "check_inventory");
        assertThat(Json.write(calls.get(0).arguments())).isEqualTo("{\"gate\":\"north\"}");
        assertThat(calls)
                .extracting(ToolCall::id)
                .allMatch(id -> id.matches("call_[A-Za-z0-9]{24}"))
                .doesNotHaveDuplicates();
        assertThat(listener.events).isEmpty();
    }

    @Test
    void respondDirectlyComesBackAsItsCall() throws Exception {
        engine.then("{\"tool_call\": {\"name\": \"respond_directly\", \"arguments\": {}}}");
        ModelResponse response =
                respond(request(prompt("Hi."), List.of(OPEN_GATE), ToolCallingMode.REQUIRED, true, null));
        assertThat(((ModelResponse.ToolCalls) response).calls())
                .extracting(ToolCall::name)
                .containsExactly("respond_directly");
        grammarAccepts("{\"tool_call\": {\"name\": \"respond_directly\", \"arguments\": {}}}");
    }

    @Test
    void invalidOrTruncatedCallsFailAsRetryableGenerationFailures() {
        for (String bad : new String[] {
            "{\"tool_calls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"nor",
            "{\"tool_calls\":[{\"name\":\"burn_gate\",\"arguments\":{}}]}",
            "{\"tool_calls\":[{\"name\":\"respond_directly\",\"arguments\":{}}]}",
            "{\"tool_calls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"west\"}}]}",
            "I will open it."
        }) {
            engine.then(bad);
            AgentException e = catchThrowableOfType(
                    AgentException.class,
                    () -> respond(request(prompt("Open."), List.of(OPEN_GATE), ToolCallingMode.REQUIRED, false, null)));
            assertThat(e).as(bad).isNotNull();
            assertThat(e.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
            assertThat(e.isRetryable()).isTrue();
            assertThat(e.isInvalidOutput()).isFalse();
        }
    }

    @Test
    void afterAToolRanInvalidArgumentsGoToTheAgentsErrorOutputInsteadOfFailingTheTurn() throws Exception {
        List<TranscriptEntry> entries = new ArrayList<>(prompt("Open."));
        ToolCall earlier = new ToolCall("call_x", "open_gate", Json.object().put("gate", "south"));
        entries.add(TranscriptEntry.ToolCalls.of(List.of(earlier)));
        entries.add(TranscriptEntry.ToolOutput.of("open_gate", "call_x", "jammed"));
        engine.then("{\"tool_call\": {\"name\": \"open_gate\", \"arguments\": {\"gate\": \"west\"}}}");
        ModelResponse response = respond(request(entries, List.of(OPEN_GATE), ToolCallingMode.ALLOWED, false, null));
        assertThat(((ModelResponse.ToolCalls) response)
                        .calls()
                        .get(0)
                        .arguments()
                        .path("gate")
                        .asText())
                .isEqualTo("west");
    }

    @Test
    void allowedTextAnswersStreamAsTheyComeAndAddUpToTheAnswer() throws Exception {
        engine.then("  ", "\nHalt", "! The gate", " stays shut.");
        ModelResponse response =
                respond(request(prompt("Open."), List.of(OPEN_GATE), ToolCallingMode.ALLOWED, false, null));
        assertThat(listener.events).containsExactly("text:Halt", "text:! The gate", "text: stays shut.");
        assertThat(((ModelResponse.Answer) response).text()).isEqualTo("Halt! The gate stays shut.");
        assertThat(((ModelResponse.Answer) response).structured()).isNull();
        grammarAccepts("Halt! The gate stays shut.");
    }

    @Test
    void allowedStepsThatCallStreamNoText() throws Exception {
        engine.then("{", "\"tool_call\": {\"name\": \"open_gate\", \"arguments\": {\"gate\": \"north\"}}}");
        ModelResponse response =
                respond(request(prompt("Open."), List.of(OPEN_GATE), ToolCallingMode.ALLOWED, false, null));
        assertThat(response).isInstanceOf(ModelResponse.ToolCalls.class);
        assertThat(listener.events).isEmpty();
    }

    @Test
    void disallowedTextStepsGetTheWordsGrammarAndNoToolsInThePrompt() throws Exception {
        engine.then("Go", " away.");
        ModelResponse response =
                respond(request(prompt("Open."), List.of(OPEN_GATE), ToolCallingMode.DISALLOWED, false, null));
        assertThat(engine.last().grammar().gbnf()).contains(StepGrammar.TEXT.gbnf());
        assertThat(engine.last().prompt()).doesNotContain("open_gate");
        assertThat(((ModelResponse.Answer) response).text()).isEqualTo("Go away.");
        assertThat(listener.events).containsExactly("text:Go", "text: away.");
    }

    @Test
    void structuredAnswersStreamPartialsAndComeBackInSchemaOrder() throws Exception {
        engine.then("{\"reasoning\": \"Out", "numbered.\", \"choice\": \"fl", "ee\", \"confidence\": 80}");
        ModelResponse response = respond(
                request(prompt("Decide."), List.of(), ToolCallingMode.DISALLOWED, false, schema(Fixtures.DECISION)));
        grammarAccepts("{\"reasoning\": \"Outnumbered.\", \"choice\": \"flee\", \"confidence\": 80}");
        assertThat(listener.events)
                .containsExactly(
                        "partial:{\"reasoning\":\"Out\"}",
                        "partial:{\"reasoning\":\"Outnumbered.\",\"choice\":\"fl\"}",
                        "partial:{\"reasoning\":\"Outnumbered.\",\"choice\":\"flee\",\"confidence\":80}");
        assertThat(Json.write(((ModelResponse.Answer) response).structured()))
                .isEqualTo("{\"reasoning\":\"Outnumbered.\",\"choice\":\"flee\",\"confidence\":80}");
    }

    @Test
    void structuredAnswersAreReorderedToTheSchema() throws Exception {
        engine.then(
                "{\"confidence\":5,\"choice\":\"fight\",\"reasoning\":\"r\"}"); // as if the grammar had been ignored
        ModelResponse response = respond(
                request(prompt("Decide."), List.of(), ToolCallingMode.DISALLOWED, false, schema(Fixtures.DECISION)));
        assertThat(Json.write(((ModelResponse.Answer) response).structured()))
                .isEqualTo("{\"reasoning\":\"r\",\"choice\":\"fight\",\"confidence\":5}");
    }

    @Test
    void allowedStructuredStepsHoldPartialsBackWhileTheOutputCouldStillBeACall() throws Exception {
        engine.then("{\"", "reasoning\":\"a\",", "\"choice\":\"flee\",\"confidence\":1}");
        respond(request(
                prompt("Decide."), List.of(OPEN_GATE), ToolCallingMode.ALLOWED, false, schema(Fixtures.DECISION)));
        assertThat(listener.events)
                .containsExactly(
                        "partial:{\"reasoning\":\"a\"}",
                        "partial:{\"reasoning\":\"a\",\"choice\":\"flee\",\"confidence\":1}");
        listener.events.clear();
        engine.then("{\"", "tool_call\": {\"name\": \"open_gate\", ", "\"arguments\": {\"gate\": \"north\"}}}");
        ModelResponse call = respond(request(
                prompt("Decide."), List.of(OPEN_GATE), ToolCallingMode.ALLOWED, false, schema(Fixtures.DECISION)));
        assertThat(call).isInstanceOf(ModelResponse.ToolCalls.class);
        assertThat(listener.events).isEmpty();
    }

    @Test
    void anInvalidStructuredAnswerIsRegeneratedByTheAgentThenFailsTheTurn() {
        engine.then("{\"reasoning\":\"r\",\"choice\":\"dance\",\"confidence\":1}")
                .then("{\"reasoning\":\"r\",\"choice\":");
        Agent agent = new Agent(model, "You decide.", List.of(), AgentOptions.defaults(), List.of());
        AgentException e = catchThrowableOfType(
                AgentException.class,
                () -> agent.respond(
                        TurnRequest.of("Decide.").withSchema(Fixtures.json(Fixtures.DECISION)),
                        new TurnContext(
                                CancellationToken.create(),
                                TurnListener.NONE,
                                ToolChannel.NONE,
                                TurnContext.CommitPoint.NONE)));
        assertThat(e.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(engine.calls).hasSize(2);
        EngineRequest first = engine.calls.get(0).request();
        EngineRequest again = engine.calls.get(1).request();
        assertThat(again.seed()).as("a retry draws again").isNotEqualTo(first.seed());
        assertThat(again.temperature()).isEqualTo(first.temperature());
    }

    @Test
    void theSameShapeOfStepReusesItsGrammarAndAnotherBudgetGetsItsOwn() throws Exception {
        engine.then("{\"tool_calls\":[{\"name\":\"check_inventory\",\"arguments\":{}}]}")
                .then("{\"tool_calls\":[{\"name\":\"check_inventory\",\"arguments\":{}}]}")
                .then("{\"tool_calls\":[{\"name\":\"check_inventory\",\"arguments\":{}}]}");
        respond(request(prompt("Hi."), List.of(OPEN_GATE, CHECK_INVENTORY), ToolCallingMode.REQUIRED, false, null));
        Grammar first = engine.last().grammar();
        respond(request(
                prompt("Something else."), List.of(OPEN_GATE, CHECK_INVENTORY), ToolCallingMode.REQUIRED, false, null));
        assertThat(engine.last().grammar()).isSameAs(first);
        respond(request(
                prompt("Hi."),
                List.of(OPEN_GATE, CHECK_INVENTORY),
                ToolCallingMode.REQUIRED,
                false,
                null,
                new GenerationOptions(null, 300, null)));
        assertThat(engine.last().grammar()).isNotSameAs(first);
        assertThat(engine.last().maxTokens()).isEqualTo(300);
    }

    /**
     * Issue 37: two NPCs with the same reply schema and tools differ only in their spoken form (the speaker's name, the
     * sentence limit). A step of the second NPC once got the grammar of the first, so it could write only the first
     * NPC's name, and its reply failed to parse ("not JSON for the requested schema") on every turn.
     */
    @Test
    void stepsSpokenByTwoCharactersGetGrammarsOfTheirOwn() throws Exception {
        GenerationSchema reply = schema("""
                {"type": "object", "properties": {
                  "emotion": {"type": "string", "enum": ["neutral", "happy"]},
                  "line": {"type": "string"}},
                 "required": ["emotion", "line"], "additionalProperties": false}""");
        engine.then("Hilde (neutral): \"The bridge is gone.\"").then("Sela (happy): \"Hello! Sit down.\"");
        ModelResponse hilde = respond(spoken(reply, new DialogueForm("Hilde", "Player", 1)));
        assertThat(line(hilde)).isEqualTo("The bridge is gone.");
        ModelResponse sela = respond(spoken(reply, new DialogueForm("Sela", "Player", 2)));
        assertThat(engine.last().grammar().gbnf()).contains("Sela (").doesNotContain("Hilde (");
        grammarAccepts("Sela (happy): \"Hello! Sit down.\"");
        assertThat(line(sela)).isEqualTo("Hello! Sit down.");
    }

    private static String line(ModelResponse response) {
        assertThat(response).isInstanceOf(ModelResponse.Answer.class);
        JsonNode structured = ((ModelResponse.Answer) response).structured();
        assertThat(structured).isNotNull();
        return structured.path("line").asText();
    }

    private static ModelRequest spoken(GenerationSchema schema, DialogueForm form) {
        ModelRequest plain = request(prompt("Hello."), List.of(), ToolCallingMode.DISALLOWED, false, schema);
        return plain.withOptions(plain.options().withDialogue(form));
    }

    @Test
    void aGreedyStepAskedAgainSamplesWithADerivedSeed() {
        GenerationOptions greedy = new GenerationOptions(null, null, Sampling.GREEDY);
        EngineRequest first = model.engineRequest("p", null, 10, greedy, 1);
        EngineRequest second = model.engineRequest("p", null, 10, greedy, 2);
        assertThat(first.temperature()).isZero();
        assertThat(second.temperature()).isEqualTo(LlamaLanguageModel.RETRY_TEMPERATURE);
        assertThat(second.seed())
                .isNotEqualTo(first.seed())
                .isEqualTo(model.engineRequest("p", null, 10, greedy, 2).seed());
    }

    @Test
    void samplingOptionsMapToTheEngineRequest() throws Exception {
        EngineRequest defaults = model.engineRequest("p", null, 10, GenerationOptions.DEFAULT);
        assertThat(List.of(defaults.temperature(), (double) defaults.topK(), defaults.topP(), (double) defaults.seed()))
                .containsExactly(0.7, 40.0, 0.95, 42.0);
        assertThat(model.engineRequest("p", null, 10, new GenerationOptions(0.9, null, Sampling.GREEDY))
                        .temperature())
                .isZero();
        assertThat(model.engineRequest("p", null, 10, new GenerationOptions(0.0, null, null))
                        .temperature())
                .isZero();
        EngineRequest topK =
                model.engineRequest("p", null, 10, new GenerationOptions(0.3, null, new Sampling.TopK(5, 9L)));
        assertThat(List.of(topK.temperature(), (double) topK.topK(), topK.topP(), (double) topK.seed()))
                .containsExactly(0.3, 5.0, 1.0, 9.0);
        LlamaLanguageModel seeded =
                new LlamaLanguageModel("tiny", 2048, CompletableFuture.completedFuture(engine), 7L, List.of());
        EngineRequest topP =
                seeded.engineRequest("p", null, 10, new GenerationOptions(null, null, new Sampling.TopP(0.5, null)));
        assertThat(List.of((double) topP.topK(), topP.topP(), (double) topP.seed()))
                .containsExactly(0.0, 0.5, 7.0);
    }

    @Test
    void aSamplerChainMapsToTheEngineAndDialogueGetsItsDefaultsUnderIt() throws Exception {
        Sampling.Chain chain = SamplerCodec.read(dev.oam.core.json.Json.parse(
                "{\"topK\":20,\"minP\":0.1,\"repeatPenalty\":1.2,\"xtc\":{\"probability\":0.5,\"threshold\":0.2},"
                        + "\"seed\":5}"));
        EngineRequest r = model.engineRequest("p", null, 10, new GenerationOptions(0.8, null, chain));
        assertThat(List.of(r.temperature(), (double) r.topK(), r.topP(), (double) r.seed()))
                .containsExactly(0.8, 20.0, 0.95, 5.0);
        assertThat(List.of(
                        r.extras().minP(),
                        r.extras().repeatPenalty(),
                        r.extras().xtcProbability(),
                        r.extras().xtcThreshold()))
                .containsExactly(0.1, 1.2, 0.5, 0.2);
        assertThat(r.extras().dry()).as("no DRY unless asked, outside dialogue").isFalse();
        assertThat(model.engineRequest("p", null, 10, GenerationOptions.DEFAULT).extras())
                .isSameAs(SamplerExtras.NONE);
        DialogueForm form = new DialogueForm("Gorm", "Player", 2);
        SamplerExtras line = model.engineRequest("p", null, 10, GenerationOptions.DEFAULT.withDialogue(form))
                .extras();
        assertThat(line.minP()).isEqualTo(LlamaLanguageModel.DIALOGUE_MIN_P);
        assertThat(line.dryMultiplier()).isEqualTo(LlamaLanguageModel.DIALOGUE_DRY);
        SamplerExtras overridden = model.engineRequest(
                        "p", null, 10, new GenerationOptions(null, null, chain).withDialogue(form))
                .extras();
        assertThat(overridden.minP()).as("the game's own min-p wins").isEqualTo(0.1);
        assertThat(overridden.dryMultiplier()).isEqualTo(LlamaLanguageModel.DIALOGUE_DRY);
        SamplerExtras off = model.engineRequest(
                        "p",
                        null,
                        10,
                        new GenerationOptions(
                                        null,
                                        null,
                                        SamplerCodec.read(dev.oam.core.json.Json.parse(
                                                "{\"minP\":0,\"dry\":{\"multiplier\":0}}")))
                                .withDialogue(form))
                .extras();
        assertThat(off).as("a game turns the dialogue defaults off").isSameAs(SamplerExtras.NONE);
        assertThat(model.engineRequest(
                                "p",
                                null,
                                10,
                                new GenerationOptions(null, null, new Sampling.TopK(5, 1L)).withDialogue(form))
                        .extras())
                .as("an original sampling value replaces them")
                .isSameAs(SamplerExtras.NONE);
    }

    @Test
    void maxTokensFollowTheOptionsWithRoomForCalls() throws Exception {
        engine.then("ok");
        respond(request(
                prompt("Hi."),
                List.of(),
                ToolCallingMode.DISALLOWED,
                false,
                null,
                new GenerationOptions(null, 40, null)));
        assertThat(engine.last().maxTokens()).isEqualTo(40);
        engine.then("ok");
        respond(request(prompt("Hi."), List.of(), ToolCallingMode.DISALLOWED, false, null));
        assertThat(engine.last().maxTokens()).isEqualTo(LlamaLanguageModel.DEFAULT_TEXT_TOKENS);
        engine.then("{\"tool_calls\":[{\"name\":\"check_inventory\",\"arguments\":{}}]}");
        respond(request(
                prompt("Hi."),
                List.of(CHECK_INVENTORY),
                ToolCallingMode.REQUIRED,
                false,
                null,
                new GenerationOptions(null, 40, null)));
        assertThat(engine.last().maxTokens())
                .as("a step that may call gets room for a call")
                .isEqualTo(LlamaLanguageModel.MIN_CALL_TOKENS);
        assertThat(GrammarBound.maxBytes(engine.last().grammar(), StepGrammar::isFreeText))
                .isLessThanOrEqualTo(256);
        engine.then("{\"choice\":\"flee\"}");
        respond(request(
                prompt("Hi."),
                List.of(),
                ToolCallingMode.DISALLOWED,
                false,
                schema(
                        "{\"type\":\"object\",\"properties\":{\"choice\":{\"type\":\"string\"}},\"required\":[\"choice\"]}"),
                new GenerationOptions(null, 40, null)));
        assertThat(engine.last().maxTokens())
                .as("maxResponseTokens bounds constrained steps too")
                .isEqualTo(40);
        // {"choice":"…"} is 13 bytes around the string and a character takes at most 6 (a u-escape): 4 fit in 40
        assertThat(engine.last().grammar().gbnf()).contains("char{0,4}");
        assertThat(GrammarBound.maxBytes(engine.last().grammar(), StepGrammar::isFreeText))
                .isLessThanOrEqualTo(40);
    }

    @Test
    void usageComesFromTheEngine() throws Exception {
        engine.cachedTokens = 12;
        engine.then("Hello there.");
        ModelResponse response = respond(request(prompt("Hi."), List.of(), ToolCallingMode.DISALLOWED, false, null));
        assertThat(response.usage())
                .isEqualTo(new Usage(engine.countTokens(engine.last().prompt()), 12, 3));
    }

    @Test
    void theSessionKeyStaysTheSameAcrossStepsAndTurnsOfOneConversation() throws Exception {
        List<TranscriptEntry> turn1 = new ArrayList<>(prompt("Open."));
        engine.then("No.").then("Still no.").then("Who?");
        respond(request(turn1, List.of(), ToolCallingMode.DISALLOWED, false, null));
        List<TranscriptEntry> turn2 = new ArrayList<>(turn1);
        turn2.add(TranscriptEntry.Response.text("No."));
        turn2.add(TranscriptEntry.Prompt.of("Please?", null));
        respond(request(turn2, List.of(OPEN_GATE), ToolCallingMode.ALLOWED, false, null));
        respond(request(prompt("Open."), List.of(), ToolCallingMode.DISALLOWED, false, null)); // another conversation
        assertThat(engine.calls.get(0).sessionKey())
                .isEqualTo(engine.calls.get(1).sessionKey());
        assertThat(engine.calls.get(2).sessionKey())
                .isNotEqualTo(engine.calls.get(0).sessionKey());
    }

    @Test
    void availabilityFollowsTheLoad() {
        CompletableFuture<Engine> loading = new CompletableFuture<>();
        LlamaLanguageModel pending = new LlamaLanguageModel("tiny-q4", 4096, loading, null, List.of("en", "de"));
        assertThat(pending.availability().available()).isFalse();
        assertThat(pending.availability().reason()).isEqualTo("model_not_ready");
        assertThat(pending.availability().isLoading())
                .as("a loading model says so")
                .isTrue();
        assertThat(pending.availability().message()).isEqualTo("loading tiny-q4…");
        loading.complete(engine);
        assertThat(pending.availability().available()).isTrue();
        assertThat(pending.availability().contextSize()).isEqualTo(4096);
        assertThat(pending.availability().variant()).isEqualTo("tiny-q4");
        assertThat(pending.availability().supportedLanguages()).containsExactly("en", "de");
        assertThat(pending.contextSize()).isEqualTo(4096);
        LlamaLanguageModel failed = new LlamaLanguageModel(
                "x",
                4096,
                CompletableFuture.failedFuture(new IllegalStateException("not a GGUF file: x.bin")),
                null,
                List.of());
        assertThat(failed.availability().available()).isFalse();
        assertThat(failed.availability().reason()).isEqualTo("unknown");
        assertThat(failed.availability().message()).isEqualTo("not a GGUF file: x.bin");
    }

    @Test
    void aFailedLoadFailsStepsAsModelUnavailable() {
        LlamaLanguageModel failed = new LlamaLanguageModel(
                "x",
                4096,
                CompletableFuture.failedFuture(new IllegalStateException("not a GGUF file: x.bin")),
                null,
                List.of());
        AgentException e = catchThrowableOfType(
                AgentException.class,
                () -> failed.respond(
                        request(prompt("Hi."), List.of(), ToolCallingMode.DISALLOWED, false, null),
                        listener,
                        CancellationToken.create()));
        assertThat(e.code()).isEqualTo(ErrorCode.MODEL_UNAVAILABLE);
        assertThat(e.getMessage()).isEqualTo("not a GGUF file: x.bin");
    }

    @Test
    void stepsWaitForTheLoadAndCanBeCancelledWhileWaiting() throws Exception {
        CompletableFuture<Engine> loading = new CompletableFuture<>();
        LlamaLanguageModel pending = new LlamaLanguageModel("tiny", 4096, loading, null, List.of());
        ModelRequest request = request(prompt("Hi."), List.of(), ToolCallingMode.DISALLOWED, false, null);
        CancellationToken token = CancellationToken.create();
        CompletableFuture<Throwable> cancelled = CompletableFuture.supplyAsync(
                () -> catchThrowableOfType(AgentException.class, () -> pending.respond(request, listener, token)));
        token.cancel();
        assertThat(((AgentException) cancelled.get()).code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(engine.calls).isEmpty();

        engine.then("Loaded.");
        CompletableFuture<ModelResponse> waiting = CompletableFuture.supplyAsync(() -> {
            try {
                return pending.respond(request, ModelListener.NONE, CancellationToken.create());
            } catch (AgentException e) {
                throw new IllegalStateException(e);
            }
        });
        loading.complete(engine);
        assertThat(((ModelResponse.Answer) waiting.get()).text()).isEqualTo("Loaded.");
    }

    @Test
    void tokenCountsAreExactOnceLoadedAndEstimatedBefore() {
        TranscriptEntry entry = TranscriptEntry.Prompt.of("Open the north gate, please.", null);
        int framing = engine.countTokens(engine.renderChat(List.of()));
        int whole =
                engine.countTokens(engine.renderChat(List.of(new ChatMessage("user", "Open the north gate, please."))));
        assertThat(model.countTokens(entry)).isEqualTo(whole - framing);
        assertThat(model.countTokens("abcdefgh")).isEqualTo(2);
        LlamaLanguageModel pending = new LlamaLanguageModel("tiny", 4096, new CompletableFuture<>(), null, List.of());
        assertThat(pending.countTokens(entry)).isEqualTo(Tokens.estimate(entry));
        assertThat(pending.countTokens("abcdefgh")).isEqualTo(Tokens.estimate("abcdefgh"));
    }
}
