package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.core.Environment;
import dev.oam.model.llama.ffm.FfmTuning;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The llama host's settings, read once from an environment a test gives (no process variable is touched). */
class LlamaSettingsTest {
    @Test
    void nothingSetIsOneSlotTheMachinesThreadsAutomaticGpuLayersInProcessAndAnAutomaticEngine() {
        LlamaSettings settings = LlamaSettings.read(Environment.of(Map.of()));
        assertThat(settings)
                .isEqualTo(new LlamaSettings(
                        1,
                        0,
                        0,
                        0,
                        dev.oam.model.llama.engine.EngineSettings.AUTO_LAYERS,
                        false,
                        null,
                        null,
                        FfmTuning.DEFAULTS));
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
        assertThat(sized).isEqualTo(new LlamaSettings(2, 1, 1, 512, 0, false, null, "binding", read.tuning()));
        assertThat(sized.withProcessHost(true).processHost()).isTrue();
        assertThat(sized.withGpuLayers(-1).gpuLayers()).isEqualTo(-1);
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
