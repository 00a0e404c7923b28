package dev.oam.testing.inprocess;

import dev.oam.testing.InMemoryClient;
import dev.oam.testing.ProtocolClient;
import dev.oam.testing.contract.ProtocolContract;

/** The protocol contract against the in-process engine. */
class InProcessContractTest extends ProtocolContract {
    @Override
    protected ProtocolClient connect(String... flags) {
        return InMemoryClient.connectWithFlags(flags);
    }
}
