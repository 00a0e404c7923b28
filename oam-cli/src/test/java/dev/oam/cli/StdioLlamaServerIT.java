package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import dev.oam.testing.RealModels;
import dev.oam.testing.StdioClient;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The supervised llama-server backend through {@code bin/oam stdio}: a session of {@code "type": "llama-server"} on the
 * real llama-server bin/test builds and SmolLM2 answers a turn, the server is a child of the bridge, and it is gone
 * once the bridge has shut down and exited.
 */
@Tag("real-model")
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class StdioLlamaServerIT {
    @Test
    void theServerStartsForASessionAndStopsWithTheBridge() throws Exception {
        List<String> command = List.of(Transports.launcher().toString(), "stdio");
        StdioClient client = StdioClient.start(command);
        ProcessHandle server;
        try (Conversation c = new Conversation(client, Duration.ofMinutes(5))) {
            String spec = "{\"type\":\"llama-server\",\"path\":"
                    + Json.write(Json.mapper().valueToTree(RealModels.smollm2().toString())) + ",\"binary\":"
                    + Json.write(
                            Json.mapper().valueToTree(RealModels.llamaServer().toString()))
                    + ",\"contextSize\":2048,\"threads\":2}";
            assertThat(c.call(1, "initialize", "{\"protocolVersion\":\"1.0\"}")
                            .path("capabilities")
                            .path("models")
                            .toString())
                    .contains("llama-server");
            c.call(
                    2,
                    "session/create",
                    "{\"session\":\"s\",\"model\":" + spec
                            + ",\"options\":{\"maxResponseTokens\":8,\"temperature\":0}}");
            JsonNode answer = c.call(3, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello!\"}");
            assertThat(answer.path("text").asText()).isNotBlank();
            server = ProcessHandle.of(client.pid())
                    .orElseThrow()
                    .descendants()
                    .filter(p -> p.info().command().orElse("").endsWith("llama-server"))
                    .findFirst()
                    .orElseThrow();
            assertThat(server.isAlive()).isTrue();
            c.call(4, "shutdown", "{}");
            client.endInput();
            assertThat(client.awaitStopped(Duration.ofMinutes(1))).isTrue();
            assertThat(client.exitCode()).isZero();
            assertThat(client.garbage()).as("stdout carries JSON-RPC only").isEmpty();
        }
        server.onExit().get(1, TimeUnit.MINUTES);
        assertThat(server.isAlive()).isFalse();
    }
}
