package dev.oam.testing.contract;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;

/**
 * The {@code npc/*} contract (docs/GAMES.md) on the scripted model. Its tests are the default methods of the parts it
 * implements.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class NpcContract extends ContractSupport implements NpcTalkContract, NpcStateContract {
    /** For the test class that runs this contract against its transport. */
    protected NpcContract() {}
}
