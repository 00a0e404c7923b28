package dev.oam.cli;

import dev.oam.testing.ProtocolClient;
import dev.oam.testing.contract.WorldContract;

/** The world-state contract against {@code bin/oam stdio}. */
class StdioWorldIT extends WorldContract {
    @Override
    protected ProtocolClient connect(String... flags) throws Exception {
        return Transports.stdio(flags);
    }
}
