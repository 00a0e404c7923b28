package dev.oam.cli;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.ProtocolClient;
import dev.oam.testing.StdioClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** How the contract suites connect: in-process (flags mapped to the configuration) or a real {@code bin/oam stdio}. */
final class Transports {
    private Transports() {}

    static ProtocolClient inProcess(String... flags) {
        BridgeConfiguration.Builder builder = BridgeConfiguration.builder();
        for (int i = 0; i < flags.length; i++) {
            switch (flags[i]) {
                case "--max-sessions" -> builder.maxSessions(Integer.parseInt(flags[++i]));
                case "--tool-timeout" -> builder.defaultToolTimeout(Duration.ofMillis((long) (Double.parseDouble(flags[++i]) * 1000)));
                case "--no-scripted-models" -> builder.allowsScriptedModels(false);
                case "--log-level" -> i++;
                default -> throw new IllegalArgumentException("unknown flag " + flags[i]);
            }
        }
        return InMemoryClient.connect(builder);
    }

    static Path launcher() {
        Path root = Path.of(System.getProperty("oam.root", "..")).toAbsolutePath().normalize();
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
