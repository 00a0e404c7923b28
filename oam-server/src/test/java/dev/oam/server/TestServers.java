package dev.oam.server;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ScriptedModel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.function.UnaryOperator;

/** Servers on a free loopback port for tests, and a small JDK-client helper. */
final class TestServers {
    private TestServers() {}

    static ScriptedModel script(String stepsJson) {
        try {
            return ScriptedModel.fromJson(Json.parse("{\"steps\":" + stepsJson + "}"), "script");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static OpenAIServer start(LanguageModel model) throws IOException {
        return start(model, options -> options);
    }

    static OpenAIServer start(LanguageModel model, UnaryOperator<ServerOptions> configure) throws IOException {
        return OpenAIServer.start(configure.apply(ServerOptions.defaults(model).withListener("127.0.0.1", 0, null)));
    }

    /** A response of the JDK client with its body parsed when it is JSON. */
    record Reply(int status, java.net.http.HttpHeaders headers, String body) {
        JsonNode json() {
            try {
                return Json.parse(body);
            } catch (IOException e) {
                throw new AssertionError("not JSON: " + body, e);
            }
        }

        String errorCode() {
            return json().path("error").path("code").asText();
        }
    }

    static Reply post(OpenAIServer server, String path, String body) throws IOException, InterruptedException {
        return send(
                server,
                HttpRequest.newBuilder(server.uri().resolve(path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(body)));
    }

    static Reply get(OpenAIServer server, String path) throws IOException, InterruptedException {
        return send(server, HttpRequest.newBuilder(server.uri().resolve(path)).GET());
    }

    static Reply send(OpenAIServer server, HttpRequest.Builder request) throws IOException, InterruptedException {
        try (HttpClient client = HttpClient.newHttpClient()) {
            HttpResponse<String> response = client.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Reply(response.statusCode(), response.headers(), response.body());
        }
    }

    static URI base(OpenAIServer server) {
        return server.uri();
    }
}
