package dev.oam.bridge.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.core.json.Json;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The transports' friend access: installed by the engine itself, answering an unreadable line with -32600. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TransportAccessTest {
    @Test
    void aRejectedLineIsAnsweredWithInvalidMessageAndANullId() throws Exception {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        try (BridgeEngine engine = new BridgeEngine(BridgeConfiguration.defaults(), lines::add)) {
            TransportAccess.rejectLine(engine, "The line is too long.");

            String line = lines.poll(10, TimeUnit.SECONDS);
            assertThat(line).isNotNull();
            JsonNode message = Json.parse(line);
            assertThat(message.get("id").isNull()).isTrue();
            assertThat(message.path("error").path("code").asInt()).isEqualTo(-32600);
            assertThat(message.path("error").path("message").asText()).isEqualTo("The line is too long.");
        }
    }

    @Test
    void theEngineAccessCannotBeReplaced() {
        new BridgeEngine(BridgeConfiguration.defaults(), line -> {}).close(); // the engine class installed its access

        assertThatThrownBy(() -> TransportAccess.install((engine, reason) -> {}))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("installed already");
    }
}
