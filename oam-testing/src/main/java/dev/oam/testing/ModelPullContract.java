package dev.oam.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.gguf.TinyGguf;
import dev.oam.testing.hub.FakeHub;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code model/pull}, {@code model/progress} and {@code model/cancelPull} (this edition's extension) against a loopback
 * hub, on every transport: the bridge gets the hub and the cache the way a game gives them, through {@code HF_ENDPOINT}
 * and {@code OAM_MODEL_CACHE}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class ModelPullContract {
    private static final String NAME = "hf:owner/repo/tiny.gguf";

    @TempDir
    protected Path dir;

    protected FakeHub hub;
    private byte[] gguf;

    /** Connects a client to a fresh bridge whose environment holds {@code variables} (and no other model settings). */
    protected abstract ProtocolClient connect(Map<String, String> variables) throws Exception;

    /** For the test class that runs this contract against its transport. */
    protected ModelPullContract() {}

    @BeforeEach
    void startHub() throws IOException {
        hub = FakeHub.start();
        Path file = dir.resolve("tiny.gguf");
        TinyGguf.tiny().write(file);
        gguf = Files.readAllBytes(file);
        hub.addFile("owner", "repo", "tiny.gguf", gguf);
    }

    @AfterEach
    void stopHub() {
        hub.close();
    }

    private Conversation open() throws Exception {
        return new Conversation(connect(Map.of(
                "HF_ENDPOINT",
                hub.uri().toString(),
                dev.oam.core.model.pull.ModelCache.CACHE_VARIABLE,
                dir.resolve("cache").toString(),
                "HF_TOKEN",
                "")));
    }

    private static boolean progressOf(JsonNode message, Object id) {
        return Conversation.isEvent(message, "model/progress")
                && message.path("params").path("requestId").asText().equals(id.toString());
    }

    @Test
    void pullSendsProgressBeforeTheResponseAndIsListedInCapabilities() throws Exception {
        try (Conversation c = open()) {
            JsonNode init = c.call(1, "initialize", "{\"protocolVersion\":\"1.0\"}");
            assertThat(init.path("capabilities").path("methods"))
                    .extracting(JsonNode::asText)
                    .contains("model/pull", "model/cancelPull");
            assertThat(init.path("capabilities").path("notifications"))
                    .extracting(JsonNode::asText)
                    .contains("model/progress");

            JsonNode result = c.call(2, "model/pull", "{\"model\":\"" + NAME + "\"}");

            assertThat(result.path("model").asText()).isEqualTo(NAME);
            assertThat(result.path("bytes").asLong()).isEqualTo(gguf.length);
            assertThat(result.path("downloaded").asBoolean()).isTrue();
            assertThat(Files.readAllBytes(Path.of(result.path("path").asText())))
                    .isEqualTo(gguf);
            List<JsonNode> messages = c.messages();
            int response = c.indexOf(c.response(2));
            List<JsonNode> progress =
                    messages.stream().filter(m -> progressOf(m, 2)).toList();
            assertThat(progress).isNotEmpty();
            assertThat(progress).allSatisfy(p -> {
                assertThat(c.indexOf(p)).as("progress precedes the response").isLessThan(response);
                assertThat(p.path("params").path("model").asText()).isEqualTo(NAME);
                assertThat(p.path("params").path("bytesTotal").asLong()).isEqualTo(gguf.length);
            });
            assertThat(progress)
                    .extracting(p -> p.path("params").path("bytesDone").asLong())
                    .isSorted();
            assertThat(progress.get(progress.size() - 1)
                            .path("params")
                            .path("bytesDone")
                            .asLong())
                    .isEqualTo(gguf.length);

            hub.close();
            JsonNode again = c.call(3, "model/pull", "{\"model\":\"" + NAME + "\"}");
            assertThat(again.path("downloaded").asBoolean())
                    .as("cached: no hub needed")
                    .isFalse();
        }
    }

    @Test
    void cancelPullAnswersThePullCancelledAndTheNextPullResumes() throws Exception {
        int half = gguf.length / 2;
        hub.holdDownloadAt(half);
        try (Conversation c = open()) {
            c.request(1, "model/pull", "{\"model\":\"" + NAME + "\"}");
            c.await(
                    m -> progressOf(m, 1) && m.path("params").path("bytesDone").asLong() >= half,
                    "progress up to the hold");

            JsonNode cancelled = c.call(2, "model/cancelPull", "{\"model\":\"" + NAME + "\"}");
            assertThat(cancelled.path("cancelled").asBoolean()).isTrue();
            JsonNode error = c.error(1);
            assertThat(error.path("code").asInt()).isEqualTo(-32009);
            assertThat(error.path("data").path("code").asText()).isEqualTo("cancelled");
            assertThat(c.call(3, "model/cancelPull", "{\"model\":\"" + NAME + "\"}")
                            .path("cancelled")
                            .asBoolean())
                    .isFalse();

            hub.release();
            JsonNode result = c.call(4, "model/pull", "{\"model\":\"" + NAME + "\"}");
            assertThat(result.path("downloaded").asBoolean()).isTrue();
            assertThat(hub.downloads().get(hub.downloads().size() - 1).range()).isEqualTo("bytes=" + half + "-");
        }
    }

    @Test
    void shutdownCancelsAPullInFlight() throws Exception {
        hub.holdDownloadAt(gguf.length / 2);
        try (Conversation c = open()) {
            c.request(1, "model/pull", "{\"model\":\"" + NAME + "\"}");
            c.await(m -> progressOf(m, 1), "progress");
            c.request(2, "shutdown", null);
            assertThat(c.error(1).path("data").path("code").asText()).isEqualTo("cancelled");
            assertThat(c.result(2)).isNotNull();
        }
    }

    @Test
    void twoPullsOfOneModelShareOneDownload() throws Exception {
        hub.holdDownloadAt(gguf.length / 2);
        try (Conversation c = open()) {
            c.request(1, "model/pull", "{\"model\":\"" + NAME + "\"}");
            c.await(m -> progressOf(m, 1), "progress of the first");
            c.request(2, "model/pull", "{\"model\":\"" + NAME + "\"}");
            c.await(m -> progressOf(m, 2), "progress of the second, which joined");
            hub.release();
            assertThat(c.result(1).path("path").asText())
                    .isEqualTo(c.result(2).path("path").asText());
            assertThat(hub.downloads()).hasSize(1);
        }
    }

    @Test
    void failuresSayWhyInDataReason() throws Exception {
        try (Conversation c = open()) {
            JsonNode bad =
                    c.request(1, "model/pull", "{\"model\":\"hf:../x/y.gguf\"}").error(1);
            assertThat(bad.path("code").asInt()).isEqualTo(-32602);
            assertThat(bad.path("message").asText()).contains("'..'");
            assertThat(c.request(2, "model/pull", "{}").error(2).path("code").asInt())
                    .isEqualTo(-32602);

            JsonNode missing = c.request(3, "model/pull", "{\"model\":\"hf:owner/repo/none.gguf\"}")
                    .error(3);
            assertThat(missing.path("code").asInt()).isEqualTo(-32060);
            assertThat(missing.path("data").path("code").asText()).isEqualTo("pull_failed");
            assertThat(missing.path("data").path("reason").asText()).isEqualTo("not_found");

            hub.gate("owner/repo", "secret");
            JsonNode gated =
                    c.request(4, "model/pull", "{\"model\":\"" + NAME + "\"}").error(4);
            assertThat(gated.path("data").path("reason").asText()).isEqualTo("gated");
            assertThat(gated.path("message").asText()).contains("HF_TOKEN");
        }
    }

    @Test
    void aLyingHubLeavesNothingAndSaysHashMismatch() throws Exception {
        hub.lieAboutHashes(true);
        try (Conversation c = open()) {
            JsonNode error =
                    c.request(1, "model/pull", "{\"model\":\"" + NAME + "\"}").error(1);
            assertThat(error.path("data").path("reason").asText()).isEqualTo("hash_mismatch");
        }
        assertThat(dir.resolve("cache/hf/owner/repo/main/tiny.gguf")).doesNotExist();
    }
}
