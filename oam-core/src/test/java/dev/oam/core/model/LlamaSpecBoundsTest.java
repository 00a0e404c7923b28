package dev.oam.core.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.core.Environment;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The one set of bounds of a llama model value, and the one parser of the host's GPU layers. */
class LlamaSpecBoundsTest {
    private static final Path FILE = Path.of("/m.gguf");

    @Test
    void aSpecTakesWhatTheBackendsValueParserTakesAndNothingElse() {
        assertThat(new ModelSpec.Llama(FILE)
                        .withContextSize(ModelSpec.Llama.MIN_CONTEXT)
                        .contextSize())
                .isEqualTo(256);
        assertThat(new ModelSpec.Llama(FILE)
                        .withContextSize(ModelSpec.Llama.MAX_CONTEXT)
                        .contextSize())
                .isEqualTo(1 << 20);
        assertThat(new ModelSpec.Llama(FILE).withGpuLayers(-1).gpuLayers()).isEqualTo(-1);
        assertThat(new ModelSpec.Llama(FILE).withGpuLayers(4096).gpuLayers()).isEqualTo(4096);
        // before: any context from 1 and any layer count were taken here and refused only when the model was made
        assertThatThrownBy(() -> new ModelSpec.Llama(FILE).withContextSize(100)).hasMessageContaining("contextSize");
        assertThatThrownBy(() -> new ModelSpec.Llama(FILE).withContextSize((1 << 20) + 1))
                .hasMessageContaining("contextSize");
        assertThatThrownBy(() -> new ModelSpec.Llama(FILE).withGpuLayers(4097)).hasMessageContaining("gpuLayers");
        assertThatThrownBy(() -> new ModelSpec.Llama(FILE).withGpuLayers(-2)).hasMessageContaining("gpuLayers");
        assertThatThrownBy(() -> new ModelSpec.Llama(FILE).withThreads(257)).hasMessageContaining("threads");
    }

    @Test
    void theHostsGpuLayersAreAnIntegerFromMinusOneToTheBoundElseUnset() {
        assertThat(ModelSpec.Llama.hostGpuLayers(Environment.of(Map.of()))).isNull();
        assertThat(ModelSpec.Llama.hostGpuLayers(Environment.of(Map.of("OAM_LLAMA_GPU_LAYERS", " -1 "))))
                .isEqualTo(-1);
        assertThat(ModelSpec.Llama.hostGpuLayers(Environment.of(Map.of("OAM_LLAMA_GPU_LAYERS", "0"))))
                .isZero();
        assertThat(ModelSpec.Llama.hostGpuLayers(Environment.of(Map.of("OAM_LLAMA_GPU_LAYERS", "4097"))))
                .isNull();
        assertThat(ModelSpec.Llama.hostGpuLayers(Environment.of(Map.of("OAM_LLAMA_GPU_LAYERS", "all"))))
                .isNull();
    }
}
