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
    void requestsWrittenAfterTheShutdownResponseAreRefusedUntilEndOfInput() throws Exception {
        StdioClient client = (StdioClient) Transports.stdio();
        try (Conversation c = new Conversation(client)) {
            c.call(1, "ping", null);
            assertThat(c.call(2, "shutdown", null)).isEqualTo(Json.object());
            // Written only once the shutdown response is here: before, the process was already exiting and
            // these lines were never read.
            c.request(3, "session/list", null);
            c.request(4, "ping", null);
            for (int id = 3; id <= 4; id++) {
                JsonNode refused = c.error(id);
                assertThat(refused.path("code").asInt()).as("id %d", id).isEqualTo(-32023);
                assertThat(refused.path("data").path("code").asText()).isEqualTo("shut_down");
            }
            c.send("{\"jsonrpc\":\"2.0\",\"method\":\"ping\"}"); // a notification: nothing to answer
            c.request(5, "ping", null);
            assertThat(c.error(5).path("code").asInt()).isEqualTo(-32023);
            client.endInput();
            assertThat(client.awaitStopped(Duration.ofSeconds(60))).isTrue();
            assertThat(client.exitCode()).isZero();
            assertThat(client.garbage()).isEmpty();
            assertThat(c.messages()).filteredOn(m -> m.has("id")).extracting(m -> m.get("id").asInt())
                    .as("one response each").containsExactly(1, 2, 3, 4, 5);
        }
    }

    @Test
    void aClientThatKeepsItsInputOpenStillSeesTheExit() throws Exception {
        StdioClient client = (StdioClient) Transports.stdio();
        try (Conversation c = new Conversation(client)) {
            assertThat(c.call(1, "shutdown", null)).isEqualTo(Json.object());
            // No end of input: the server exits once its input has been quiet for StdioCommand.SHUTDOWN_QUIET.
            assertThat(client.awaitStopped(Duration.ofSeconds(60))).isTrue();
            assertThat(client.exitCode()).isZero();
        }
    }
}
