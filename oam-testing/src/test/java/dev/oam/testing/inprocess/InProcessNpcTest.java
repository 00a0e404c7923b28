package dev.oam.testing.inprocess;

import dev.oam.testing.InMemoryClient;
import dev.oam.testing.ProtocolClient;
import dev.oam.testing.contract.NpcContract;

/** The NPC contract against the in-process engine. */
class InProcessNpcTest extends NpcContract {
    @Override
    protected ProtocolClient connect(String... flags) {
        return InMemoryClient.connectWithFlags(flags);
    }
}
