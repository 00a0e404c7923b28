package dev.oam.testing.inprocess;

import dev.oam.testing.InMemoryClient;
import dev.oam.testing.ProtocolClient;
import dev.oam.testing.contract.StructuredOutputContract;

/** The structured-output, transcript, compaction and trimming contract against the in-process engine. */
class InProcessStructuredOutputTest extends StructuredOutputContract {
    @Override
    protected ProtocolClient connect(String... flags) {
        return InMemoryClient.connectWithFlags(flags);
    }
}
