package dev.oam.testing.contract;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * The contract for structured output, JSON Schema conversion, transcripts and history restore, compaction and context
 * trimming (docs/PROTOCOL.md). Its tests are the default methods of the parts it implements.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class StructuredOutputContract extends ContractSupport implements SchemaContract, TranscriptContract {
    /** For the test class that runs this contract against its transport. */
    protected StructuredOutputContract() {}
}
