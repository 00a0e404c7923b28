package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.testing.ModelHostContract;
import dev.oam.testing.ProtocolClient;
import dev.oam.testing.StdioClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The model backends and the system model through a real {@code bin/oam stdio} whose environment holds the variables.
 */
class StdioModelHostIT extends ModelHostContract {
    private List<String> command(Map<String, String> variables) {
        List<String> command = new ArrayList<>(List.of(
                "env",
                "-u",
                "OAM_MODEL",
                "-u",
                "OAM_MODEL_NAME",
                "-u",
                "OAM_API_KEY",
                "OAM_NATIVE_DIR=" + dir.resolve("native"),
                "OAM_LLAMA_THREADS=1",
                "OAM_LLAMA_THREADS_BATCH=1",
                "OAM_LLAMA_CONTEXT=2048"));
        variables.forEach((name, value) -> command.add(name + "=" + value));
        command.addAll(List.of(Transports.launcher().toString(), "stdio"));
        return command;
    }

    @Override
    protected ProtocolClient connect(Map<String, String> variables) throws Exception {
        return StdioClient.start(command(variables));
    }

    /** {@code oam stdio} exits 2 with the reason on stderr. */
    @Override
    protected String refusedSetup(Map<String, String> variables) throws Exception {
        StdioClient client = StdioClient.start(command(variables));
        try {
            client.endInput();
            assertThat(client.awaitStopped(Duration.ofSeconds(60))).isTrue();
            assertThat(client.exitCode()).as(client.stderr()).isEqualTo(2);
            assertThat(client.garbage()).isEmpty();
            return client.stderr();
        } finally {
            client.close();
        }
    }
}
