package dev.oam.cli;

import dev.oam.testing.ProtocolClient;
import dev.oam.testing.StdioClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** How the contract suites connect to a real {@code bin/oam stdio} (in-process: oam-testing's own tests). */
final class Transports {
    private Transports() {}

    static Path launcher() {
        Path root =
                Path.of(System.getProperty("oam.root", "..")).toAbsolutePath().normalize();
        Path oam = root.resolve("bin/oam");
        if (!Files.isExecutable(oam)) {
            throw new IllegalStateException("bin/oam not found under " + root);
        }
        return oam;
    }

    static ProtocolClient stdio(String... flags) throws Exception {
        List<String> command = new ArrayList<>(List.of(launcher().toString(), "stdio"));
        command.addAll(List.of(flags));
        return StdioClient.start(command);
    }
}
