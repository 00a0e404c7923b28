package dev.oam.model.openai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.Log;
import dev.oam.core.model.ModelBackend;
import dev.oam.testing.Conversation;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.gguf.TinyGguf;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The supervised llama-server backend against fake llama-server binaries ({@link FakeLlamaServer}, a real child process
 * each): one that serves, one that exits at once, one that never becomes healthy, one that dies in the middle of a
 * turn, one that cannot run the file's architecture, and programs that are not llama-server at all. Every start's pid
 * is traced, so the tests check that no child outlives the bridge.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
class LlamaServerBackendTest {
    @TempDir
    Path dir;

    private Path model;
    private LlamaServerBackend backend;
    private Conversation c;
    private final ByteArrayOutputStream logs = new ByteArrayOutputStream();
    private Log.Level level;

    @BeforeEach
    void setUp() throws Exception {
        level = Log.level();
        Log.setLevel(Log.Level.INFO);
        Log.setStream(new PrintStream(logs, true, StandardCharsets.UTF_8));
        model = dir.resolve("tiny-chat.gguf");
        TinyGguf.tiny().chatTemplate(TinyGguf.CHATML_TEMPLATE).write(model);
    }

    @AfterEach
    void tearDown() throws Exception {
        if (c != null) {
            c.close();
        }
        if (backend != null) {
            backend.close();
        }
        Log.setStream(System.err);
        Log.setLevel(level);
    }

    /**
     * A fake llama-server in its own folder: a script called llama-server running {@link FakeLlamaServer} in
     * {@code mode}.
     */
    private Path fake(String mode) throws Exception {
        Path folder = Files.createDirectories(dir.resolve(mode));
        Path script = folder.resolve("llama-server");
        String java = ProcessHandle.current().info().command().orElseThrow();
        Files.writeString(
                script,
                "#!/bin/sh\nexec '" + java + "' -cp '" + System.getProperty("java.class.path") + "' "
                        + FakeLlamaServer.class.getName() + " " + mode + " '" + folder + "' \"$@\"\n");
        Files.setPosixFilePermissions(script, PosixFilePermissions.fromString("rwx------"));
        return script;
    }

    private List<String> starts(Path binary) throws Exception {
        Path trace = binary.resolveSibling("starts");
        return Files.exists(trace)
                ? Files.readAllLines(trace).stream()
                        .filter(line -> !line.isBlank())
                        .toList()
                : List.of();
    }

    private static boolean alive(String startLine) {
        long pid = Long.parseLong(startLine.substring(0, startLine.indexOf(' ')));
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    private Conversation connect(Map<String, String> environment) {
        Map<String, String> env = new HashMap<>(environment);
        backend = new LlamaServerBackend(env::get);
        c = new Conversation(
                InMemoryClient.connect(BridgeConfiguration.builder().backends(List.of(backend))));
        c.call("init", "initialize", "{\"protocolVersion\":\"1.0\"}");
        return c;
    }

    private String spec(Path binary, String extra) {
        return "{\"type\":\"llama-server\",\"path\":\"" + model + "\",\"binary\":\"" + binary + "\"" + extra + "}";
    }

    @Test
    void theBackendIsFoundOnTheClassPath() {
        assertThat(ModelBackend.discover()).anySatisfy(b -> assertThat(b.type()).isEqualTo("llama-server"));
    }

    @Test
    void aSessionRunsOnTheStartedServerWhichStopsWithTheBridge() throws Exception {
        Path binary = fake("serve");
        connect(Map.of());
        JsonNode created = c.call(
                1,
                "session/create",
                "{\"session\":\"a\",\"model\":"
                        + spec(binary, ",\"contextSize\":2048," + "\"slots\":2,\"gpuLayers\":-1,\"threads\":3") + "}");
        assertThat(created.path("warnings")).isEmpty(); // the file has its own template
        c.call(
                2,
                "session/create",
                "{\"session\":\"b\",\"model\":"
                        + spec(binary, ",\"contextSize\":2048,\"slots\":2," + "\"gpuLayers\":-1,\"threads\":3") + "}");
        JsonNode first = c.call(3, "session/respond", "{\"session\":\"a\",\"prompt\":\"Hello?\"}");
        assertThat(first.path("text").asText()).isEqualTo("Hello from start 1.");
        assertThat(c.call(4, "session/respond", "{\"session\":\"b\",\"prompt\":\"And you?\"}")
                        .path("text")
                        .asText())
                .isEqualTo("Hello from start 1.");
        List<String> starts = starts(binary);
        assertThat(starts).hasSize(1); // two sessions with the same file and settings share one server
        String line = starts.get(0);
        assertThat(line)
                .contains(
                        "-m " + model,
                        "--host 127.0.0.1",
                        "--jinja",
                        "-c 4096",
                        "-np 2",
                        "--alias tiny-chat",
                        "-t 3",
                        "-ngl 999")
                .doesNotContain("--chat-template-file");
        assertThat(alive(line)).isTrue();
        assertThat(logs.toString(StandardCharsets.UTF_8))
                .contains("version: 4242 (fake0042)", "is ready on http://127.0.0.1:");

        c.close();
        c = null;
        backend.close();
        assertThat(alive(line)).isFalse();
    }

    @Test
    void aServerThatExitsAtOnceFailsTheTurnWithItsOutput() throws Exception {
        Path binary = fake("exit");
        connect(Map.of());
        c.call(1, "session/create", "{\"session\":\"s\",\"model\":" + spec(binary, "") + "}");
        c.request(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello?\"}");
        JsonNode error = c.error(2);
        assertThat(error.path("data").path("code").asText()).isEqualTo("model_unavailable");
        assertThat(error.path("message").asText())
                .contains(
                        "llama-server on tiny-chat.gguf",
                        "exited before it was ready",
                        "exit status 3",
                        "the fake cannot load anything");
        // The next turn tries again (a driver that failed once may work now), and fails the same clear way.
        c.request(3, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello?\"}");
        assertThat(c.error(3).path("message").asText()).contains("exit status 3");
        assertThat(starts(binary)).hasSizeGreaterThanOrEqualTo(2);
    }

    @Test
    void aServerThatCannotRunTheArchitectureSaysSo() throws Exception {
        Path binary = fake("architecture");
        connect(Map.of());
        c.call(1, "session/create", "{\"session\":\"s\",\"model\":" + spec(binary, "") + "}");
        c.request(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello?\"}");
        assertThat(c.error(2).path("message").asText())
                .contains("cannot run the model architecture 'qwen9'", "a newer llama-server");
    }

    @Test
    void aServerThatNeverBecomesHealthyIsStoppedAfterTheStartTimeout() throws Exception {
        Path binary = fake("hang");
        connect(Map.of());
        c.call(1, "session/create", "{\"session\":\"s\",\"model\":" + spec(binary, ",\"startTimeoutSeconds\":1") + "}");
        c.request(3, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello?\"}");
        JsonNode error = c.error(3);
        assertThat(error.path("message").asText())
                .contains("did not answer /health within 1 s", "so it was stopped", "main: loading model");
        List<String> starts = starts(binary);
        assertThat(starts).isNotEmpty();
        assertThat(starts).noneMatch(LlamaServerBackendTest::alive);
    }

    @Test
    void aServerThatDiesMidTurnFailsThatTurnAndTheNextTurnRunsOnANewOne() throws Exception {
        Path binary = fake("die-once");
        connect(Map.of());
        c.call(1, "session/create", "{\"session\":\"s\",\"model\":" + spec(binary, "") + "}");
        c.request(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello?\",\"stream\":true}");
        JsonNode error = c.error(2);
        assertThat(error.path("data").path("code").asText()).isEqualTo("model_unavailable");
        assertThat(error.path("message").asText())
                .contains(
                        "llama-server on tiny-chat.gguf stopped during this turn",
                        "exit status 1",
                        "the next turn uses the new server");
        JsonNode next = c.call(3, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hello again?\"}");
        assertThat(next.path("text").asText()).isEqualTo("Hello from start 2.");
        List<String> starts = starts(binary);
        assertThat(starts).hasSize(2);
        assertThat(alive(starts.get(0))).isFalse();
        assertThat(alive(starts.get(1))).isTrue();
        // Another session's model on the same server sees it running.
        dev.oam.core.model.ModelAvailability availability =
                backend.create(Conversation.object(spec(binary, "")), "model").availability();
        assertThat(availability.available()).as("%s", availability).isTrue();
    }

    @Test
    void aProgramThatIsNotLlamaServerIsRefusedAtSessionCreate() throws Exception {
        Path other = dir.resolve("other");
        Files.createDirectories(other);
        Path echo = other.resolve("llama-server");
        Files.writeString(echo, "#!/bin/sh\necho 'I am a teapot'\n");
        Files.setPosixFilePermissions(echo, PosixFilePermissions.fromString("rwx------"));
        Path named = other.resolve("python3");
        Files.writeString(named, "#!/bin/sh\nexit 0\n");
        Files.setPosixFilePermissions(named, PosixFilePermissions.fromString("rwx------"));
        connect(Map.of());
        Map<String, String> cases = new java.util.LinkedHashMap<>();
        cases.put(
                spec(echo, ""),
                "is not llama.cpp's llama-server: '--version' printed no 'version: …' line (I am a teapot)");
        cases.put(
                spec(named, ""),
                "must name llama.cpp's llama-server executable (a file called llama-server), not python3");
        cases.put(spec(other.resolve("missing/llama-server"), ""), "which is not a file");
        cases.put(
                "{\"type\":\"llama-server\",\"path\":\"" + echo + "\",\"binary\":\"" + echo + "\"}",
                "is not a GGUF model file");
        cases.put("{\"type\":\"llama-server\",\"binary\":\"" + echo + "\"}", "Missing required parameter 'model.path'");
        cases.put(spec(echo, ",\"slots\":0"), "'model.slots'");
        cases.put(spec(echo, ",\"contextSize\":99999999"), "'model.contextSize'");
        cases.put(spec(echo, ",\"port\":8080"), "'model.port' is not a member");
        int id = 0;
        for (Map.Entry<String, String> entry : cases.entrySet()) {
            c.request(++id, "session/create", "{\"model\":" + entry.getKey() + "}");
            JsonNode error = c.error(id);
            assertThat(error.path("code").asInt()).as(entry.getKey()).isEqualTo(-32602);
            assertThat(error.path("message").asText()).as(entry.getKey()).contains(entry.getValue());
        }
    }

    @Test
    void theBinaryComesFromTheEnvironmentOrPathWhenNotGiven() throws Exception {
        Path binary = fake("serve");
        connect(Map.of("PATH", binary.getParent() + ":/nonexistent"));
        c.call(
                1,
                "session/create",
                "{\"session\":\"s\",\"model\":{\"type\":\"llama-server\",\"path\":\"" + model + "\"}}");
        assertThat(c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hi\"}")
                        .path("text")
                        .asText())
                .isEqualTo("Hello from start 1.");
        c.close();
        backend.close();
        connect(Map.of("PATH", "/nonexistent"));
        c.request(
                3,
                "session/create",
                "{\"session\":\"s\",\"model\":{\"type\":\"llama-server\",\"path\":\"" + model + "\"}}");
        assertThat(c.error(3).path("message").asText()).contains("no llama-server was found", "OAM_LLAMA_SERVER");
    }

    @Test
    void aBadHostGpuLayerCountIsTheLlamaBackendsWarningAndTheServersDefaultNotAnError() throws Exception {
        Path binary = fake("serve");
        Map<String, String> host = Map.of(
                "OAM_MODEL",
                "llama-server:" + model,
                "OAM_LLAMA_SERVER",
                binary.toString(),
                "OAM_LLAMA_GPU_LAYERS",
                "lots");
        backend = new LlamaServerBackend(Map.<String, String>of()::get);
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        dev.oam.core.Log.Level level = dev.oam.core.Log.level();
        dev.oam.core.Log.setStream(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        dev.oam.core.Log.setLevel(dev.oam.core.Log.Level.WARNING);
        dev.oam.core.model.LanguageModel system;
        try {
            // before: this threw "OAM_LLAMA_GPU_LAYERS must be an integer", where the llama backend warned
            system = dev.oam.core.model.ModelBackends.systemModel(
                    List.of(backend),
                    dev.oam.core.model.ModelSpec.fromEnvironment(host::get),
                    dev.oam.core.Environment.system());
        } finally {
            dev.oam.core.Log.toSystemLogger();
            dev.oam.core.Log.setLevel(level);
        }
        assertThat(captured.toString(java.nio.charset.StandardCharsets.UTF_8))
                .contains("OAM_LLAMA_GPU_LAYERS='lots' is not an integer from -1 to 4096; using the default");
        c = new Conversation(InMemoryClient.connect(
                BridgeConfiguration.builder().backends(List.of(backend)).systemModel(system)));
        c.call(1, "session/create", "{\"session\":\"s\"}");
        assertThat(c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hi\"}")
                        .path("text")
                        .asText())
                .isEqualTo("Hello from start 1.");
        assertThat(starts(binary).get(0)).contains("-m " + model).doesNotContain("-ngl");
    }

    @Test
    void theSystemModelNamesTheFileAfterTheLlamaServerPrefix() throws Exception {
        Path binary = fake("serve");
        // the host's variables (oam stdio's environment, the C library's settings) name the server and the layers
        Map<String, String> host = Map.of(
                "OAM_MODEL",
                "llama-server:" + model,
                "OAM_LLAMA_SERVER",
                binary.toString(),
                "OAM_LLAMA_GPU_LAYERS",
                "-1");
        backend = new LlamaServerBackend(Map.<String, String>of()::get);
        assertThat(backend.servesSystemModel("llama-server:" + model)).isTrue();
        assertThat(backend.servesSystemModel(model.toString()))
                .as("a plain .gguf stays the llama backend's")
                .isFalse();
        dev.oam.core.model.LanguageModel system = dev.oam.core.model.ModelBackends.systemModel(
                List.of(backend),
                dev.oam.core.model.ModelSpec.fromEnvironment(host::get),
                dev.oam.core.Environment.system());
        c = new Conversation(InMemoryClient.connect(
                BridgeConfiguration.builder().backends(List.of(backend)).systemModel(system)));
        c.call(1, "session/create", "{\"session\":\"s\"}");
        assertThat(c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hi\"}")
                        .path("text")
                        .asText())
                .isEqualTo("Hello from start 1.");
        assertThat(starts(binary).get(0)).contains("-m " + model, "-ngl 999");
        JsonNode availability = c.call(3, "model/availability", "{}");
        assertThat(availability.path("available").asBoolean())
                .as("%s", availability)
                .isTrue();
    }

    @Test
    void aGemmaFileWithoutTemplateGetsGemmasTurnsAndAWarning() throws Exception {
        // The tiny model's architecture is llama; a Gemma header is enough for the choice of template.
        Path gemma = dir.resolve("gemma-base.gguf");
        byte[] bytes = TinyGguf.tiny().chatTemplate(null).bytes();
        byte[] llama = "\u0005\0\0\0\0\0\0\0llama".getBytes(StandardCharsets.ISO_8859_1);
        byte[] patched = "\u0005\0\0\0\0\0\0\0gemma".getBytes(StandardCharsets.ISO_8859_1);
        int at = indexOf(bytes, llama);
        System.arraycopy(patched, 0, bytes, at, patched.length);
        Files.write(gemma, bytes);
        Path binary = fake("serve");
        connect(Map.of());
        JsonNode created = c.call(
                1,
                "session/create",
                "{\"session\":\"s\",\"model\":{\"type\":\"llama-server\",\"path\":\"" + gemma + "\",\"binary\":\""
                        + binary + "\"}}");
        assertThat(created.path("warnings").toString())
                .contains("gemma-base.gguf has no chat template", "Gemma's turn format");
        c.call(2, "session/respond", "{\"session\":\"s\",\"prompt\":\"Hi\"}");
        assertThat(starts(binary).get(0)).contains("--chat-template-file");
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        throw new AssertionError("not found");
    }
}
