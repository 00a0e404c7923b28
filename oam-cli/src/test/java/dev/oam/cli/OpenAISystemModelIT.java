package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@code bin/oam stdio --model http://…/v1 --model-name NAME}: the shaded jar carries the openai backend. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class OpenAISystemModelIT {
    @Test
    void aUrlSystemModelAnswersThroughTheOpenAIBackend() throws Exception {
        List<JsonNode> chats = new CopyOnWriteArrayList<>();
        HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext(
                "/v1/models",
                exchange -> send(
                        exchange,
                        "{\"object\":\"list\",\"data\":[{\"id\":\"tiny\",\"object\":\"model\",\"owned_by\":\"test\"}]}"));
        server.createContext("/v1/chat/completions", exchange -> {
            byte[] request = exchange.getRequestBody().readAllBytes();
            chats.add(Json.parse(request, 0, request.length));
            send(
                    exchange,
                    "{\"id\":\"c\",\"object\":\"chat.completion\",\"model\":\"tiny\",\"choices\":[{\"index\":0,"
                            + "\"message\":{\"role\":\"assistant\",\"content\":\"Halt! Who goes there?\"},\"finish_reason\":\"stop\"}],"
                            + "\"usage\":{\"prompt_tokens\":21,\"completion_tokens\":6,\"total_tokens\":27}}");
        });
        server.start();
        String url = "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
        try (Conversation c = new Conversation(Transports.stdio("--model", url, "--model-name", "tiny"))) {
            JsonNode init = c.call(1, "initialize", "{}");
            assertThat(init.path("capabilities").path("models"))
                    .extracting(JsonNode::asText)
                    .contains("system", "openai");
            // The first probe of the server runs in the background; each availability call waits up to 1.5 s for it.
            JsonNode availability = init.path("model");
            for (int i = 0; i < 20 && availability.path("message").asText().startsWith("Waiting"); i++) {
                availability = c.call("availability-" + i, "model/availability", "{}");
            }
            assertThat(availability.path("available").asBoolean())
                    .as(availability.toString())
                    .isTrue();
            assertThat(availability.path("variant").asText()).isEqualTo("tiny");
            c.call(2, "session/create", "{\"session\":\"guard\",\"instructions\":\"You are a guard.\"}");
            JsonNode result = c.call(3, "session/respond", "{\"session\":\"guard\",\"prompt\":\"Hello.\"}");
            assertThat(result.path("text").asText()).isEqualTo("Halt! Who goes there?");
            assertThat(result.path("usage").path("inputTokens").asInt()).isEqualTo(21);
            assertThat(chats).hasSize(1);
            assertThat(chats.get(0).path("model").asText()).isEqualTo("tiny");
            assertThat(chats.get(0).path("messages").get(0).path("content").asText())
                    .isEqualTo("You are a guard.");
            assertThat(c.client().garbage()).isEmpty();
        } finally {
            server.stop(0);
        }
    }

    private static void send(HttpExchange exchange, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
    }
}
