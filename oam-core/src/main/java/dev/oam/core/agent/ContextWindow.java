package dev.oam.core.agent;

import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.core.transcript.TranscriptEntry.Prompt;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Fits each step of an agent's turns into the model's context. A step's request holds the instructions, the context
 * note, the step's tools, the schema, the committed history and the running turn; with {@code trimHistory} the oldest
 * complete turns of the history are hidden until that and the tokens reserved for the answer fit the model's context.
 * The running turn is never hidden; when even an empty history does not fit, the step fails with
 * {@code context_size_exceeded}.
 *
 * <p>Two caches keep a step from walking the whole history: token counts by identity (entries, tools and schemas are
 * immutable and reused from step to step, so each is counted once; pruned to the live history once the counts of
 * entries no longer in it outnumber the live ones, so a growing history is never walked for it), and a per-turn index
 * of the committed history (where each turn starts and what it costs), extended when a turn is committed and rebuilt
 * when the history is replaced.
 *
 * <p>Concurrency: one agent's steps run one at a time; the token cache is synchronized and the index is an immutable
 * snapshot in a volatile field, so a stale read only costs a rebuild.
 */
final class ContextWindow {
    /** A step's request and how many leading history entries it hides. */
    record Fitted(ModelRequest request, int trimmedEntries) {}

    /**
     * How many counts beyond twice the live history the token cache may hold before a commit prunes it. Pruning walks
     * the whole history, so it waits until at least as many counts are stale (entries of failed turns or of a replaced
     * history, old instructions, tools and schemas) as are live: its cost is then paid for by the stale counts, and a
     * history that only grows is never walked.
     */
    static final int PRUNE_SLACK = 64;

    private final LanguageModel model;
    private final TokenCache tokens;
    private volatile @Nullable HistoryIndex historyIndex;

    ContextWindow(LanguageModel model) {
        this.model = model;
        this.tokens = new TokenCache(model);
    }

    /**
     * The request of one step over {@code base} (the committed history) and {@code turn} (the running turn so far).
     * {@code instructions} and {@code contextNote} are the agent's at this step.
     */
    Fitted fit(
            @Nullable String instructions,
            @Nullable String contextNote,
            List<TranscriptEntry> base,
            List<TranscriptEntry> turn,
            StepPlanner.StepOffer offer,
            @Nullable GenerationSchema schema,
            AgentOptions opts)
            throws AgentException {
        HistoryIndex index = index(base);
        int fixed = tokens.text(instructions) + tokens.text(contextNote);
        for (ToolDefinition tool : offer.tools()) {
            fixed += tokens.tool(tool);
        }
        if (schema != null) {
            fixed += tokens.schema(schema);
        }
        int total = fixed + index.total();
        for (TranscriptEntry entry : turn) {
            total += tokens.entry(entry);
        }
        int budget = model.contextSize() - opts.reservedResponseTokens();
        int hidden = 0;
        int turns = index.turnStarts().length;
        while (total > budget) {
            if (!opts.trimHistory() || hidden == turns) {
                throw new AgentException(
                        ErrorCode.CONTEXT_SIZE_EXCEEDED,
                        "The conversation needs " + total
                                + " tokens plus " + opts.reservedResponseTokens()
                                + " reserved for the answer, but the context holds "
                                + model.contextSize()
                                + (opts.trimHistory()
                                        ? " even with every earlier turn hidden"
                                        : " (trimHistory is off)")
                                + ". Shorten the prompt or instructions, use session/compact, or start a new session.");
            }
            total -= index.turnTokens()[hidden];
            hidden++;
        }
        int firstVisible = hidden == turns ? base.size() : index.turnStarts()[hidden];
        List<TranscriptEntry> visible = new ArrayList<>(base.size() - firstVisible + turn.size());
        visible.addAll(base.subList(firstVisible, base.size()));
        visible.addAll(turn);
        ModelRequest request = new ModelRequest(
                instructions,
                contextNote,
                visible,
                offer.tools(),
                offer.mode(),
                offer.offerRespondDirectly(),
                schema,
                opts.generationOptions(),
                total,
                1,
                offer.listed());
        return new Fitted(request, firstVisible);
    }

    /**
     * The history was replaced, not extended (restored, reset, compacted): the index is built again on the next step.
     */
    void historyReplaced() {
        historyIndex = null;
    }

    /**
     * A turn was committed, giving {@code history}: the token cache is pruned to it when the stale counts outnumber the
     * live ones (see {@link #PRUNE_SLACK}).
     */
    void committed(List<TranscriptEntry> history) {
        tokens.retainOnlyIfMostlyStale(history);
    }

    /** How many token counts the cache holds (for tests). */
    int cachedCounts() {
        return tokens.size();
    }

    /**
     * Where each turn of a history starts and how many tokens it takes (entries before the first prompt form a turn of
     * their own), with the history it describes.
     */
    private record HistoryIndex(List<TranscriptEntry> history, int[] turnStarts, int[] turnTokens, int total) {}

    private HistoryIndex index(List<TranscriptEntry> entries) {
        HistoryIndex current = historyIndex;
        if (current != null && current.history() == entries) {
            return current;
        }
        HistoryIndex built;
        if (current != null
                && entries.size() > current.history().size()
                && entries.get(current.history().size()) instanceof Prompt
                && (current.history().isEmpty()
                        || entries.get(current.history().size() - 1)
                                == current.history().get(current.history().size() - 1))) {
            built = extend(current, entries);
        } else {
            built = extend(new HistoryIndex(List.of(), new int[0], new int[0], 0), entries);
        }
        historyIndex = built;
        return built;
    }

    private HistoryIndex extend(HistoryIndex from, List<TranscriptEntry> entries) {
        int[] starts = from.turnStarts();
        int[] counts = from.turnTokens();
        int total = from.total();
        List<Integer> newStarts = new ArrayList<>();
        List<Integer> newCounts = new ArrayList<>();
        int current = -1;
        for (int i = from.history().size(); i < entries.size(); i++) {
            TranscriptEntry entry = entries.get(i);
            if (entry instanceof Prompt || (starts.length == 0 && newStarts.isEmpty())) {
                newStarts.add(i);
                newCounts.add(0);
                current = newCounts.size() - 1;
            }
            int count = tokens.entry(entry);
            if (current >= 0) {
                newCounts.set(current, newCounts.get(current) + count);
            } else {
                counts = counts.clone();
                counts[counts.length - 1] += count;
            }
            total += count;
        }
        int[] allStarts = Arrays.copyOf(starts, starts.length + newStarts.size());
        int[] allCounts = Arrays.copyOf(counts, counts.length + newCounts.size());
        for (int k = 0; k < newStarts.size(); k++) {
            allStarts[starts.length + k] = newStarts.get(k);
            allCounts[counts.length + k] = newCounts.get(k);
        }
        return new HistoryIndex(entries, allStarts, allCounts, total);
    }

    /** Token counts by identity. Thread-safe. */
    private static final class TokenCache {
        private final LanguageModel model;
        private final Map<Object, Integer> counts = new IdentityHashMap<>(); // guarded by this

        TokenCache(LanguageModel model) {
            this.model = model;
        }

        synchronized int entry(TranscriptEntry entry) {
            return counts.computeIfAbsent(entry, e -> model.countTokens((TranscriptEntry) e));
        }

        synchronized int tool(ToolDefinition tool) {
            return counts.computeIfAbsent(
                    tool,
                    t -> model.countTokens(tool.name() + " " + (tool.description() == null ? "" : tool.description())
                            + " " + Json.write(tool.parameters())));
        }

        synchronized int schema(GenerationSchema schema) {
            return counts.computeIfAbsent(schema, s -> model.countTokens(Json.write(schema.json())));
        }

        synchronized int text(@Nullable String text) {
            if (text == null || text.isEmpty()) {
                return 0;
            }
            return counts.computeIfAbsent(text, t -> model.countTokens(text));
        }

        synchronized void retainOnlyIfMostlyStale(List<TranscriptEntry> live) {
            if (counts.size() <= 2L * live.size() + PRUNE_SLACK) {
                return;
            }
            Map<Object, Integer> kept = new IdentityHashMap<>();
            for (TranscriptEntry entry : live) {
                Integer count = counts.get(entry);
                if (count != null) {
                    kept.put(entry, count);
                }
            }
            counts.clear();
            counts.putAll(kept);
        }

        synchronized int size() {
            return counts.size();
        }
    }
}
