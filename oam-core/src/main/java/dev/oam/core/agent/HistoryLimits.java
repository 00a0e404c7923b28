package dev.oam.core.agent;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Memory caps for conversation histories (docs/RELIABILITY.md, Limits): the size one agent's history may have and the
 * size the histories of all agents attached to these limits may have together, both in
 * {@link dev.oam.core.json.JsonSize} units of the entries' transcript JSON (about its characters). A step of a turn
 * (the first one included, so also the prompt) only runs while the history plus the running turn stays under both caps;
 * otherwise the turn fails with {@code -32004 context_size_exceeded} and the history is unchanged. One step can still
 * add what it generates (bounded by the model's answer length) and the outputs of one round of tool calls.
 */
public final class HistoryLimits {
    /** Default cap for one conversation: 16 MiB of transcript JSON. */
    public static final long DEFAULT_HISTORY_BYTES = 16L << 20;
    /** Default cap for all conversations of one bridge (sessions and NPCs) together: 256 MiB. */
    public static final long DEFAULT_TOTAL_BYTES = 256L << 20;

    private final long historyBytes;
    private final long totalBytes;
    private final Set<Agent> agents = ConcurrentHashMap.newKeySet();

    public HistoryLimits(long historyBytes, long totalBytes) {
        if (historyBytes < 1 || totalBytes < 1) {
            throw new IllegalArgumentException("history size caps must be positive");
        }
        this.historyBytes = historyBytes;
        this.totalBytes = totalBytes;
    }

    public static HistoryLimits defaults() {
        return new HistoryLimits(DEFAULT_HISTORY_BYTES, DEFAULT_TOTAL_BYTES);
    }

    public long historyBytes() {
        return historyBytes;
    }

    public long totalBytes() {
        return totalBytes;
    }

    /** Counts {@code agent}'s history in the total from now on and holds its turns to these caps. */
    public void attach(Agent agent) {
        agents.add(agent);
        agent.useLimits(this);
    }

    /** Stops counting {@code agent} (it was deleted). */
    public void detach(Agent agent) {
        agents.remove(agent);
        agent.useLimits(null);
    }

    /** What the attached histories hold together now. */
    public long used() {
        long total = 0;
        for (Agent agent : agents) {
            total += agent.historySize();
        }
        return total;
    }

    /**
     * Checks that a history of {@code size} (for {@code agent}, or a new one when {@code agent} is null) fits both
     * caps; {@code -32004 context_size_exceeded} with {@code data.limit}, {@code data.size} and {@code data.scope}
     * ({@code "conversation"} or {@code "total"}) otherwise.
     */
    public void check(@org.jspecify.annotations.Nullable Agent agent, long size) throws AgentException {
        if (size > historyBytes) {
            throw exceeded(
                    "This conversation's history would hold " + size + " (JSON characters), more than the cap of "
                            + historyBytes + " per conversation; compact it (session/compact), reset it or delete it.",
                    historyBytes,
                    size,
                    "conversation");
        }
        long others = used() - (agent != null && agents.contains(agent) ? agent.historySize() : 0);
        if (others + size > totalBytes) {
            throw exceeded(
                    "All conversations together would hold " + (others + size) + " (JSON characters), more than "
                            + "their cap of " + totalBytes + "; delete, reset or compact some sessions or NPCs.",
                    totalBytes,
                    others + size,
                    "total");
        }
    }

    private static AgentException exceeded(String message, long limit, long size, String scope) {
        ObjectNode data = Json.object();
        data.put("limit", limit);
        data.put("size", size);
        data.put("scope", scope);
        return new AgentException(ErrorCode.CONTEXT_SIZE_EXCEEDED, message, data);
    }
}
