package dev.oam.model.openai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Against a real server, only when {@code OAM_TEST_OPENAI_URL} is set (e.g. {@code http://127.0.0.1:11434/v1});
 * {@code OAM_TEST_OPENAI_MODEL} names the model (else the server's only one), {@code OAM_TEST_OPENAI_MODE} the
 * tool-call mode (default auto) and {@code OAM_API_KEY} the key, if the server wants one.
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class RealServerTest extends WireSupport {
    private String spec;

    @BeforeEach
    void needsAServer() {
        String url = System.getenv("OAM_TEST_OPENAI_URL");
        assumeTrue(url != null && !url.isBlank(), "OAM_TEST_OPENAI_URL is not set");
        String model = System.getenv("OAM_TEST_OPENAI_MODEL");
        String mode = System.getenv().getOrDefault("OAM_TEST_OPENAI_MODE", "auto");
        connect(
                System.getenv(),
                backend -> probedSystemModel(backend, url, model == null || model.isBlank() ? null : model));
        spec = "\"system\"";
        if (!mode.equals("auto")) {
            assumeTrue(model != null && !model.isBlank(), "OAM_TEST_OPENAI_MODE needs OAM_TEST_OPENAI_MODEL");
            spec = "{\"type\":\"openai\",\"baseUrl\":"
                    + Json.write(Json.mapper().valueToTree(url)) + ",\"model\":"
                    + Json.write(Json.mapper().valueToTree(model)) + ",\"toolCallMode\":\"" + mode + "\"}";
        }
    }

    @Test
    void availabilityReportsTheModel() {
        JsonNode availability = c.call(1, "model/availability", "{}");
        assertThat(availability.path("available").asBoolean())
                .as(availability.toString())
                .isTrue();
    }

    @Test
    void aPlainTurnStreamsAnAnswer() {
        c.call(
                1,
                "session/create",
                "{\"session\":\"s\",\"instructions\":\"Answer in one short sentence.\",\"model\":" + spec + "}");
        c.request(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Say hello to a traveller.\",\"stream\":true}");
        JsonNode result = c.result(2);
        assertThat(result.path("text").asText()).isNotBlank();
        assertThat(result.path("usage").path("inputTokens").asInt()).isPositive();
        assertThat(streamedText(c.events(2))).isEqualTo(result.path("text").asText());
    }

    @Test
    void aForcedToolIsCalledOnTheFirstStepThenTheModelAnswers() {
        c.call(
                1,
                "session/create",
                "{\"session\":\"s\",\"instructions\":\"You are a shopkeeper. Use tools for stock.\"," + "\"tools\":["
                        + STOCK_TOOL + "],\"options\":{\"toolChoice\":\"required\",\"maxAttempts\":3},\"model\":" + spec
                        + "}");
        c.request(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Do you have swords?\"}");
        JsonNode call = c.toolCall();
        assertThat(call.path("params").path("call").path("name").asText()).isEqualTo("check_inventory");
        c.reply(call, "{\"output\":{\"sword\":{\"stock\":2,\"price\":45}}}");
        JsonNode result = c.result(2);
        assertThat(result.path("text").asText()).isNotBlank();
        assertThat(result.path("steps").get(0).path("toolCallingMode").asText()).isEqualTo("required");
    }

    @Test
    void aSchemaTurnAnswersWithValidJson() {
        c.call(
                1,
                "session/create",
                "{\"session\":\"s\",\"instructions\":\"You are a goblin.\",\"options\":{\"maxAttempts\":3},"
                        + "\"model\":" + spec + "}");
        JsonNode result = c.call(
                2,
                "session/respond",
                "{\"session\":\"s\",\"prompt\":\"A knight with a sword approaches. Decide.\","
                        + "\"schema\":{\"type\":\"object\",\"properties\":{\"reasoning\":{\"type\":\"string\"},"
                        + "\"choice\":{\"type\":\"string\",\"enum\":[\"fight\",\"flee\"]}},\"required\":[\"reasoning\",\"choice\"]}}");
        assertThat(result.path("structured").path("choice").asText()).isIn("fight", "flee");
    }
}
