package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * The AOT cache's training script is a real session of requests: if one of them broke (a renamed parameter, a changed
 * shape), the training would quietly record an error path instead of the start-up a game goes through.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AotTrainingTest {
    @Test
    void everyRequestOfTheTrainingScriptSucceeds() throws Exception {
        StdioCommand command = new StdioCommand();
        new CommandLine(command).parseArgs("--model", "none");
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        int code =
                command.serve(new ByteArrayInputStream(AotTraining.SCRIPT.getBytes(StandardCharsets.UTF_8)), out, "");

        assertThat(code).isZero();
        List<Integer> answered = new ArrayList<>();
        List<Integer> requests = new ArrayList<>();
        for (String line : AotTraining.SCRIPT.strip().split("\n")) {
            requests.add(Json.parse(line).path("id").asInt());
        }
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            JsonNode message = Json.parse(line);
            if (message.has("id") && !message.has("method")) {
                assertThat(message.has("result"))
                        .as("the answer to request %s: %s", message.path("id"), line)
                        .isTrue();
                answered.add(message.path("id").asInt());
            }
        }
        assertThat(answered).containsExactlyInAnyOrderElementsOf(requests).hasSizeGreaterThan(10);
    }
}
