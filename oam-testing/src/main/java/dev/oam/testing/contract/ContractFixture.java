package dev.oam.testing.contract;

import dev.oam.testing.Conversation;
import dev.oam.testing.ProtocolClient;

/**
 * What every part of a contract needs from the test class that runs it: a fresh bridge per test.
 * {@code ContractSupport} implements it over the transport's {@code connect}.
 */
public interface ContractFixture {
    /** Connects a client to a fresh bridge started with these {@code oam stdio} flags. */
    ProtocolClient start(String... flags) throws Exception;

    /** A conversation with a fresh bridge started with these {@code oam stdio} flags. */
    default Conversation open(String... flags) throws Exception {
        return new Conversation(start(flags));
    }
}
