package dev.oam.cli;

import dev.oam.testing.ProtocolClient;
import dev.oam.testing.contract.DecisionContract;

/** The decision and content contract against {@code bin/oam stdio}. */
class StdioDecisionIT extends DecisionContract {
    @Override
    protected ProtocolClient connect(String... flags) throws Exception {
        return Transports.stdio(flags);
    }
}
