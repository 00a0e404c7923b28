package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.RealModels;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code oam respond} on the real Gemma 3 270M file (OAM_TEST_GEMMA_MODEL): the exit-10 loop with a forced external
 * tool. Asserts the protocol and the validity of what the model produced, never its wording.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class RespondGemmaIT {
    private static final String TOOL = "{\"name\":\"open_gate\",\"description\":\"Open a named gate.\",\"parameters\":{\"type\":\"object\","
            + "\"properties\":{\"gate\":{\"type\":\"string\",\"enum\":[\"north\",\"south\"]}},\"required\":[\"gate\"]}}";

    @Test
    void aForcedExternalToolCallThenTheAnswer(@TempDir Path dir) throws Exception {
        Path model = RealModels.gemma();
        CliRun oam = new CliRun(dir).env("OAM_LLAMA_THREADS", "1").env("OAM_LLAMA_THREADS_BATCH", "2").env("OAM_LLAMA_CONTEXT", "2048");
        CliRun.Result first = oam.run("respond", "--model", model.toString(), "--tool-json", TOOL, "--tool-choice", "required",
                "--max-tokens", "32", "-g", "Open the north gate.");
        assertThat(first.exit()).as(first.toString()).isEqualTo(10);
        JsonNode pending = first.json();
        assertThat(pending.path("status").asText()).isEqualTo("tool_calls");
        JsonNode call = pending.path("calls").get(0);
        assertThat(call.path("name").asText()).isEqualTo("open_gate");
        assertThat(call.path("arguments").path("gate").asText()).isIn("north", "south");
        assertThat(call.path("id").asText()).isNotBlank();

        CliRun.Result done = oam.run("respond", "--model", model.toString(), "--resume", pending.path("transcript").asText(),
                "--tool-output", call.path("id").asText() + "={\"opened\":true}", "--max-tokens", "24", "-g", "--json");
        assertThat(done.exit()).as(done.toString()).isZero();
        JsonNode result = done.json();
        assertThat(result.path("status").asText()).isEqualTo("completed");
        assertThat(result.path("text").isTextual()).isTrue();
        assertThat(result.path("toolCalls")).hasSize(1);
        assertThat(result.path("toolCalls").get(0).path("output").path("opened").asBoolean()).isTrue();
        JsonNode usage = result.path("usage"); // the whole turn's, both processes' steps included
        assertThat(usage.path("inputTokens").asInt()).isPositive();
        assertThat(usage.path("outputTokens").asInt()).isPositive();
        assertThat(usage.path("totalTokens").asInt()).isEqualTo(usage.path("inputTokens").asInt() + usage.path("outputTokens").asInt());
        assertThat(result.path("steps")).hasSizeGreaterThanOrEqualTo(2);
        assertThat(result.path("steps").get(result.path("steps").size() - 1).path("toolCallingMode").asText()).isIn("allowed", "disallowed");
    }
}
