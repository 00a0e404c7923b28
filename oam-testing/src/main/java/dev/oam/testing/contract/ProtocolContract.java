package dev.oam.testing.contract;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * The protocol contract: JSON text in, parsed JSON out. Every transport runs it by extending this class and saying how
 * to connect ({@code bin/oam stdio} flags; the in-process engine maps them to its configuration). Its tests are the
 * default methods of the parts it implements, one topic each.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class ProtocolContract extends ContractSupport
        implements FramingContract, BridgeContract, SessionContract, TurnContract, ToolContract, ConcurrencyContract {
    /** For the test class that runs this contract against its transport. */
    protected ProtocolContract() {}
}
