package dev.oam.cli;

import dev.oam.testing.ProtocolClient;
import dev.oam.testing.contract.NpcContract;

/** The NPC contract against {@code bin/oam stdio}. */
class StdioNpcIT extends NpcContract {
    @Override
    protected ProtocolClient connect(String... flags) throws Exception {
        return Transports.stdio(flags);
    }
}
