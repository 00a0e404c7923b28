package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.core.Environment;
import dev.oam.core.Log;
import dev.oam.core.model.ModelSpec;
import dev.oam.model.llama.engine.NativeSettings;
import dev.oam.model.llama.ffm.FfmTuning;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The llama host's settings, read once from an environment a test gives (no process variable is touched). */
class LlamaSettingsTest {
    @Test
    void nothingSetIsOneSlotTheMachinesThreadsAutomaticGpuLayersInProcessAndAnAutomaticEngine() {
        Environment none = Environment.of(Map.of());
        LlamaSettings settings = LlamaSettings.read(none);
        assertThat(settings)
                .isEqualTo(new LlamaSettings(
                        1,
                        0,
                        0,
                        0,
                        dev.oam.model.llama.engine.EngineSettings.AUTO_LAYERS,
                        false,
                        null,
                        NativeSettings.read(none, false),
                        FfmTuning.DEFAULTS,
                        LlamaSettings.ChildJvm.read(none)));
        assertThat(settings.natives().backend()).isEqualTo("auto");
        assertThat(settings.natives().gpuFirst()).isFalse();
        assertThat(settings.library()).isNull();
    }

    @Test
    void everyVariableReachesItsSetting() {
        LlamaSettings settings = LlamaSettings.read(Environment.of(Map.of(
                "OAM_LLAMA_SLOTS", "4",
                "OAM_LLAMA_THREADS", " 3 ",
                "OAM_LLAMA_THREADS_BATCH", "6",
                "OAM_LLAMA_CONTEXT", "2048",
                "OAM_LLAMA_GPU_LAYERS", "-1",
                "OAM_MODEL_HOST", "Process",
                "OAM_LLAMA_ENGINE", "jni",
                "OAM_LLAMA_LIBRARY", " /opt/libllama.so ",
                "OAM_LLAMA_GRAMMAR", "native")));
        assertThat(settings.slots()).isEqualTo(4);
        assertThat(settings.threads()).isEqualTo(3);
        assertThat(settings.threadsBatch()).isEqualTo(6);
        assertThat(settings.contextSize()).isEqualTo(2048);
        assertThat(settings.gpuLayers()).isEqualTo(-1);
        assertThat(settings.processHost()).isTrue();
        assertThat(settings.engine()).isEqualTo(EngineChoice.Kind.JNI);
        assertThat(settings.library()).isEqualTo("/opt/libllama.so");
        assertThat(settings.tuning().grammar()).isEqualTo(FfmTuning.Grammar.NATIVE);
    }

    @Test
    void invalidValuesKeepTheDefaults() {
        LlamaSettings settings = LlamaSettings.read(Environment.of(Map.of(
                "OAM_LLAMA_SLOTS", "17",
                "OAM_LLAMA_THREADS", "many",
                "OAM_LLAMA_CONTEXT", "100",
                "OAM_LLAMA_GPU_LAYERS", "-2",
                "OAM_MODEL_HOST", "elsewhere",
                "OAM_LLAMA_ENGINE", "gpu")));
        assertThat(settings).isEqualTo(LlamaSettings.read(Environment.of(Map.of())));
    }

    @Test
    void theJvmSwitchesWinOverTheVariables() {
        LlamaSettings settings = LlamaSettings.read(Environment.of(
                Map.of("OAM_LLAMA_ENGINE", "jni", "OAM_LLAMA_LIBRARY", "/v/libllama.so", "OAM_LLAMA_GRAMMAR", "native"),
                Map.of(
                        "oam.llama.engine", "ffm",
                        "oam.llama.library", "/p/libllama.so",
                        "oam.llama.grammar", "java",
                        "oam.llama.forced", "false",
                        "oam.llama.decodeTargetMs", "oops")));
        assertThat(settings.engine()).isEqualTo(EngineChoice.Kind.FFM);
        assertThat(settings.library()).isEqualTo("/p/libllama.so");
        assertThat(settings.tuning().grammar()).isEqualTo(FfmTuning.Grammar.JAVA);
        assertThat(settings.tuning().forced()).isFalse();
        assertThat(settings.tuning().decodeTargetMillis()).isEqualTo(FfmTuning.DECODE_TARGET_MS);
    }

    @Test
    void sizedKeepsTheEngineLibraryAndTuningAndRunsOnTheCpuInProcess() {
        LlamaSettings read = LlamaSettings.read(Environment.of(
                Map.of("OAM_MODEL_HOST", "process", "OAM_LLAMA_GPU_LAYERS", "8", "OAM_LLAMA_LIBRARY", "binding")));
        LlamaSettings sized = read.sized(2, 1, 1, 512);
        assertThat(sized)
                .isEqualTo(
                        new LlamaSettings(2, 1, 1, 512, 0, false, null, read.natives(), read.tuning(), read.child()));
        assertThat(sized.library()).isEqualTo("binding");
        assertThat(sized.withProcessHost(true).processHost()).isTrue();
        assertThat(sized.withGpuLayers(-1).gpuLayers()).isEqualTo(-1);
    }

    @Test
    void whereTheNativesAreIsReadOnceWithTheRestAndTheSwitchesWinOverTheVariables() {
        LlamaSettings settings = LlamaSettings.read(Environment.of(
                Map.of(
                        "OAM_CACHE_DIR", "/c",
                        "OAM_NATIVE_DIR", " /n ",
                        "OAM_JLLAMA_LIBRARY", "/j/libjllama.so",
                        "OAM_LLAMA_BUNDLE", "/b",
                        "OAM_LLAMA_BACKEND", "vulkan",
                        "OAM_LLAMA_GPU_LAYERS", "12",
                        "XDG_CACHE_HOME", "/x"),
                Map.of(
                        "oam.llama.backend", "CPU",
                        "os.name", "Linux",
                        "os.arch", "amd64",
                        "user.home", "/home/u",
                        "java.home", "/jdk",
                        "java.class.path", "a.jar",
                        "oam.crashDir", "/crash")));
        NativeSettings natives = settings.natives();
        assertThat(natives.cacheFolder()).isEqualTo(java.nio.file.Path.of("/c"));
        assertThat(natives.nativeDir()).isEqualTo("/n");
        assertThat(natives.jllamaLibrary()).isEqualTo("/j/libjllama.so");
        assertThat(natives.bundle()).isEqualTo("/b");
        assertThat(natives.backend()).as("the system property wins").isEqualTo("cpu");
        assertThat(natives.gpuFirst()).isTrue();
        assertThat(natives.osName()).isEqualTo("Linux");
        assertThat(natives.home()).isEqualTo("/home/u");
        assertThat(natives.javaHome()).isEqualTo("/jdk");
        assertThat(settings.child().javaHome()).isEqualTo("/jdk");
        assertThat(settings.child().classPath()).isEqualTo("a.jar");
        assertThat(settings.child().crashDir()).isEqualTo("/crash");
        assertThat(settings.child().cacheHome()).isEqualTo(java.nio.file.Path.of("/x/oam"));
    }

    @Test
    void aBadGpuLayerCountIsTheOneParsersWarningAndPrefersNoGpuBuild() {
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        Log.Level level = Log.level();
        Log.setStream(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        Log.setLevel(Log.Level.WARNING);
        LlamaSettings settings;
        Integer parsed;
        try {
            settings = LlamaSettings.read(Environment.of(Map.of("OAM_LLAMA_GPU_LAYERS", "lots")));
            parsed = ModelSpec.Llama.hostGpuLayers(Environment.of(Map.of("OAM_LLAMA_GPU_LAYERS", "lots")));
        } finally {
            Log.toSystemLogger();
            Log.setLevel(level);
        }
        assertThat(parsed).isNull();
        assertThat(settings.gpuLayers()).isEqualTo(dev.oam.model.llama.engine.EngineSettings.AUTO_LAYERS);
        // before: LlamaBuilds read the raw variable, and any value but 0 (even "lots") put GPU builds first
        assertThat(settings.natives().gpuFirst()).isFalse();
        String warning = "OAM_LLAMA_GPU_LAYERS='lots' is not an integer from -1 to 4096; using the default";
        assertThat(captured.toString(java.nio.charset.StandardCharsets.UTF_8)
                        .lines()
                        .filter(line -> line.contains(warning)))
                .as("the llama backend and the llama-server backend's parser say the same")
                .hasSize(2);
    }

    @Test
    void theRecordRefusesImpossibleSizes() {
        LlamaSettings standard = LlamaSettings.read(Environment.of(Map.of()));
        assertThatThrownBy(() -> standard.sized(0, 0, 0, 0)).hasMessageContaining("slots");
        assertThatThrownBy(() -> standard.sized(1, -1, 0, 0)).hasMessageContaining("threads");
        assertThatThrownBy(() -> standard.withGpuLayers(-2)).hasMessageContaining("gpuLayers");
    }

    @Test
    void theSystemModelsHostVariableFallsBackToTheBackendsChoice() {
        assertThat(LlamaSettings.processHost(null, true)).isTrue();
        assertThat(LlamaSettings.processHost(" ", false)).isFalse();
        assertThat(LlamaSettings.processHost("process", false)).isTrue();
        assertThat(LlamaSettings.processHost("in-process", true)).isFalse();
    }
}
