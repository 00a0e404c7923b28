package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.testing.RealModels;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * GPU offload through the FFM engine on a Vulkan build of llama.cpp ({@code bin/build-llama --vulkan}), run by its own
 * surefire execution (the {@code vulkan-llama} profile: {@code oam.llama.library} names the library,
 * {@code GGML_VK_VISIBLE_DEVICES=0} lets ggml-vulkan use Mesa's software device, llvmpipe, on a machine without a GPU).
 * A model with {@code gpuLayers -1} puts every layer on the Vulkan device, and its top token after each word of a
 * teacher-forced text agrees with the same library's CPU run at 90 % of the positions or more: GPU kernels round
 * differently, so exact greedy equality is not expected. lavapipe proves the path, not the speed.
 */
@Tag("real-model")
@Timeout(value = 15, unit = TimeUnit.MINUTES)
class VulkanOffloadSuite {
    private static final String TEXT =
            "The innkeeper wiped the counter and looked up. Travellers came through the north"
                    + " gate every evening, tired and hungry, and she kept a pot of stew on the fire for them. Tonight a knight in"
                    + " dented armour asked for a room, a hot meal and news of the road to the castle.";

    @Test
    void aGpuLayersModelOffloadsEveryLayerToVulkanAndAgreesWithTheCpu() throws Exception {
        GgufFile file = GgufFile.read(RealModels.smollm2());
        Engine gpu = EngineChoice.open(
                file, new EngineSettings(1024, 1, 2, 2, -1), EngineChoice.Kind.FFM, SystemSettings.host());
        Engine cpu = EngineChoice.open(
                file, new EngineSettings(1024, 1, 2, 2, 0), EngineChoice.Kind.FFM, SystemSettings.host());
        assertThat(gpu.device())
                .as("where the gpuLayers model runs")
                .contains("Vulkan0", "llvmpipe", "(vulkan build)")
                .containsPattern("(\\d+)/\\1 layers");
        assertThat(cpu.device()).as("where the CPU model runs").startsWith("CPU");

        String[] words = TEXT.split(" ");
        List<String> differences = new ArrayList<>();
        int positions = 0;
        for (int i = 1; i < words.length; i++) {
            String prefix = String.join(" ", java.util.Arrays.copyOf(words, i));
            String onGpu = next(gpu, prefix);
            String onCpu = next(cpu, prefix);
            positions++;
            if (!onGpu.equals(onCpu)) {
                differences.add("after '" + prefix.substring(Math.max(0, prefix.length() - 30)) + "': GPU '" + onGpu
                        + "', CPU '" + onCpu + "'");
            }
        }
        double agreement = 1.0 - (double) differences.size() / positions;
        System.err.println("Vulkan (llvmpipe) vs CPU top tokens: " + (positions - differences.size()) + "/" + positions
                + " agree; " + differences);
        assertThat(agreement)
                .as("top-token agreement over %d positions: %s", positions, differences)
                .isGreaterThanOrEqualTo(0.9);
    }

    /** The greedy next token after {@code prefix}. */
    private static String next(Engine engine, String prefix) throws Exception {
        EngineResult result = engine.generate(
                new EngineRequest(prefix, null, 1, 0, 0, 1, 1), new Object(), d -> {}, CancellationToken.create());
        return result.text();
    }
}
