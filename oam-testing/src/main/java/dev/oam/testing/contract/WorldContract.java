package dev.oam.testing.contract;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * The contract for world state (docs/GAMES.md, "Worlds"; docs/ARCHITECTURE.md, "World state"): every {@code world/*}
 * method, path forms, versions, subscriptions and their notifications, limits, ids and errors. JSON text in, parsed
 * JSON out; no sleeps. Its tests are the default methods of the parts it implements.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class WorldContract extends ContractSupport implements WorldStateContract, WorldSubscriptionContract {
    /** For the test class that runs this contract against its transport. */
    protected WorldContract() {}
}
