package dev.oam.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A line a transport could not read is answered with -32600 and a null id. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RejectLineTest {
    @Test
    void aRejectedLineIsAnsweredWithInvalidMessageAndANullId() throws Exception {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        try (BridgeEngine engine = new BridgeEngine(BridgeConfiguration.defaults(), lines::add)) {
            engine.rejectLine("The line is too long.");

            String line = lines.poll(10, TimeUnit.SECONDS);
            assertThat(line).isNotNull();
            JsonNode message = Json.parse(line);
            assertThat(message.get("id").isNull()).isTrue();
            assertThat(message.path("error").path("code").asInt()).isEqualTo(-32600);
            assertThat(message.path("error").path("message").asText()).isEqualTo("The line is too long.");
        }
    }
}
