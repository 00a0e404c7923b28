package dev.oam.ffi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Java entry class on its own (no native library: nothing here reaches the sink, which would call into C). The C
 * side is tested by NativeLibraryIT and NativeContractIT.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NativeBridgeTest {
    private final Log.Level level = Log.level();
    private NativeBridge bridge;

    @AfterEach
    void restore() {
        Log.setLevel(level);
        if (bridge != null) {
            bridge.destroy(false);
        }
    }

    private JsonNode call(String json, long timeoutMillis) throws Exception {
        if (bridge == null) {
            bridge = NativeBridge.create(1, new String[0]);
        }
        return Json.parse(new String(
                bridge.callBlocking(json.getBytes(StandardCharsets.UTF_8), timeoutMillis), StandardCharsets.UTF_8));
    }

    @Test
    void settingsFromTheEnvironmentConfigureTheEngine() {
        BridgeConfiguration configuration = NativeBridge.configure(new String[] {
            "OAM_BRIDGE_MAX_SESSIONS=3",
            "OAM_BRIDGE_TOOL_TIMEOUT=2.5",
            "OAM_BRIDGE_SCRIPTED_MODELS=0",
            "OAM_BRIDGE_LOG=error",
            "SOMETHING_ELSE=1"
        });
        assertThat(configuration.maxSessions()).isEqualTo(3);
        assertThat(configuration.defaultToolTimeout()).isEqualTo(Duration.ofMillis(2500));
        assertThat(configuration.allowsScriptedModels()).isFalse();
        assertThat(Log.level()).isEqualTo(Log.Level.ERROR);
        assertThat(NativeBridge.configure(new String[0]).maxSessions()).isEqualTo(64);
    }

    @Test
    void theModelBackendsAndTheSystemModelComeFromTheSettings(
            @org.junit.jupiter.api.io.TempDir java.nio.file.Path emptyCache) {
        // With no model named and an empty model cache there is none (with the default model cached, that one: issue
        // 26).
        BridgeConfiguration plain = NativeBridge.configure(new String[] {"OAM_MODEL_CACHE=" + emptyCache});
        assertThat(plain.modelProviders()).containsKeys("llama", "openai");
        assertThat(plain.systemModel()).isNull();
        BridgeConfiguration served = NativeBridge.configure(
                new String[] {"OAM_MODEL=http://127.0.0.1:9/v1", "OAM_MODEL_NAME=qwen2.5:3b", "OAM_API_KEY=sk-test"});
        assertThat(served.systemModel()).isNotNull();
        assertThat(served.systemModel().contextSize()).isPositive();
        assertThatThrownBy(() -> NativeBridge.configure(new String[] {"OAM_MODEL=/nowhere/npc.gguf"}))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("OAM_MODEL: ")
                .hasMessageContaining("/nowhere/npc.gguf")
                .hasMessageContaining("does not exist");
        assertThatThrownBy(() -> NativeBridge.configure(new String[] {"OAM_MODEL=gopher://old"}))
                .hasMessageContaining("no model backend in this build serves 'gopher://old' (backends: ");
    }

    @Test
    void aBridgesEnvironmentIsItsSettingsOverTheProcessWithoutWhatTheCSideResolved() {
        dev.oam.core.Environment process = dev.oam.core.Environment.of(
                java.util.Map.of(
                        "OAM_MODEL", "/process.gguf",
                        "OAM_API_KEY", "process-key",
                        "OAM_MODEL_HOST", "process",
                        "PATH", "/bin"),
                java.util.Map.of("oam.llama.engine", "jni"));
        dev.oam.core.Environment bridge = NativeBridge.environment(
                new String[] {"OAM_MODEL_NAME=npc", "OAM_MODEL_HOST=in-process", "OAM_BRIDGE_LOG=info"}, process);
        assertThat(bridge.variable("OAM_MODEL_NAME")).isEqualTo("npc");
        assertThat(bridge.variable("OAM_MODEL_HOST")).isEqualTo("in-process");
        // the C side passes these when set: left out means unset, never the JVM's own value
        assertThat(bridge.variable("OAM_MODEL")).isNull();
        assertThat(bridge.variable("OAM_API_KEY")).isNull();
        assertThat(bridge.variable("PATH")).isEqualTo("/bin");
        assertThat(bridge.property("oam.llama.engine")).isEqualTo("jni");
        assertThat(NativeBridge.environment(new String[0], process).variable("OAM_MODEL_HOST"))
                .isEqualTo("process");
    }

    @Test
    void badSettingsNameTheirVariable() {
        assertThatThrownBy(() -> NativeBridge.configure(new String[] {"OAM_BRIDGE_MAX_SESSIONS=0"}))
                .hasMessageContaining("OAM_BRIDGE_MAX_SESSIONS=0");
        assertThatThrownBy(() -> NativeBridge.configure(new String[] {"OAM_BRIDGE_TOOL_TIMEOUT=86401"}))
                .hasMessageContaining("OAM_BRIDGE_TOOL_TIMEOUT=86401")
                .hasMessageContaining("0 to 86400");
        assertThatThrownBy(() -> NativeBridge.configure(new String[] {"OAM_BRIDGE_TOOL_TIMEOUT=NaN"}))
                .hasMessageContaining("OAM_BRIDGE_TOOL_TIMEOUT");
        assertThatThrownBy(() -> NativeBridge.configure(new String[] {"OAM_BRIDGE_SCRIPTED_MODELS=maybe"}))
                .hasMessageContaining("OAM_BRIDGE_SCRIPTED_MODELS=maybe");
        assertThatThrownBy(() -> NativeBridge.configure(new String[] {"OAM_BRIDGE_LOG=loud"}))
                .hasMessageContaining("loud");
        assertThatThrownBy(() -> NativeBridge.create(0, new String[0])).hasMessageContaining("handle");
    }

    @Test
    void callBlockingAddsJsonrpcAndAPrivateIdWhenMissing() throws Exception {
        JsonNode response = call("{\"method\":\"ping\"}", 5000);
        assertThat(response.path("jsonrpc").asText()).isEqualTo("2.0");
        assertThat(response.path("id").asText()).startsWith("local-");
        assertThat(response.path("result")).isEqualTo(Json.object());
        assertThat(Json.write(call("{\"jsonrpc\":\"2.0\",\"id\":8.0,\"method\":\"ping\"}", 0)
                        .get("id")))
                .isEqualTo("8");
    }

    @Test
    void malformedInputGetsTheErrorTheBridgeWouldSend() throws Exception {
        assertThat(call("{broken", 1000).path("error").path("code").asInt()).isEqualTo(-32700);
        assertThat(call("[{\"method\":\"ping\"}]", 1000)
                        .path("error")
                        .path("message")
                        .asText())
                .contains("Batches");
        assertThat(call("42", 1000).path("error").path("code").asInt()).isEqualTo(-32600);
        JsonNode response = call("{\"jsonrpc\":\"2.0\",\"id\":\"t-1\",\"result\":{}}", 1000);
        assertThat(response.path("error").path("code").asInt()).isEqualTo(-32600);
        assertThat(response.path("id").asText()).isEqualTo("t-1");
        assertThat(call("{\"id\":null,\"method\":\"ping\"}", 1000)
                        .path("error")
                        .path("code")
                        .asInt())
                .isEqualTo(-32600);
    }

    @Test
    void aTimeoutCancelsTheRequestAndAnswersMinus32024() throws Exception {
        call(
                "{\"method\":\"session/create\",\"params\":{\"session\":\"s\",\"model\":{\"type\":\"scripted\",\"steps\":["
                        + "{\"text\":\"late\",\"delayMs\":20000},{\"text\":\"next\"}]}}}",
                5000);
        long started = System.nanoTime();
        JsonNode timedOut = call(
                "{\"id\":7.0,\"method\":\"session/respond\",\"params\":{\"session\":\"s\",\"prompt\":\"x\"}}", 100);
        assertThat(timedOut.path("error").path("code").asInt()).isEqualTo(-32024);
        assertThat(timedOut.path("error").path("data").path("code").asText()).isEqualTo("timeout");
        assertThat(Json.write(timedOut.get("id"))).isEqualTo("7");
        // Cancelled, not merely abandoned: the next turn does not queue behind the 20 s step.
        JsonNode next =
                call("{\"method\":\"session/respond\",\"params\":{\"session\":\"s\",\"prompt\":\"x\"}}", 10_000);
        assertThat(next.path("result").path("text").asText()).isEqualTo("next");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(10));
    }
}
