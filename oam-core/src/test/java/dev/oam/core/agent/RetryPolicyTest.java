package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.json;
import static dev.oam.core.testing.TinyContextModel.answer;
import static dev.oam.core.testing.TinyContextModel.failure;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.testing.RecordingListener;
import dev.oam.core.testing.TinyContextModel;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The retry policy on its own: which failures are asked again, the attempt numbers, usage and streamed resets. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RetryPolicyTest {
    private static final ModelRequest REQUEST = new ModelRequest(
            null,
            null,
            List.of(TranscriptEntry.Prompt.of("Hi.", null)),
            List.of(),
            ToolCallingMode.DISALLOWED,
            false,
            null,
            new GenerationOptions(null, null, null),
            7);

    private final RecordingListener listener = new RecordingListener();
    private final CancellationToken token = CancellationToken.create();

    private static GenerationSchema schema() throws Exception {
        return GenerationSchema.convert(json("""
                {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}"""), "Response");
    }

    @Test
    void aRetryableFailureIsAskedAgainAsTheNextAttempt() throws AgentException {
        TinyContextModel model =
                TinyContextModel.withContext(100).then(failure(ErrorCode.GENERATION_FAILED, "flaky"), answer("ok"));

        ModelResponse response = new RetryPolicy(model).generate(REQUEST, token, listener, 2, false, null, null);

        assertThat(((ModelResponse.Answer) response).text()).isEqualTo("ok");
        assertThat(model.requests()).extracting(ModelRequest::attempt).containsExactly(1, 2);
    }

    @Test
    void noAttemptIsRepeatedOnceAToolOfTheTurnRanOrAttemptsAreSpent() {
        for (int maxAttempts : new int[] {1, 2}) {
            boolean toolRan = maxAttempts == 2;
            TinyContextModel model =
                    TinyContextModel.withContext(100).then(failure(ErrorCode.GENERATION_FAILED, "flaky"));

            AgentException error = catchThrowableOfType(
                    AgentException.class,
                    () -> new RetryPolicy(model).generate(REQUEST, token, listener, maxAttempts, toolRan, null, null));

            assertThat(error.getMessage()).isEqualTo("flaky");
            assertThat(model.requests()).hasSize(1);
        }
    }

    @Test
    void aFailureThatIsNotRetryableIsNotAskedAgain() {
        TinyContextModel model = TinyContextModel.withContext(100).then(failure(ErrorCode.MODEL_UNAVAILABLE, "gone"));

        AgentException error = catchThrowableOfType(
                AgentException.class,
                () -> new RetryPolicy(model).generate(REQUEST, token, listener, 3, false, null, null));

        assertThat(error.code()).isEqualTo(ErrorCode.MODEL_UNAVAILABLE);
        assertThat(model.requests()).hasSize(1);
    }

    @Test
    void invalidOutputIsAskedAgainOnlyByAModelThatRetriesItAndTheUsageAddsUp() throws Exception {
        GenerationSchema schema = schema();
        TinyContextModel retrying =
                TinyContextModel.retryingInvalidOutput(100).then(answer("{\"n\": \"x\"}"), answer("{\"n\": 1}"));
        TinyContextModel strict = TinyContextModel.withContext(100).then(answer("not json"), answer("{\"n\": 1}"));

        ModelResponse response = new RetryPolicy(retrying).generate(REQUEST, token, listener, 2, false, schema, schema);
        AgentException error = catchThrowableOfType(
                AgentException.class,
                () -> new RetryPolicy(strict).generate(REQUEST, token, listener, 2, false, schema, schema));

        assertThat(((ModelResponse.Answer) response).text()).isEqualTo("{\"n\": 1}");
        assertThat(response.usage()).isEqualTo(new Usage(14, 0, 2));
        assertThat(error.isInvalidOutput()).isTrue();
        assertThat(error.getMessage()).isEqualTo("The model's answer is not JSON for the requested schema.");
        assertThat(error.usage()).isEqualTo(new Usage(7, 0, 1));
        assertThat(strict.requests()).hasSize(1);
    }

    @Test
    void streamedTextIsResetBeforeTheStepIsAskedAgain() throws AgentException {
        TinyContextModel model = TinyContextModel.withContext(100)
                .then(
                        (request, stream) -> {
                            stream.onText("Hel");
                            throw new AgentException(ErrorCode.GENERATION_FAILED, "cut off");
                        },
                        answer("Hello."));

        new RetryPolicy(model).generate(REQUEST, token, listener, 2, false, null, null);

        assertThat(listener.texts())
                .containsExactly(
                        new TurnEvent.Text("Hel", "Hel", false),
                        new TurnEvent.Text("", "", true),
                        new TurnEvent.Text("Hello.", "Hello.", false));
    }

    @Test
    void aFailureAfterCancellationIsReportedAsCancelled() {
        TinyContextModel model = TinyContextModel.withContext(100).then((request, stream) -> {
            token.cancel();
            throw new AgentException(ErrorCode.GENERATION_FAILED, "interrupted");
        });

        AgentException error = catchThrowableOfType(
                AgentException.class,
                () -> new RetryPolicy(model).generate(REQUEST, token, listener, 3, false, null, null));

        assertThat(error.code()).isEqualTo(ErrorCode.CANCELLED);
        assertThat(model.requests()).hasSize(1);
    }

    @Test
    void violationNamesWhatIsWrongAndAcceptsAFittingAnswer() throws Exception {
        GenerationSchema schema = schema();

        assertThat(RetryPolicy.violation(new ModelResponse.Answer("{\"n\": 2}", null, Usage.ZERO), schema))
                .isNull();
        assertThat(RetryPolicy.violation(new ModelResponse.Answer("{}", null, Usage.ZERO), schema))
                .startsWith("The model's answer does not match the schema: ");
        assertThat(RetryPolicy.violation(new ModelResponse.Answer("{}", null, Usage.ZERO), null))
                .isNull();
    }
}
