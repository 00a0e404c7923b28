package dev.oam.cli;

import dev.oam.testing.ProtocolClient;
import dev.oam.testing.WorldContract;

/** The world-state contract against the in-process engine. */
class InProcessWorldTest extends WorldContract {
    @Override
    protected ProtocolClient connect(String... flags) {
        return Transports.inProcess(flags);
    }
}
