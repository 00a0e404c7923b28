package dev.oam.testing.inprocess;

import dev.oam.testing.InMemoryClient;
import dev.oam.testing.ProtocolClient;
import dev.oam.testing.contract.WorldContract;

/** The world-state contract against the in-process engine. */
class InProcessWorldTest extends WorldContract {
    @Override
    protected ProtocolClient connect(String... flags) {
        return InMemoryClient.connectWithFlags(flags);
    }
}
