package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.gguf.TinyGguf;
import dev.oam.testing.openai.FakeOpenAIServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code bin/oam serve} as a child process, on every model this edition has: scripted, llama, an OpenAI server. */
// A separate thread: a child that never prints its address must fail the test, not block the build in readLine().
@SuppressWarnings("try") // Served.close() waits for oam serve to exit, so it may be interrupted
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ServeCommandIT {
    private static final String GATE =
            "{\"type\":\"function\",\"function\":{\"name\":\"open_gate\",\"parameters\":{\"type\":\"object\","
                    + "\"properties\":{\"gate\":{\"type\":\"string\",\"enum\":[\"north\",\"south\"]}},\"required\":[\"gate\"]}}}";

    @TempDir
    Path dir;

    /** A running {@code oam serve}: its base URL from the first line it prints. */
    private record Served(Process process, URI uri, Path stderr) implements AutoCloseable {
        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    private List<String> command(Map<String, String> env, String... args) {
        List<String> command = new ArrayList<>(List.of(
                "env",
                "-u",
                "OAM_MODEL",
                "-u",
                "OAM_MODEL_NAME",
                "-u",
                "OAM_API_KEY",
                "-u",
                "OAM_SCRIPT",
                "OAM_NATIVE_DIR=" + dir.resolve("native"),
                "OAM_LLAMA_THREADS=1",
                "OAM_LLAMA_THREADS_BATCH=1",
                "OAM_LLAMA_CONTEXT=2048"));
        env.forEach((name, value) -> command.add(name + "=" + value));
        command.add(Transports.launcher().toString());
        command.add("serve");
        command.addAll(List.of(args));
        return command;
    }

    private Served serve(Map<String, String> env, String... args) throws IOException {
        Path stderr = Files.createTempFile(dir, "serve", ".err");
        Process process = new ProcessBuilder(command(env, args))
                .redirectError(stderr.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        BufferedReader out =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String first = out.readLine();
        assertThat(first)
                .as(Files.readString(stderr))
                .isNotNull()
                .startsWith("oam serve: listening on http://127.0.0.1:");
        String second = out.readLine();
        assertThat(second).startsWith("Try: curl -s http://127.0.0.1:");
        String url = first.substring("oam serve: listening on ".length());
        return new Served(process, URI.create(url.substring(0, url.length() - "/v1".length())), stderr);
    }

    private record Exit(int code, String out, String err) {}

    private Exit refused(Map<String, String> env, String... args) throws Exception {
        Process process = new ProcessBuilder(command(env, args))
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(process.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return new Exit(process.exitValue(), out, err);
    }

    private static HttpResponse<String> post(Served served, String body, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(served.uri().resolve("/v1/chat/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        try (HttpClient client = HttpClient.newHttpClient()) {
            return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    private static HttpResponse<String> get(Served served, String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(served.uri().resolve(path));
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        try (HttpClient client = HttpClient.newHttpClient()) {
            return client.send(request.build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    @Test
    void oamScriptServesAScriptedModelWithKeyAndAlias() throws Exception {
        try (Served served = serve(
                Map.of("OAM_SCRIPT", "[{\"text\":\"Welcome, traveller.\"}]"),
                "--port",
                "0",
                "--api-key",
                "sesame",
                "--model-alias",
                "gpt-4o-mini=system",
                "-i",
                "You are Mira.")) {
            HttpResponse<String> reply = post(
                    served,
                    "{\"model\":\"gpt-4o-mini\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}",
                    "Authorization",
                    "Bearer sesame");
            assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
            JsonNode json = Json.parse(reply.body());
            assertThat(json.at("/choices/0/message/content").asText()).isEqualTo("Welcome, traveller.");
            assertThat(json.get("model").asText()).isEqualTo("gpt-4o-mini");
            assertThat(post(served, "{\"model\":\"system\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}")
                            .statusCode())
                    .isEqualTo(401);
            JsonNode models = Json.parse(
                    get(served, "/v1/models", "Authorization", "Bearer sesame").body());
            assertThat(models.at("/data/1/parent").asText()).isEqualTo("system");
        }
    }

    @Test
    void aLocalGgufModelAnswersAndCallsToolsThroughTheServer() throws Exception {
        Path model = dir.resolve("tiny.gguf");
        TinyGguf.tiny().name("serve-tiny").write(model);
        try (Served served = serve(Map.of(), "--port", "0", "--model", model.toString())) {
            HttpResponse<String> call = post(
                    served,
                    "{\"model\":\"system\",\"tools\":[" + GATE + "],\"tool_choice\":\"required\","
                            + "\"messages\":[{\"role\":\"user\",\"content\":\"Open the north gate.\"}]}");
            assertThat(call.statusCode()).as(call.body()).isEqualTo(200);
            JsonNode choice = Json.parse(call.body()).at("/choices/0");
            assertThat(choice.get("finish_reason").asText()).isEqualTo("tool_calls");
            JsonNode toolCall = choice.at("/message/tool_calls/0");
            assertThat(toolCall.at("/function/name").asText()).isEqualTo("open_gate");
            assertThat(Json.parse(toolCall.at("/function/arguments").asText())
                            .get("gate")
                            .asText())
                    .isIn("north", "south");
            HttpResponse<String> text = post(
                    served,
                    "{\"model\":\"system\",\"max_tokens\":3,\"stream\":true,"
                            + "\"messages\":[{\"role\":\"user\",\"content\":\"Hello.\"}]}");
            assertThat(text.statusCode()).as(text.body()).isEqualTo(200);
            assertThat(text.body()).contains("\"finish_reason\":").endsWith("data: [DONE]\n\n");
            JsonNode health = Json.parse(get(served, "/health").body());
            assertThat(health.at("/models/0/available").asBoolean())
                    .as(health.toString())
                    .isTrue();
        }
    }

    @Test
    void theLimitFlagsAndOriginsReachTheServer() throws Exception {
        // --timeout 10 s against a 60 s step (the first request is 504 after 10 s); --max-concurrent 1 --max-queued 0:
        // a second request while it runs is 429.
        String script = "{\"steps\":[{\"text\":\"slow\",\"delayMs\":60000}],\"fallback\":{\"text\":\"welcome\"}}";
        String hi = "{\"model\":\"system\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
        try (Served served = serve(
                Map.of("OAM_SCRIPT", script),
                "--port",
                "0",
                "--timeout",
                "10",
                "--max-concurrent",
                "1",
                "--max-queued",
                "0",
                "--allow-origin",
                "http://game.local",
                "--log-level",
                "debug")) {
            var slow = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                try {
                    return post(served, hi);
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            while (Json.parse(get(served, "/health").body())
                                    .get("active_requests")
                                    .asInt()
                            < 1
                    && !slow.isDone()) {
                Thread.onSpinWait();
            }
            assertThat(slow).isNotDone();
            HttpResponse<String> full = post(served, hi);
            assertThat(full.statusCode()).as(full.body()).isEqualTo(429);
            assertThat(Json.parse(full.body()).at("/error/code").asText()).isEqualTo("rate_limited");
            assertThat(full.headers().firstValue("Retry-After")).contains("1");
            HttpResponse<String> timedOut = slow.get();
            assertThat(timedOut.statusCode()).as(timedOut.body()).isEqualTo(504);
            assertThat(Json.parse(timedOut.body()).at("/error/code").asText()).isEqualTo("timeout");

            HttpResponse<String> foreign = post(served, hi, "Origin", "http://evil.example");
            assertThat(foreign.statusCode()).isEqualTo(403);
            assertThat(Json.parse(foreign.body()).at("/error/code").asText()).isEqualTo("origin_not_allowed");
            HttpResponse<String> allowed = post(served, hi, "Origin", "http://game.local");
            assertThat(allowed.statusCode()).as(allowed.body()).isEqualTo(200);
            assertThat(allowed.headers().firstValue("Access-Control-Allow-Origin"))
                    .contains("http://game.local");
            assertThat(Json.parse(allowed.body())
                            .at("/choices/0/message/content")
                            .asText())
                    .isEqualTo("welcome");
        }
        for (String[] bad : new String[][] {
            {"--timeout", "0"}, {"--max-concurrent", "0"}, {"--max-queued", "-1"}, {"--log-level", "loud"}
        }) {
            Exit exit = refused(Map.of(), "--port", "0", bad[0], bad[1]);
            assertThat(exit.code())
                    .as(String.join(" ", bad) + ": " + exit.err())
                    .isEqualTo(2);
            assertThat(exit.err()).startsWith("oam serve: ");
            assertThat(exit.out()).isEmpty();
        }
    }

    @Test
    void withOnlyASocketThereIsNoTcpListener() throws Exception {
        Path socket = dir.resolve("oam.sock");
        Path stderr = dir.resolve("socket.err");
        Process process = new ProcessBuilder(command(
                        Map.of("OAM_SCRIPT", "[{\"text\":\"over the socket\"}]"), "--socket", socket.toString()))
                .redirectError(stderr.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .start();
        try {
            BufferedReader out =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            String first = out.readLine();
            assertThat(first)
                    .as(Files.readString(stderr))
                    .isEqualTo("oam serve: listening on unix:" + socket.toAbsolutePath());
            assertThat(out.readLine()).startsWith("Try: curl -s --unix-socket " + socket.toAbsolutePath());
            String body = "{\"model\":\"system\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}";
            try (var channel = java.nio.channels.SocketChannel.open(java.net.UnixDomainSocketAddress.of(socket))) {
                String request =
                        "POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                                + "Connection: close\r\nContent-Length: " + body.length() + "\r\n\r\n" + body;
                channel.write(java.nio.ByteBuffer.wrap(request.getBytes(StandardCharsets.UTF_8)));
                String reply = new String(
                        java.nio.channels.Channels.newInputStream(channel).readAllBytes(), StandardCharsets.UTF_8);
                assertThat(reply).startsWith("HTTP/1.1 200").contains("over the socket");
            }
            assertThat(java.nio.file.attribute.PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)))
                    .isEqualTo("rw-------");
        } finally {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    @Test
    void anOpenAICompatibleServerIsRelayed() throws Exception {
        try (FakeOpenAIServer upstream = FakeOpenAIServer.start().then(FakeOpenAIServer.text("Halt! Who goes there?"));
                Served served = serve(
                        Map.of("OAM_API_KEY", "unused-here"),
                        "--port",
                        "0",
                        "--model",
                        upstream.baseUrl(),
                        "--model-name",
                        "fake-model")) {
            HttpResponse<String> reply = post(
                    served,
                    "{\"model\":\"system\",\"messages\":[{\"role\":\"system\",\"content\":\"You are a guard.\"},"
                            + "{\"role\":\"user\",\"content\":\"Hello.\"}]}",
                    "Authorization",
                    "Bearer unused-here");
            assertThat(reply.statusCode()).as(reply.body()).isEqualTo(200);
            assertThat(Json.parse(reply.body()).at("/choices/0/message/content").asText())
                    .isEqualTo("Halt! Who goes there?");
            assertThat(upstream.chat(0).body().path("model").asText()).isEqualTo("fake-model");
        }
    }

    @Test
    void withoutAModelTheServerStartsAndSaysSo() throws Exception {
        try (Served served = serve(Map.of(), "--port", "0")) {
            HttpResponse<String> health = get(served, "/health");
            assertThat(health.statusCode()).isEqualTo(503);
            HttpResponse<String> reply =
                    post(served, "{\"model\":\"system\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}");
            assertThat(reply.statusCode()).isEqualTo(503);
            assertThat(Json.parse(reply.body()).at("/error/code").asText()).isEqualTo("model_unavailable");
        }
    }

    @Test
    void badSetupsExitWithTheirCodesAndReasons() throws Exception {
        Exit alias = refused(Map.of(), "--port", "0", "--model-alias", "gpt=other");
        assertThat(alias.code()).isEqualTo(2);
        assertThat(alias.err()).contains("--model-alias takes NAME=system");
        Exit model = refused(
                Map.of(), "--port", "0", "--model", dir.resolve("missing.gguf").toString());
        assertThat(model.code()).isEqualTo(2);
        assertThat(model.err()).contains("missing.gguf");
        Exit script = refused(Map.of("OAM_SCRIPT", "[{\"dance\":1}]"), "--port", "0");
        assertThat(script.code()).isEqualTo(2);
        assertThat(script.err()).contains("OAM_SCRIPT");
        Path file = dir.resolve("not-a-socket");
        Files.writeString(file, "keep me");
        Exit socket = refused(Map.of(), "--socket", file.toString());
        assertThat(socket.code()).isEqualTo(1);
        assertThat(socket.err()).contains("server_start_failed").contains("not a socket");
        assertThat(Files.readString(file)).isEqualTo("keep me");
        for (Exit exit : List.of(alias, model, script, socket)) {
            assertThat(exit.out()).isEmpty();
        }
    }
}
