package dev.oam.bridge;

import dev.oam.bridge.spi.OperationQueue;
import dev.oam.core.agent.Agent;
import java.time.Instant;

/** A session: its agent, its queue of turn-affecting operations, and what {@code session/list} shows. */
final class BridgeSession {
    final String id;
    final Agent agent;
    final OperationQueue queue;
    final String modelDescription;
    final Instant createdAt = Instant.now();

    BridgeSession(String id, Agent agent, String modelDescription) {
        this.id = id;
        this.agent = agent;
        this.queue = new OperationQueue("session-" + id);
        this.modelDescription = modelDescription;
    }
}
