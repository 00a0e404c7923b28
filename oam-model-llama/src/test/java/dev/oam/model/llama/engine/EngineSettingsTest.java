package dev.oam.model.llama.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.model.llama.jni.JniEngine;
import org.junit.jupiter.api.Test;

class EngineSettingsTest {
    @Test
    void defaultsResolveAgainstTheFileAndTheMachine() {
        EngineSettings twoCores = EngineSettings.defaults().resolve(32768, 2);
        assertThat(twoCores).isEqualTo(new EngineSettings(8192, 1, 1, 2, 0));
        assertThat(EngineSettings.defaults().resolve(4096, 8)).isEqualTo(new EngineSettings(4096, 1, 7, 8, 0));
        assertThat(EngineSettings.defaults().withContextSize(512).withSlots(2).resolve(4096, 1))
                .isEqualTo(new EngineSettings(512, 2, 1, 1, 0));
        assertThat(EngineSettings.defaults()
                        .withContextSize(100_000)
                        .resolve(4096, 2)
                        .contextSize())
                .as("never more than the model was trained for")
                .isEqualTo(4096);
    }

    @Test
    void invalidValuesAreRejectedNamingTheField() {
        assertThatThrownBy(() -> EngineSettings.defaults().withSlots(0)).hasMessageContaining("slots");
        assertThatThrownBy(() -> EngineSettings.defaults().withContextSize(8)).hasMessageContaining("contextSize");
        assertThatThrownBy(() -> EngineSettings.defaults().withThreads(-1)).hasMessageContaining("threads");
        assertThatThrownBy(() -> EngineSettings.defaults().withThreadsBatch(1000))
                .hasMessageContaining("threadsBatch");
        assertThatThrownBy(() -> EngineSettings.defaults().withGpuLayers(-2)).hasMessageContaining("gpuLayers");
        assertThat(EngineSettings.defaults().withGpuLayers(-1).gpuLayers())
                .as("-1: every layer")
                .isEqualTo(-1);
    }

    @Test
    void whenNothingNamesAGpuLayerCountTheHostDefaultIsAutomatic() {
        // the host's default with OAM_LLAMA_GPU_LAYERS unset: every layer where llama.cpp has a GPU device
        assertThat(dev.oam.model.llama.LlamaSettings.read(dev.oam.core.Environment.of(java.util.Map.of()))
                        .gpuLayers())
                .isEqualTo(EngineSettings.AUTO_LAYERS);
        assertThat(dev.oam.model.llama.LlamaSettings.read(
                                dev.oam.core.Environment.of(java.util.Map.of("OAM_LLAMA_GPU_LAYERS", "0")))
                        .gpuLayers())
                .as("0 named: the CPU")
                .isZero();
        assertThat(EngineSettings.defaults()
                        .withGpuLayers(EngineSettings.AUTO_LAYERS)
                        .gpuLayers())
                .isEqualTo(EngineSettings.AUTO_LAYERS);
    }

    @Test
    void seedsFoldIntoThirtyOneBits() {
        assertThat(JniEngine.seed32(7)).isEqualTo(7);
        assertThat(JniEngine.seed32(-1L)).isBetween(0, Integer.MAX_VALUE);
        assertThat(JniEngine.seed32(1L << 32)).isNotEqualTo(JniEngine.seed32(0));
    }
}
