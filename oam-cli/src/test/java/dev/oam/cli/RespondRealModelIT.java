package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.RealModel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code oam respond} on each real model file (Gemma 3 270M, OAM_TEST_GEMMA_MODEL; SmolLM2-135M-Instruct with its own
 * template, OAM_TEST_SMOLLM2_MODEL): the exit-10 loop with a forced external tool. Asserts the protocol and the
 * validity of what the model produced (and that the answer is text a game can show), never its wording. Every further
 * call the model makes after the forced one is answered too, as a game's loop would.
 */
@Tag("real-model")
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class RespondRealModelIT {
    private static final String TOOL =
            "{\"name\":\"open_gate\",\"description\":\"Open a named gate.\",\"parameters\":{\"type\":\"object\","
                    + "\"properties\":{\"gate\":{\"type\":\"string\",\"enum\":[\"north\",\"south\"]}},\"required\":[\"gate\"]}}";

    @ParameterizedTest(name = "{0}")
    @EnumSource(RealModel.class)
    void aForcedExternalToolCallThenTheAnswer(RealModel real, @TempDir Path dir) throws Exception {
        Path model = real.path();
        CliRun oam = new CliRun(dir)
                .env("OAM_LLAMA_THREADS", "1")
                .env("OAM_LLAMA_THREADS_BATCH", "2")
                .env("OAM_LLAMA_CONTEXT", "2048");
        CliRun.Result first = oam.run(
                "respond",
                "--model",
                model.toString(),
                "--tool-json",
                TOOL,
                "--tool-choice",
                "required",
                "--max-tokens",
                "32",
                "-g",
                "Open the north gate.");
        assertThat(first.exit()).as(first.toString()).isEqualTo(10);
        // Each pending call is answered and the turn resumed until it completes: a model may call the tool again once
        // it has the output (the steps after the forced first are auto), within the default 4 tool rounds.
        CliRun.Result done = first;
        int answered = 0;
        for (int round = 0; done.exit() == 10; round++) {
            assertThat(round).as("tool rounds on %s; the last: %s", real, done).isLessThan(4);
            JsonNode pending = done.json();
            assertThat(pending.path("status").asText()).isEqualTo("tool_calls");
            assertThat(pending.path("calls")).as("%s", pending).isNotEmpty();
            List<String> resume = new ArrayList<>(List.of(
                    "respond",
                    "--model",
                    model.toString(),
                    "--resume",
                    pending.path("transcript").asText()));
            for (JsonNode call : pending.path("calls")) {
                assertThat(call.path("name").asText()).isEqualTo("open_gate");
                assertThat(call.path("arguments").path("gate").asText()).isIn("north", "south");
                assertThat(call.path("id").asText()).isNotBlank();
                resume.addAll(List.of("--tool-output", call.path("id").asText() + "={\"opened\":true}"));
                answered++;
            }
            resume.addAll(List.of("--max-tokens", "24", "-g", "--json"));
            done = oam.run(resume.toArray(String[]::new));
        }
        assertThat(done.exit()).as(done.toString()).isZero();
        JsonNode result = done.json();
        assertThat(result.path("status").asText()).isEqualTo("completed");
        assertThat(result.path("text").isTextual()).isTrue();
        assertThat(result.path("text").asText())
                .as("the answer on %s", real)
                .doesNotContain("\uFFFD")
                .doesNotContain("{\"tool_calls\"");
        assertThat(result.path("toolCalls")).hasSize(answered);
        for (JsonNode record : result.path("toolCalls")) {
            assertThat(record.path("output").path("opened").asBoolean())
                    .as("%s", record)
                    .isTrue();
        }
        JsonNode usage = result.path("usage"); // the whole turn's, both processes' steps included
        assertThat(usage.path("inputTokens").asInt()).isPositive();
        assertThat(usage.path("outputTokens").asInt()).isPositive();
        assertThat(usage.path("totalTokens").asInt())
                .isEqualTo(usage.path("inputTokens").asInt()
                        + usage.path("outputTokens").asInt());
        assertThat(result.path("steps")).hasSizeGreaterThanOrEqualTo(2);
        assertThat(result.path("steps")
                        .get(result.path("steps").size() - 1)
                        .path("toolCallingMode")
                        .asText())
                .isIn("allowed", "disallowed");
    }
}
