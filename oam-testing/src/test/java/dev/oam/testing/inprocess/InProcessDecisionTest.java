package dev.oam.testing.inprocess;

import dev.oam.testing.InMemoryClient;
import dev.oam.testing.ProtocolClient;
import dev.oam.testing.contract.DecisionContract;

/** The decision and content contract against the in-process engine. */
class InProcessDecisionTest extends DecisionContract {
    @Override
    protected ProtocolClient connect(String... flags) {
        return InMemoryClient.connectWithFlags(flags);
    }
}
