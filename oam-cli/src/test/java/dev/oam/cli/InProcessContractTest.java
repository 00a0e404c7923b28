package dev.oam.cli;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.ProtocolClient;
import dev.oam.testing.ProtocolContract;
import java.time.Duration;

/** The protocol contract against the in-process engine; flags map to the configuration as in {@code oam stdio}. */
class InProcessContractTest extends ProtocolContract {
    @Override
    protected ProtocolClient connect(String... flags) {
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
}
