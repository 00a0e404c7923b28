package dev.oam.model.llama.prompt;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.model.llama.engine.ModelFile;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.testing.LlamaServer;
import dev.oam.testing.RealModels;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Our Java rendering of chat templates ({@link ChatTemplate} through {@link ChatRenderer}) against the real peer, byte
 * for byte: llama.cpp's own {@code llama-server --jinja} renders the same conversations at {@code POST
 * /apply-template}. The server is the project's build of llama.cpp (bin/lib/real-models.sh, from llama-cpp-python
 * 0.3.36's vendored tree; {@code llama-server --version} printed {@code version: 0.5.0-dev (build 0, commit
 * oam-llama-cpp-python-0.3.36)} when these passed; the test prints the version it ran against), started once per
 * template on the SmolLM2-135M-Instruct file, whose vocabulary gives {@code bos_token} and {@code eos_token}. Each
 * conversation must render without falling back to ChatML, and a conversation the template refuses must be refused by
 * both.
 *
 * <p>Templates: the SmolLM2 file's own (ChatML), and, as test resources under {@code chat-templates/}, the real
 * templates of Qwen2.5-7B-Instruct (ChatML with its tools branch), Llama 3.1-8B-Instruct ({@code date_string},
 * {@code raise_exception} in its tools branch), Llama 3.2-3B-Instruct ({@code strftime_now}), Gemma 2 2B it (no system
 * role: {@code raise_exception} on it and on roles that do not alternate), Phi-3.5-mini-instruct and Mistral Nemo
 * Instruct 2407 ({@code namespace}, slices, {@code raise_exception}), copied unchanged from {@code models/templates/}
 * of that same llama.cpp tree (they are the Hugging Face repositories' templates).
 */
@Tag("real-model")
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class ChatTemplateGoldenTest {
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    private static ModelFile smollm2;

    @BeforeAll
    static void readModel() throws Exception {
        smollm2 = ModelFile.of(GgufFile.read(RealModels.smollm2()));
        Process version = new ProcessBuilder(RealModels.llamaServer().toString(), "--version")
                .redirectErrorStream(true)
                .start();
        String printed = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        version.waitFor(30, TimeUnit.SECONDS);
        System.out.println("llama-server --version: "
                + printed.lines()
                        .filter(l -> l.startsWith("version"))
                        .findFirst()
                        .orElse(printed.strip()));
    }

    private static ChatMessage m(String role, String content) {
        return new ChatMessage(role, content);
    }

    /** The conversations every template renders, by name. */
    private static Map<String, List<ChatMessage>> conversations() {
        Map<String, List<ChatMessage>> all = new LinkedHashMap<>();
        all.put(
                "system and user",
                List.of(m("system", "You are Bram, a guard at the north gate."), m("user", "Open the gate.")));
        all.put("user only", List.of(m("user", "Hello there!")));
        all.put(
                "multi-turn",
                List.of(
                        m("user", "Who are you?"),
                        m("assistant", "I am Bram."),
                        m("user", "Where is the inn?"),
                        m("assistant", "Down the road."),
                        m("user", "Thanks.")));
        all.put(
                "system and an assistant message",
                List.of(
                        m("system", "Be brief."),
                        m("user", "Hi"),
                        m("assistant", "Halt! Who goes there?"),
                        m("user", "A friend.")));
        all.put(
                "awkward contents",
                List.of(
                        m("system", "  Line one\nline two\n\n\"quoted\" and 'single' \\ backslash  "),
                        m(
                                "user",
                                "Grüße, 日本語, emoji 😀🐉 𝄞 and {{ messages }} {% if true %}x{% endif %} {# no #} <|im_end|>\n"),
                        m("assistant", "{{ raise_exception('no') }}\ttab\r\nCRLF"),
                        m("user", "  {%- set x = 1 -%}  ")));
        return all;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "(SmolLM2 file's own)",
                "Qwen-Qwen2.5-7B-Instruct",
                "meta-llama-Llama-3.1-8B-Instruct",
                "meta-llama-Llama-3.2-3B-Instruct",
                "google-gemma-2-2b-it",
                "microsoft-Phi-3.5-mini-instruct",
                "mistralai-Mistral-Nemo-Instruct-2407"
            })
    @SuppressWarnings("try") // LlamaServer.close() waits for the server to exit, so it may be interrupted
    void rendersEveryConversationByteForByteAsLlamaServerDoes(String name, @TempDir Path dir) throws Exception {
        String source;
        Path file = null;
        if (name.startsWith("(")) {
            source = smollm2.chatTemplate();
        } else {
            try (InputStream in = getClass().getResourceAsStream("/chat-templates/" + name + ".jinja")) {
                assertThat(in).as(name).isNotNull();
                source = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            file = Files.writeString(dir.resolve(name + ".jinja"), source);
        }
        ChatRenderer renderer =
                new ChatRenderer(new ChatTemplate(source, smollm2.bosToken(), smollm2.eosToken(), smollm2.addBos()));
        assertThat(renderer.problem())
                .as("the template renders a plain conversation")
                .isNull();
        try (LlamaServer server = LlamaServer.start(RealModels.llamaServer(), RealModels.smollm2(), file, 512, 1, 1)) {
            for (Map.Entry<String, List<ChatMessage>> c : conversations().entrySet()) {
                String expected = applyTemplate(server, c.getValue());
                assertThat(renderer.render(c.getValue()))
                        .as(name + ": " + c.getKey())
                        .isEqualTo(expected);
            }
        }
        assertThat(renderer.failures())
                .as("no conversation fell back to ChatML")
                .isEmpty();
    }

    @SuppressWarnings("try") // LlamaServer.close() waits for the server to exit, so it may be interrupted
    @Test
    void aConversationTheTemplateRefusesIsRefusedByBothAndFallsBackToChatMlHere(@TempDir Path dir) throws Exception {
        String source;
        try (InputStream in = getClass().getResourceAsStream("/chat-templates/google-gemma-2-2b-it.jinja")) {
            source = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Path file = Files.writeString(dir.resolve("gemma.jinja"), source);
        ChatRenderer renderer =
                new ChatRenderer(new ChatTemplate(source, smollm2.bosToken(), smollm2.eosToken(), smollm2.addBos()));
        List<ChatMessage> leadingAssistant = List.of(m("assistant", "Halt!"), m("user", "A friend."));
        try (LlamaServer server = LlamaServer.start(RealModels.llamaServer(), RealModels.smollm2(), file, 512, 1, 1)) {
            HttpResponse<String> response = post(server, leadingAssistant);
            assertThat(response.statusCode()).isEqualTo(400);
            assertThat(response.body()).contains("Conversation roles must alternate");
        }
        assertThat(renderer.render(leadingAssistant)).isEqualTo(ChatRenderer.chatMl(leadingAssistant));
        assertThat(renderer.failures()).singleElement().asString().contains("Conversation roles must alternate");
    }

    private static String applyTemplate(LlamaServer server, List<ChatMessage> messages)
            throws IOException, InterruptedException {
        HttpResponse<String> response = post(server, messages);
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        JsonNode prompt = Json.parse(response.body()).get("prompt");
        assertThat(prompt).as(response.body()).isNotNull();
        return prompt.asText();
    }

    private static HttpResponse<String> post(LlamaServer server, List<ChatMessage> messages)
            throws IOException, InterruptedException {
        ObjectNode body = Json.object();
        for (ChatMessage m : messages) {
            body.withArray("messages").addObject().put("role", m.role()).put("content", m.content());
        }
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + server.port() + "/apply-template"))
                .timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(Json.write(body), StandardCharsets.UTF_8))
                .build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }
}
