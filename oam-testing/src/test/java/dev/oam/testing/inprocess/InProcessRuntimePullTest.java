package dev.oam.testing.inprocess;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.model.pull.ModelCache;
import dev.oam.core.model.pull.NpmRuntime;
import dev.oam.testing.Conversation;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.hub.FakeHub;
import java.nio.charset.StandardCharsets;
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
 * {@code model/pull} of {@code runtime:cuda} over the protocol: progress before the response, a corrupt tarball's
 * reason.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class InProcessRuntimePullTest {
    private static final String PACKAGE = "@node-llama-cpp/linux-x64-cuda";
    private static final String MODULE = "package/bins/linux-x64-cuda/libggml-cuda.so";

    @TempDir
    Path dir;

    private FakeHub registry;
    private byte[] tgz;

    @BeforeEach
    void start() throws Exception {
        registry = FakeHub.start();
        byte[] module = new byte[200_000];
        java.util.Arrays.fill(module, (byte) 7);
        tgz = RuntimeTarballs.tarball(
                Map.of(MODULE, module, "package/LICENSE", "MIT".getBytes(StandardCharsets.UTF_8)));
    }

    @AfterEach
    void stop() {
        registry.close();
    }

    private Conversation open(String sha256) throws Exception {
        NpmRuntime pin = new NpmRuntime(
                "cuda",
                "linux-x86_64",
                PACKAGE,
                "3.22.1",
                sha256,
                tgz.length,
                List.of(MODULE, "package/LICENSE"),
                List.of("libcuda.so.1"));
        ModelCache cache = ModelCache.at(dir.resolve("cache")).withNpm(registry.uri(), List.of(pin), "linux-x86_64");
        return new Conversation(
                InMemoryClient.connect(BridgeConfiguration.builder().modelCache(cache)));
    }

    @Test
    void theRuntimeIsPulledWithProgressBeforeTheResponse() throws Exception {
        String sha = registry.addNpmTarball(PACKAGE, "3.22.1", tgz);
        try (Conversation c = open(sha)) {
            JsonNode result = c.call(1, "model/pull", "{\"model\":\"runtime:cuda\"}");

            assertThat(result.path("model").asText()).isEqualTo("runtime:cuda");
            assertThat(result.path("downloaded").asBoolean()).isTrue();
            Path folder = Path.of(result.path("path").asText());
            assertThat(folder).isEqualTo(dir.resolve("cache/runtime/cuda-linux-x86_64-3.22.1"));
            assertThat(Files.size(folder.resolve("libggml-cuda.so"))).isEqualTo(200_000);
            int response = c.indexOf(c.response(1));
            List<JsonNode> progress = c.messages().stream()
                    .filter(m -> Conversation.isEvent(m, "model/progress"))
                    .toList();
            assertThat(progress).isNotEmpty().allSatisfy(p -> {
                assertThat(c.indexOf(p)).isLessThan(response);
                assertThat(p.path("params").path("model").asText()).isEqualTo("runtime:cuda");
                assertThat(p.path("params").path("bytesTotal").asLong()).isEqualTo(tgz.length);
            });
            assertThat(progress.get(progress.size() - 1)
                            .path("params")
                            .path("bytesDone")
                            .asLong())
                    .isEqualTo(tgz.length);
        }
    }

    @Test
    void aTarballThatIsNotThePinnedOneIsAPullFailedWithHashMismatch() throws Exception {
        byte[] corrupt = tgz.clone();
        corrupt[corrupt.length / 3] ^= 1;
        registry.addNpmTarball(PACKAGE, "3.22.1", corrupt);
        try (Conversation c = open(FakeHub.sha256(tgz))) {
            JsonNode error =
                    c.request(1, "model/pull", "{\"model\":\"runtime:cuda\"}").error(1);
            assertThat(error.path("code").asInt()).isEqualTo(-32060);
            assertThat(error.path("data").path("reason").asText()).isEqualTo("hash_mismatch");
            assertThat(error.path("message").asText()).contains("runtime:cuda", "nothing was kept");
            JsonNode unknown =
                    c.request(2, "model/pull", "{\"model\":\"runtime:rocm\"}").error(2);
            assertThat(unknown.path("code").asInt()).isEqualTo(-32602);
        }
        assertThat(dir.resolve("cache/runtime")).doesNotExist();
    }
}
