package dev.oam.cli;

import dev.oam.testing.ProtocolClient;
import dev.oam.testing.contract.StructuredOutputContract;

/** The structured-output, transcript, compaction and trimming contract against {@code bin/oam stdio}. */
class StdioStructuredOutputIT extends StructuredOutputContract {
    @Override
    protected ProtocolClient connect(String... flags) throws Exception {
        return Transports.stdio(flags);
    }
}
