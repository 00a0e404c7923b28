/**
 * The agent loop. {@link dev.oam.core.agent.Agent} holds a conversation and runs its turns
 * ({@link dev.oam.core.agent.TurnRequest} in, {@link dev.oam.core.agent.TurnResult} out,
 * {@link dev.oam.core.agent.TurnEvent}s to a {@link dev.oam.core.agent.TurnListener} on the way, a
 * {@link dev.oam.core.model.CancellationToken} and a commit point in its {@link dev.oam.core.agent.TurnContext});
 * {@link dev.oam.core.agent.Compactor} is the compaction any holder of a history can use, with
 * {@link dev.oam.core.agent.Compactor.Format} as its extension point. The loop's collaborators (step planner, context
 * window, retry policy, stream accumulator, tool round) are package-private. Types are non-null unless marked
 * {@code @Nullable}.
 */
@NullMarked
package dev.oam.core.agent;

import org.jspecify.annotations.NullMarked;
