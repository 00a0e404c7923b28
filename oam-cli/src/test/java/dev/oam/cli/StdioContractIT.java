package dev.oam.cli;

import dev.oam.testing.ProtocolClient;
import dev.oam.testing.contract.ProtocolContract;

/**
 * The protocol contract against a real {@code bin/oam stdio} child process (run by failsafe after the jar is packaged,
 * so the launcher finds it built).
 */
class StdioContractIT extends ProtocolContract {
    @Override
    protected ProtocolClient connect(String... flags) throws Exception {
        return Transports.stdio(flags);
    }
}
