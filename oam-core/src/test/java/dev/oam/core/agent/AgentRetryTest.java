package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.context;
import static dev.oam.core.testing.Fixtures.scripted;
import static dev.oam.core.testing.Fixtures.tool;
import static dev.oam.core.testing.TestOptions.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ScriptedModel;
import dev.oam.core.model.Usage;
import dev.oam.core.testing.RecordingListener;
import dev.oam.core.testing.RecordingToolChannel;
import dev.oam.core.tool.ToolReply;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@code maxAttempts}: transient failures are retried with a backoff, never after a tool ran. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class AgentRetryTest {
    private final RecordingListener listener = new RecordingListener();
    private final RecordingToolChannel channel =
            RecordingToolChannel.answeringWith(ToolReply.output(TextNode.valueOf("ok")));

    private Agent agent(LanguageModel model, int maxAttempts) {
        return new Agent(
                model,
                null,
                List.of(tool("open_gate")),
                options().maxAttempts(maxAttempts).build(),
                List.of());
    }

    private TurnResult respond(Agent agent) throws AgentException {
        return agent.respond(TurnRequest.of("Open."), context(listener, channel));
    }

    @Test
    void generationFailureIsRetriedAfterABackoff() throws Exception {
        Agent agent = agent(scripted("{\"steps\": [{\"error\": \"generation_failed\"}, {\"text\": \"ok\"}]}"), 2);

        long start = System.nanoTime();
        TurnResult result = respond(agent);

        assertThat(result.text()).isEqualTo("ok");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300));
        assertThat(result.steps()).hasSize(1);
        assertThat(agent.history()).hasSize(2);
    }

    @Test
    void backoffDoublesBetweenAttempts() throws Exception {
        Agent agent = agent(scripted("""
                {"steps": [{"error": "generation_failed"}, {"error": "generation_failed"}, {"text": "ok"}]}"""), 3);

        long start = System.nanoTime();
        TurnResult result = respond(agent);

        assertThat(result.text()).isEqualTo("ok");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThanOrEqualTo(Duration.ofMillis(300 + 600));
    }

    @Test
    void maxAttemptsOneNeverRetries() {
        ScriptedModel model = scripted("{\"steps\": [{\"error\": \"generation_failed\"}, {\"text\": \"ok\"}]}");

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent(model, 1)));

        assertThat(error.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(model.remainingSteps()).isEqualTo(1);
    }

    @Test
    void retriesStopAfterMaxAttempts() {
        ScriptedModel model = scripted("""
                {"steps": [{"error": "generation_failed", "message": "first"}, {"error": "generation_failed", "message": "second"},
                           {"text": "ok"}]}""");

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent(model, 2)));

        assertThat(error.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(error.getMessage()).isEqualTo("second");
        assertThat(model.remainingSteps()).isEqualTo(1);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "guardrail_violation",
                "refusal",
                "context_size_exceeded",
                "rate_limited",
                "unsupported_language",
                "model_unavailable",
                "invalid_request"
            })
    void nonRetryableFailuresAreNeverRetried(String code) {
        ScriptedModel model = scripted("{\"steps\": [{\"error\": \"" + code + "\"}, {\"text\": \"ok\"}]}");

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent(model, 3)));

        assertThat(error.code().dataCode()).isEqualTo(code);
        assertThat(model.remainingSteps()).isEqualTo(1);
    }

    @Test
    void failureAfterAToolRanIsNeverRetried() {
        ScriptedModel model = scripted("""
                {"steps": [{"toolCalls": [{"name": "open_gate"}]}, {"error": "generation_failed"}, {"text": "ok"}]}""");
        Agent agent = agent(model, 3);

        AgentException error = catchThrowableOfType(AgentException.class, () -> respond(agent));

        assertThat(error.code()).isEqualTo(ErrorCode.GENERATION_FAILED);
        assertThat(model.remainingSteps()).isEqualTo(1);
        assertThat(channel.sent()).hasSize(1);
        assertThat(agent.history()).isEmpty();
    }

    @Test
    void retriedAttemptWithoutTextLeavesNoTextEvents() throws Exception {
        respond(agent(scripted("{\"steps\": [{\"error\": \"generation_failed\"}, {\"text\": \"ok\"}]}"), 2));

        assertThat(listener.texts()).containsExactly(new TurnEvent.Text("ok", "ok", false));
    }

    @Test
    void textStreamedByAFailedAttemptIsResetBeforeTheRetry() throws Exception {
        TurnResult result = respond(agent(new FakeFlakyModel(), 2));

        assertThat(result.text()).isEqualTo("ok");
        assertThat(listener.texts())
                .containsExactly(
                        new TurnEvent.Text("Let me", "Let me", false),
                        new TurnEvent.Text("", "", true),
                        new TurnEvent.Text("ok", "ok", false));
    }

    /** Streams some text and then fails transiently on its first step; answers "ok" afterwards. */
    private static final class FakeFlakyModel implements LanguageModel {
        private int calls; // only the turn's thread calls respond

        @Override
        public ModelResponse respond(ModelRequest request, ModelListener listener, CancellationToken token)
                throws AgentException {
            if (calls++ == 0) {
                listener.onText("Let me");
                throw new AgentException(ErrorCode.GENERATION_FAILED, "The model produced garbage.");
            }
            listener.onText("ok");
            return new ModelResponse.Answer("ok", null, new Usage(1, 0, 1));
        }

        @Override
        public ModelAvailability availability() {
            return ModelAvailability.ready(8192, "flaky", List.of());
        }
    }
}
