package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import dev.oam.testing.StdioClient;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code oam stdio} after {@code shutdown}, against a real {@code bin/oam stdio} child process. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StdioShutdownIT {
    @Test
    void requestsWrittenBeforeTheShutdownResponseAreRefusedAndTheServerExitsWithItsInputOpen() throws Exception {
        StdioClient client = (StdioClient) Transports.stdio();
        try (Conversation c = new Conversation(client)) {
            c.call(1, "ping", null);
            c.request(2, "shutdown", null);
            c.request(3, "session/list", null);
            c.send("{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}"); // a notification: nothing to answer
            c.request(4, "ping", null);
            assertThat(c.result(2)).isEqualTo(Json.object());
            for (int id = 3; id <= 4; id++) {
                JsonNode refused = c.error(id);
                assertThat(refused.path("code").asInt()).as("id %d", id).isEqualTo(-32023);
                assertThat(refused.path("data").path("code").asText()).isEqualTo("shut_down");
            }
            // No end of input: the server exits on its own.
            assertThat(client.awaitStopped(Duration.ofSeconds(60))).isTrue();
            assertThat(client.exitCode()).isZero();
            assertThat(client.garbage()).isEmpty();
            // shutdown is deferred: the requests after it are refused at once, possibly before its own response
            assertThat(c.messages())
                    .filteredOn(m -> m.has("id"))
                    .extracting(m -> m.get("id").asInt())
                    .as("one response each")
                    .containsExactlyInAnyOrder(1, 2, 3, 4);
        }
    }

    @Test
    void theServerExitsAfterTheShutdownResponseWithItsInputOpen() throws Exception {
        // A game that quits waits for the process: it exits once the shutdown response is delivered, stdin left open.
        // (How soon is a figure of the machine, not a test's business: bench/ measures times.)
        StdioClient client = (StdioClient) Transports.stdio();
        try (Conversation c = new Conversation(client)) {
            c.call(1, "ping", null);
            assertThat(c.call(2, "shutdown", null)).isEqualTo(Json.object());
            assertThat(client.awaitStopped(Duration.ofSeconds(60)))
                    .as("exit after the shutdown response, stdin still open")
                    .isTrue();
            assertThat(client.exitCode()).isZero();
        }
    }
}
