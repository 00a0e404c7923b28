package dev.oam.cli;

import dev.oam.testing.ProtocolClient;
import dev.oam.testing.ProtocolContract;
import dev.oam.testing.StdioClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The protocol contract against a real {@code bin/oam stdio} child process (run by failsafe after
 * the jar is packaged, so the launcher finds it built).
 */
class StdioContractIT extends ProtocolContract {
    static Path launcher() {
        Path root = Path.of(System.getProperty("oam.root", "..")).toAbsolutePath().normalize();
        Path oam = root.resolve("bin/oam");
        if (!Files.isExecutable(oam)) {
            throw new IllegalStateException("bin/oam not found under " + root);
        }
        return oam;
    }

    @Override
    protected ProtocolClient connect(String... flags) throws Exception {
        List<String> command = new ArrayList<>(List.of(launcher().toString(), "stdio"));
        command.addAll(List.of(flags));
        return StdioClient.start(command);
    }
}
