package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.Conversation;
import dev.oam.testing.StdioClient;
import dev.oam.testing.gguf.TinyGguf;
import dev.oam.testing.hub.FakeHub;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code oam pull}, {@code oam models} and a pulled name as {@code oam stdio --model}, against a loopback hub: the
 * issue's "done when" (download, resume, verify, refuse; then serve the model with the hub down), the exit codes, and
 * the progress bar on a real terminal (tmux) versus the single final line elsewhere.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class PullCommandIT {
    private static final String NAME = "hf:owner/repo/tiny.gguf";
    private static byte[] gguf;

    @TempDir
    Path dir;

    private FakeHub hub;
    private Path cache;

    @BeforeAll
    static void model(@TempDir Path tmp) throws IOException {
        Path file = tmp.resolve("tiny.gguf");
        TinyGguf.tiny().name("pulled-tiny").write(file);
        gguf = Files.readAllBytes(file);
    }

    @BeforeEach
    void startHub() throws IOException {
        hub = FakeHub.start();
        hub.addFile("owner", "repo", "tiny.gguf", gguf);
        cache = dir.resolve("cache");
    }

    @AfterEach
    void stopHub() {
        hub.close();
    }

    private CliRun oam() {
        return new CliRun(dir)
                .env("HF_ENDPOINT", hub.uri().toString())
                .env("OAM_MODEL_CACHE", cache.toString())
                .env("HF_TOKEN", "");
    }

    private Path target() {
        return cache.resolve("hf/owner/repo/main/tiny.gguf");
    }

    @Test
    void pullDownloadsResumesAndVerifiesThenStdioServesTheNameWithTheHubDown() throws Exception {
        hub.cutDownloadsAt(gguf.length / 2, 1);

        CliRun.Result pulled = oam().run("pull", NAME);

        assertThat(pulled.exit()).as(pulled.toString()).isZero();
        assertThat(pulled.out().strip()).isEqualTo(target().toString());
        assertThat(pulled.err())
                .as("stderr is no terminal: only the final line")
                .isEqualTo("Pulled " + NAME + " (" + dev.oam.core.model.pull.Bytes.format(gguf.length)
                        + ", SHA-256 checked)\n");
        assertThat(hub.downloads()).hasSize(2);
        assertThat(hub.downloads().get(1).range()).startsWith("bytes=");
        assertThat(Files.readAllBytes(target())).isEqualTo(gguf);

        hub.close();
        CliRun.Result again = oam().run("pull", "--json", NAME);
        assertThat(again.exit()).as(again.toString()).isZero();
        assertThat(again.json().path("downloaded").asBoolean(true)).isFalse();
        assertThat(again.err()).startsWith("Already in the cache: " + NAME);

        List<String> command = List.of(
                "env",
                "OAM_MODEL_CACHE=" + cache,
                "HF_ENDPOINT=" + hub.uri(),
                "OAM_NATIVE_DIR=" + dir.resolve("native"),
                "OAM_LLAMA_THREADS=1",
                "OAM_LLAMA_THREADS_BATCH=1",
                "OAM_LLAMA_CONTEXT=2048",
                Transports.launcher().toString(),
                "stdio",
                "--model",
                NAME);
        StdioClient client = StdioClient.start(command);
        try (Conversation c = new Conversation(client)) {
            c.call(1, "initialize", "{\"protocolVersion\":\"1.0\"}");
            c.call(2, "session/create", "{\"session\":\"s\",\"options\":{\"maxResponseTokens\":4}}");
            JsonNode result = c.call(3, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello\"}");
            assertThat(result.path("text").isTextual()).isTrue();
            JsonNode availability = c.call(4, "model/availability", null);
            assertThat(availability.path("available").asBoolean()).isTrue();
            assertThat(availability.path("variant").asText()).isEqualTo("pulled-tiny");
            client.endInput();
            assertThat(client.awaitStopped(Duration.ofSeconds(30))).isTrue();
            assertThat(client.exitCode()).isZero();
        }
    }

    @Test
    void stdioWithANameThatIsNotCachedStopsAndSaysHowToPullIt() throws Exception {
        CliRun.Result run = oam().run("stdio", "--model", NAME);

        assertThat(run.exit()).isEqualTo(2);
        assertThat(run.err()).contains("is not in the model cache").contains("oam pull " + NAME);
        assertThat(hub.requests()).as("no download starts by itself").isEmpty();
    }

    @Test
    void aSessionNamingAModelThatIsNotCachedFailsAtOnceNamingModelPullThenRunsAfterThePull() throws Exception {
        List<String> command = List.of(
                "env",
                "-u",
                "OAM_MODEL",
                "OAM_MODEL_CACHE=" + cache,
                "HF_ENDPOINT=" + hub.uri(),
                "OAM_NATIVE_DIR=" + dir.resolve("native"),
                "OAM_LLAMA_THREADS=1",
                "OAM_LLAMA_THREADS_BATCH=1",
                "OAM_LLAMA_CONTEXT=2048",
                Transports.launcher().toString(),
                "stdio");
        StdioClient client = StdioClient.start(command);
        String create =
                "{\"session\":\"s\",\"options\":{\"maxResponseTokens\":4},\"model\":{\"type\":\"llama\",\"path\":\""
                        + NAME + "\"}}";
        try (Conversation c = new Conversation(client)) {
            JsonNode error = c.request(1, "session/create", create).error(1);
            assertThat(error.path("code").asInt()).isEqualTo(-32602);
            assertThat(error.path("message").asText())
                    .contains("model.path")
                    .contains("model/pull")
                    .contains(NAME);
            assertThat(hub.requests())
                    .as("nothing is downloaded inside a request for a session")
                    .isEmpty();

            c.call(2, "model/pull", "{\"model\":\"" + NAME + "\"}");
            c.call(3, "session/create", create);
            assertThat(c.call(4, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello\"}")
                            .path("text")
                            .isTextual())
                    .isTrue();
            client.endInput();
            assertThat(client.awaitStopped(Duration.ofSeconds(30))).isTrue();
        }
    }

    @Test
    void refusalsHaveTheirExitCodesAndLeaveNothingInTheCache() throws Exception {
        CliRun.Result badName = oam().run("pull", "hf:owner/../etc/x.gguf");
        assertThat(badName.exit()).as(badName.toString()).isEqualTo(2);
        assertThat(badName.err()).startsWith("Error: ").contains("'..'");

        CliRun.Result missing = oam().run("pull", "hf:owner/repo/missing.gguf");
        assertThat(missing.exit()).as(missing.toString()).isEqualTo(7);
        assertThat(missing.err()).contains("does not exist");

        hub.gate("owner/repo", "secret");
        CliRun.Result gated = oam().run("pull", NAME);
        assertThat(gated.exit()).as(gated.toString()).isEqualTo(8);
        assertThat(gated.err()).contains("HF_TOKEN");
        CliRun.Result withToken = oam().env("HF_TOKEN", "secret").run("pull", "--json", NAME);
        assertThat(withToken.exit()).as(withToken.toString()).isZero();
        assertThat(oam().run("models", "rm", NAME).exit()).isZero();

        hub.lieAboutHashes(true);
        CliRun.Result lying = oam().env("HF_TOKEN", "secret").run("pull", "--json", NAME);
        assertThat(lying.exit()).as(lying.toString()).isEqualTo(9);
        assertThat(lying.errJson().path("error").path("code").asText()).isEqualTo("hash_mismatch");
        hub.lieAboutHashes(false);

        hub.answerHtml(true);
        CliRun.Result html = oam().env("HF_TOKEN", "secret").run("pull", NAME);
        assertThat(html.exit()).as(html.toString()).isEqualTo(1);
        assertThat(html.err()).contains("HTML");
        hub.answerHtml(false);

        assertThat(target()).doesNotExist();
        CliRun.Result list = oam().run("models", "--json");
        assertThat(list.json().path("models")).isEmpty();
    }

    @Test
    void aFileThatIsNotGgufAndAFullDiskAreRefused() throws Exception {
        byte[] text = new byte[2048];
        Arrays.fill(text, (byte) 0);
        hub.addFile("owner", "repo", "zeros.gguf", text);
        CliRun.Result notGguf = oam().run("pull", "hf:owner/repo/zeros.gguf");
        assertThat(notGguf.exit()).as(notGguf.toString()).isEqualTo(1);
        assertThat(notGguf.err()).contains("not a GGUF model file");
        assertThat(cache.resolve("hf/owner/repo/main/zeros.gguf")).doesNotExist();
    }

    @Test
    void modelsListsAndRemoves() throws Exception {
        hub.addFile("owner", "repo", "model-Q4_K_M.gguf", gguf);
        assertThat(oam().run("pull", NAME).exit()).isZero();
        CliRun.Result quant = oam().run("pull", "owner/repo:Q4_K_M");
        assertThat(quant.exit()).as(quant.toString()).isZero();
        assertThat(quant.out().strip()).endsWith("model-Q4_K_M.gguf");

        CliRun.Result list = oam().run("models");
        assertThat(list.out()).contains("NAME").contains(NAME).contains("hf:owner/repo/model-Q4_K_M.gguf");

        CliRun.Result removed = oam().run("models", "rm", NAME);
        assertThat(removed.exit()).isZero();
        assertThat(target()).doesNotExist();
        assertThat(oam().run("models", "rm", NAME).exit()).isEqualTo(7);
        assertThat(oam().run("models", "--json").json().path("models")).hasSize(1);
    }

    @Tag("system-package")
    @Test
    void onATerminalTheBarShowsBytesAndRateThenTheFinalLine() throws Exception {
        Path tmux = tmux();
        hub.holdDownloadAt(gguf.length / 2);
        String session = "pull-" + ProcessHandle.current().pid();
        Path status = dir.resolve("status");
        String command = "env HF_ENDPOINT=" + hub.uri() + " OAM_MODEL_CACHE=" + cache + " " + Transports.launcher()
                + " pull " + NAME + "; echo $? > " + status + ".tmp; mv " + status + ".tmp " + status + "; sleep 600";
        run(tmux, "new-session", "-d", "-s", session, "-x", "150", "-y", "20", command);
        try {
            String screen = await(tmux, session, "50%");
            assertThat(screen)
                    .contains("Pulling " + NAME)
                    .contains("[############............]")
                    .contains(" / ");
            hub.release();
            screen = await(tmux, session, "Pulled " + NAME);
            assertThat(screen).doesNotContain("Pulling");
            while (!Files.exists(status)) {
                Thread.sleep(50);
            }
            assertThat(Files.readString(status).strip()).isEqualTo("0");
        } finally {
            run(tmux, "kill-session", "-t", session);
        }
    }

    private static Path tmux() throws Exception {
        Path script = Transports.launcher().getParent().resolve("lib/tmux.sh");
        Process p = new ProcessBuilder(
                        "bash", "-c", ". \"$1\" && oam_tmux && command -v tmux", "tmux", script.toString())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        String out = new String(p.getInputStream().readAllBytes()).strip();
        assertThat(p.waitFor())
                .as("tmux is needed for the terminal tests (bin/lib/tmux.sh)")
                .isZero();
        return Path.of(out);
    }

    private static String run(Path tmux, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(tmux.toString(), "-L", "oam-pull-it"));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        p.waitFor();
        return out;
    }

    /** Waits until the screen shows {@code text} (polling; the class timeout bounds it). */
    private static String await(Path tmux, String session, String text) throws Exception {
        while (true) {
            String screen = run(tmux, "capture-pane", "-p", "-t", session);
            if (screen.contains(text)) {
                return screen;
            }
            Thread.sleep(50);
        }
    }
}
