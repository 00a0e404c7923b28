package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.testing.ProtocolClient;
import dev.oam.testing.RealModel;
import dev.oam.testing.RealModelContract;
import dev.oam.testing.StdioClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real-model suite through a real {@code bin/oam stdio --model FILE} child; also what {@code --model} does with a
 * file it cannot use. Stdio is the transport that runs the whole suite on every real model ({@link StdioGemmaIT},
 * {@link StdioSmolLM2IT}); the C ABI runs it on one (NativeRealModelIT), to keep bin/test's time on 2 cores.
 */
@Tag("real-model")
abstract class StdioRealModelSuite extends RealModelContract {
    private StdioClient stdio;

    StdioRealModelSuite(RealModel model) {
        super(model);
    }

    private static List<String> command(Path model) {
        return List.of(
                "env",
                "OAM_LLAMA_THREADS=1",
                "OAM_LLAMA_THREADS_BATCH=2",
                "OAM_LLAMA_CONTEXT=2048",
                Transports.launcher().toString(),
                "stdio",
                "--model",
                model.toString());
    }

    @Override
    protected ProtocolClient connect(Path model) throws Exception {
        stdio = StdioClient.start(command(model));
        return stdio;
    }

    @Override
    protected String stderr() {
        return stdio == null ? "" : stdio.stderr();
    }

    @Test
    void aModelFileTheBridgeCannotUseStopsItAtStartWithTheCause(@TempDir Path dir) throws Exception {
        Object[][] cases = {
            {truncatedCopy(model.path(), dir.resolve("cut.gguf"), 32L << 20), "truncated"},
            {unknownTurnMarkers(dir.resolve("plain.gguf")), "no chat template"},
        };
        for (Object[] bad : cases) {
            StdioClient client = StdioClient.start(command((Path) bad[0]));
            try {
                assertThat(client.awaitStopped(Duration.ofMinutes(5))).isTrue();
                assertThat(client.exitCode()).isEqualTo(2);
                assertThat(client.garbage()).isEmpty();
                assertThat(client.stderr())
                        .contains("cannot use the model")
                        .contains(bad[0].toString())
                        .contains((String) bad[1]);
            } finally {
                client.close();
            }
        }
    }
}
