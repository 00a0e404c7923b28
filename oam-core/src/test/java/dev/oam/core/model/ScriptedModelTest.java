package dev.oam.core.model;

import static dev.oam.core.testing.Fixtures.json;
import static dev.oam.core.testing.Fixtures.scripted;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.transcript.TranscriptEntry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The scripted model (docs/PROTOCOL.md, "Scripted model"), played directly (no agent). */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ScriptedModelTest {
    private final CancellationToken token = CancellationToken.create();

    /** A step's request: the prompt, then one tool round with these outputs as the model saw them. */
    private static ModelRequest request(String prompt, String... toolOutputs) {
        List<TranscriptEntry> entries = new ArrayList<>();
        entries.add(TranscriptEntry.Prompt.of(prompt, null));
        if (toolOutputs.length > 0) {
            List<ToolCall> calls = new ArrayList<>();
            for (int i = 0; i < toolOutputs.length; i++) {
                calls.add(new ToolCall("c" + i, "look", Json.object()));
            }
            entries.add(TranscriptEntry.ToolCalls.of(calls));
            for (int i = 0; i < toolOutputs.length; i++) {
                entries.add(TranscriptEntry.ToolOutput.of("look", "c" + i, toolOutputs[i]));
            }
        }
        return new ModelRequest(
                "You are a guard.",
                null,
                entries,
                List.of(),
                ToolCallingMode.ALLOWED,
                false,
                null,
                GenerationOptions.DEFAULT);
    }

    private String answer(ScriptedModel model, ModelRequest request) throws AgentException {
        return ((ModelResponse.Answer) model.respond(request, ModelListener.NONE, token)).text();
    }

    private String answer(ScriptedModel model) throws AgentException {
        return answer(model, request("Hello."));
    }

    /** Records the streamed text deltas and partial values. */
    private static final class RecordingModelListener implements ModelListener {
        final List<String> deltas = new ArrayList<>();
        final List<JsonNode> partials = new ArrayList<>();

        @Override
        public void onText(String delta) {
            deltas.add(delta);
        }

        @Override
        public void onPartial(JsonNode value) {
            partials.add(value);
        }
    }

    @Test
    void playsTheStepsInOrderThenTheDefaultFallback() throws Exception {
        ScriptedModel model = scripted("{\"steps\": [{\"text\": \"one\"}, {\"text\": \"two\"}]}");

        assertThat(answer(model)).isEqualTo("one");
        assertThat(answer(model)).isEqualTo("two");
        assertThat(answer(model)).isEqualTo("(script exhausted)");
        assertThat(answer(model)).isEqualTo("(script exhausted)");
    }

    @Test
    void customFallbackIsPlayedForeverOnceTheStepsRunOut() throws Exception {
        ScriptedModel model = scripted("{\"steps\": [{\"text\": \"one\"}], \"fallback\": {\"text\": \"Zzz.\"}}");

        answer(model);

        assertThat(answer(model)).isEqualTo("Zzz.");
        assertThat(answer(model)).isEqualTo("Zzz.");
    }

    @Test
    void fallbackMayBeAnError() throws Exception {
        ScriptedModel model = scripted("{\"fallback\": {\"error\": \"rate_limited\"}}");

        AgentException error = catchThrowableOfType(AgentException.class, () -> answer(model));

        assertThat(error.code()).isEqualTo(ErrorCode.RATE_LIMITED);
    }

    @Test
    void plainScriptedIsAnEmptyScript() throws Exception {
        ScriptedModel model = ScriptedModel.fromJson(TextNode.valueOf("scripted"), "model");

        assertThat(model.remainingSteps()).isZero();
        assertThat(answer(model)).isEqualTo("(script exhausted)");
    }

    @Test
    void remainingStepsCountsOnlyUnplayedSteps() throws Exception {
        ScriptedModel model = scripted("{\"steps\": [{\"text\": \"one\"}, {\"text\": \"two\"}]}");
        assertThat(model.remainingSteps()).isEqualTo(2);

        answer(model);
        assertThat(model.remainingSteps()).isEqualTo(1);
        answer(model);
        answer(model);
        assertThat(model.remainingSteps()).isZero();
    }

    @Test
    void textStepStreamsItsChunksAndTheyAddUpToTheAnswer() throws Exception {
        ScriptedModel model = scripted("{\"steps\": [{\"text\": \"aaaa bbbb cccc\", \"chunks\": 3}]}");
        RecordingModelListener listener = new RecordingModelListener();

        ModelResponse response = model.respond(request("Hi"), listener, token);

        assertThat(listener.deltas).containsExactly("aaaa", " bbbb", " cccc");
        assertThat(((ModelResponse.Answer) response).text()).isEqualTo("aaaa bbbb cccc");
    }

    @Test
    void splitNeverProducesEmptyPiecesNorBreaksASurrogatePair() {
        assertThat(ScriptedModel.split("", 3)).isEmpty();
        assertThat(ScriptedModel.split("Hmph.", 1)).containsExactly("Hmph.");
        assertThat(ScriptedModel.split("ab", 5)).containsExactly("a", "b");
        assertThat(ScriptedModel.split("😀😀", 4)).containsExactly("😀", "😀");
        for (String text : List.of(
                "The north gate is jammed shut.",
                "x  y   z",
                "unbroken",
                " leading",
                "trailing ",
                "Gorm 😀 sells iron swords")) {
            for (int chunks = 1; chunks <= 12; chunks++) {
                List<String> pieces = ScriptedModel.split(text, chunks);
                assertThat(String.join("", pieces)).as("%s in %d", text, chunks).isEqualTo(text);
                assertThat(pieces)
                        .as("%s in %d", text, chunks)
                        .noneMatch(String::isEmpty)
                        .noneMatch(piece -> Character.isLowSurrogate(piece.charAt(0)));
            }
        }
    }

    @Test
    void templateFillsThePromptAndTheTurnsToolOutputs() throws Exception {
        ScriptedModel model = scripted("""
                {"steps": [{"template": "You said {prompt}; latest {toolOutput}; all {toolOutputs}."}]}""");

        assertThat(answer(model, request("open", "first", "{\"opened\":true}")))
                .isEqualTo("You said open; latest {\"opened\":true}; all first\n{\"opened\":true}.");
    }

    @Test
    void templateWithoutToolOutputsFillsThemWithNothing() throws Exception {
        ScriptedModel model = scripted("{\"steps\": [{\"template\": \"<{toolOutput}|{toolOutputs}|{prompt}>\"}]}");

        assertThat(answer(model, request(""))).isEqualTo("<||>");
    }

    @Test
    void templateDoesNotExpandPlaceholdersThatComeFromThePrompt() throws Exception {
        ScriptedModel model = scripted("{\"steps\": [{\"template\": \"Echo: {prompt}\"}]}");

        assertThat(answer(model, request("What is {toolOutput}?", "secret"))).isEqualTo("Echo: What is {toolOutput}?");
    }

    @Test
    void jsonStepAnswersWithTheValueAsCompactTextStreamedAsText() throws Exception {
        ScriptedModel model = scripted("{\"steps\": [{\"json\": {\"choice\": \"refuse\", \"confidence\": 80}}]}");
        RecordingModelListener listener = new RecordingModelListener();

        ModelResponse.Answer answer = (ModelResponse.Answer) model.respond(request("Open?"), listener, token);

        assertThat(answer.text()).isEqualTo("{\"choice\":\"refuse\",\"confidence\":80}");
        assertThat(answer.structured()).isEqualTo(json("{\"choice\": \"refuse\", \"confidence\": 80}"));
        assertThat(listener.partials).isEmpty();
        assertThat(String.join("", listener.deltas)).isEqualTo(answer.text());
    }

    @Test
    void textStepThatIsJsonAlsoCarriesTheParsedValue() throws Exception {
        ScriptedModel model = scripted("{\"steps\": [{\"text\": \" {\\\"a\\\": 1} \"}, {\"text\": \"{not json\"}]}");

        ModelResponse.Answer json = (ModelResponse.Answer) model.respond(request("?"), ModelListener.NONE, token);
        ModelResponse.Answer broken = (ModelResponse.Answer) model.respond(request("?"), ModelListener.NONE, token);

        assertThat(json.structured()).isEqualTo(json("{\"a\": 1}"));
        assertThat(broken.structured()).isNull();
    }

    @Test
    void toolCallsStepKeepsGivenIdsAndGeneratesTheOthers() throws Exception {
        ScriptedModel model = scripted("""
                {"steps": [{"toolCalls": [{"name": "open_gate", "arguments": {"gate": "north"}, "id": "mine"},
                                          {"name": "ring_bell"}]}]}""");

        ModelResponse.ToolCalls calls =
                (ModelResponse.ToolCalls) model.respond(request("Open."), ModelListener.NONE, token);

        assertThat(calls.calls()).hasSize(2);
        assertThat(calls.calls().get(0))
                .isEqualTo(new ToolCall("mine", "open_gate", (ObjectNode) json("{\"gate\": \"north\"}")));
        assertThat(calls.calls().get(1).name()).isEqualTo("ring_bell");
        assertThat(calls.calls().get(1).id()).matches("call_[A-Za-z0-9]{24}");
        assertThat(calls.calls().get(1).arguments()).isEqualTo(Json.object());
        assertThat(calls.usage().outputTokens()).isPositive();
    }

    @Test
    void errorStepFailsWithItsCodeAndMessage() {
        ScriptedModel model = scripted("""
                {"steps": [{"error": "guardrail_violation"}, {"error": "refusal", "message": "I will not."}]}""");

        AgentException first = catchThrowableOfType(AgentException.class, () -> answer(model));
        AgentException second = catchThrowableOfType(AgentException.class, () -> answer(model));

        assertThat(first.code()).isEqualTo(ErrorCode.GUARDRAIL_VIOLATION);
        assertThat(first.getMessage()).isEqualTo("Scripted failure: guardrail_violation.");
        assertThat(second.code()).isEqualTo(ErrorCode.REFUSAL);
        assertThat(second.getMessage()).isEqualTo("I will not.");
    }

    @Test
    void usageCountsTheRequestAndTheAnswer() throws Exception {
        ScriptedModel model = scripted("{\"steps\": [{\"text\": \"Halt! Who goes there?\"}]}");

        ModelResponse response = model.respond(request("Hello, guard."), ModelListener.NONE, token);

        assertThat(response.usage().inputTokens()).isPositive();
        assertThat(response.usage().cachedInputTokens()).isZero();
        assertThat(response.usage().outputTokens()).isEqualTo(Tokens.estimate("Halt! Who goes there?"));
    }

    @Test
    void delayWaitsBeforeAnswering() throws Exception {
        ScriptedModel model = scripted("{\"steps\": [{\"text\": \"Late.\", \"delayMs\": 100}]}");

        long start = System.nanoTime();
        String text = answer(model);

        assertThat(text).isEqualTo("Late.");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(100));
    }

    @Test
    void delayIsCancellable() throws Exception {
        ScriptedModel model =
                scripted("{\"steps\": [{\"text\": \"Much later.\", \"delayMs\": 60000}, {\"text\": \"next\"}]}");
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        CountDownLatch started = new CountDownLatch(1);
        Thread.ofPlatform().daemon().start(() -> {
            started.countDown();
            try {
                model.respond(request("Hello."), ModelListener.NONE, token);
                outcome.complete(null);
            } catch (Throwable e) {
                outcome.complete(e);
            }
        });
        started.await();

        long start = System.nanoTime();
        token.cancel();
        Throwable error = outcome.get(5, TimeUnit.SECONDS);

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThat(error)
                .isInstanceOfSatisfying(
                        AgentException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CANCELLED));
        assertThat(model.remainingSteps()).isEqualTo(1);
    }

    @Test
    void cancelledTokenFailsAStepWithoutDelay() {
        ScriptedModel model = scripted("{\"steps\": [{\"text\": \"Hi.\"}]}");
        token.cancel();

        AgentException error = catchThrowableOfType(AgentException.class, () -> answer(model));

        assertThat(error.code()).isEqualTo(ErrorCode.CANCELLED);
    }

    @Test
    void concurrentCallersEachPlayADifferentStep() throws Exception {
        int n = 16;
        StringBuilder script = new StringBuilder("{\"steps\": [");
        for (int i = 0; i < n; i++) {
            script.append(i == 0 ? "" : ",").append("{\"text\": \"s").append(i).append("\"}");
        }
        ScriptedModel model = scripted(script.append("]}").toString());
        Set<String> answers = ConcurrentHashMap.newKeySet();
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            threads.add(Thread.ofPlatform().daemon().start(() -> {
                try {
                    go.await();
                    answers.add(answer(model));
                } catch (Exception e) {
                    answers.add("failed: " + e);
                }
            }));
        }

        go.countDown();
        for (Thread thread : threads) {
            thread.join();
        }

        assertThat(answers).hasSize(n).allMatch(answer -> answer.matches("s\\d+"));
        assertThat(model.remainingSteps()).isZero();
    }

    @Test
    void availabilityIsAlwaysReady() {
        ModelAvailability availability =
                ScriptedModel.fromJson(TextNode.valueOf("scripted"), "model").availability();

        assertThat(availability.available()).isTrue();
        assertThat(availability.contextSize()).isEqualTo(8192);
    }
}
