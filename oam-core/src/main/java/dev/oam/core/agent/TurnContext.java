package dev.oam.core.agent;

import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.tool.ToolChannel;

/**
 * What a running turn needs from its caller.
 *
 * @param commit called right before the turn changes the conversation; throws when the turn was cancelled, and
 *     otherwise makes the turn immune to later cancellation
 */
public record TurnContext(CancellationToken token, TurnListener listener, ToolChannel tools, CommitPoint commit) {
    /** The point after which an operation's effect is final. */
    @FunctionalInterface
    public interface CommitPoint {
        CommitPoint NONE = () -> {};

        void commit() throws AgentException;
    }
}
