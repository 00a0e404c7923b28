package dev.oam.core.agent;

import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Compaction: one model call that summarises conversation entries, so that older turns can leave a history while what
 * they established stays (in a session's context note, in an NPC's memory summary). Sessions compact through
 * {@link Agent#compact}; any other holder of a history calls {@link #split} and {@link #summarize} with its own
 * {@link Format}, the extension point that decides how the entries are written for the model:
 *
 * <pre>{@code
 * Compactor.Split split = Compactor.split(agent.history(), keepRecentTurns);
 * if (split == null) return;                                   // nothing older than the turns kept
 * String summary = new Compactor(model, agentOptions)
 *         .summarize(split.older(), memory.summary(), format, token);
 * commitPoint.commit();                                        // the caller's point of no return
 * agent.replaceHistory(split.kept());                          // and store the summary where it belongs
 * }</pre>
 *
 * <p>The call is one model step without tools or schema, asked again on retryable failures within the options'
 * {@code maxAttempts} (as a turn's step is), with the options' sampling and token limit. It is not fitted into the
 * context first, so an overlong prompt fails in the model rather than with {@code context_size_exceeded}, and the
 * request's input tokens are left to the model's estimate. A model that calls a tool fails it with
 * {@code generation_failed}. Nothing is changed by this class: storing the summary and dropping the older turns is the
 * caller's, after its commit point.
 *
 * <p>Thread-safe: a compactor holds only its model and options.
 */
public final class Compactor {
    /** Instructions for the summary when the caller gives none. */
    public static final String DEFAULT_INSTRUCTIONS = "Summarize the conversation you are given in a few short "
            + "sentences: who said what, facts learned, promises made and anything still unresolved. Write "
            + "only the summary.";

    /**
     * How a compaction is put to the model (SPI): the summariser's instructions and the one prompt that carries the
     * entries. Implementations must be pure functions of their arguments.
     */
    public interface Format {
        /** The instructions of the summary call. */
        String instructions();

        /**
         * The prompt of the summary call.
         *
         * @param entries the entries to summarise, oldest first (whole turns, each starting at its prompt, except for
         *     entries before a history's first prompt)
         * @param summarySoFar the summary the result will replace, for a format that merges into it; {@code null} when
         *     there is none or the caller appends instead
         */
        String prompt(List<TranscriptEntry> entries, @Nullable String summarySoFar);
    }

    /**
     * The format of sessions ({@code session/compact}): one line per entry ({@code User: …}, {@code Assistant: …},
     * {@code Assistant called name{…}}, {@code Tool name returned: …}); the summary so far is not shown, since the
     * session appends the new summary to its context note.
     *
     * @param instructions the summariser's instructions; {@code null}: {@link #DEFAULT_INSTRUCTIONS}
     */
    public static Format transcript(@Nullable String instructions) {
        String chosen = instructions != null ? instructions : DEFAULT_INSTRUCTIONS;
        return new Format() {
            @Override
            public String instructions() {
                return chosen;
            }

            @Override
            public String prompt(List<TranscriptEntry> entries, @Nullable String summarySoFar) {
                StringBuilder material = new StringBuilder();
                for (TranscriptEntry entry : entries) {
                    material.append(
                                    switch (entry) {
                                        case TranscriptEntry.Prompt p -> "User: " + p.text();
                                        case TranscriptEntry.ToolCalls c ->
                                            "Assistant called "
                                                    + String.join(
                                                            ", ",
                                                            c.calls().stream()
                                                                    .map(call ->
                                                                            call.name() + Json.write(call.arguments()))
                                                                    .toList());
                                        case TranscriptEntry.ToolOutput o ->
                                            "Tool " + o.toolName() + " returned: " + o.text();
                                        case TranscriptEntry.Response r -> "Assistant: " + r.text();
                                    })
                            .append('\n');
                }
                return material.toString().strip();
            }
        };
    }

    /**
     * A history cut for compaction.
     *
     * @param older the entries of the turns to summarise, oldest first
     * @param kept the entries of the most recent turns, which stay verbatim
     */
    public record Split(List<TranscriptEntry> older, List<TranscriptEntry> kept) {
        public Split {
            older = List.copyOf(older);
            kept = List.copyOf(kept);
        }
    }

    private final LanguageModel model;
    private final AgentOptions options;

    /** A compactor asking {@code model} with {@code options}' sampling, token limit and {@code maxAttempts}. */
    public Compactor(LanguageModel model, AgentOptions options) {
        this.model = model;
        this.options = options;
    }

    /**
     * Cuts {@code history} before its {@code keepRecentTurns} most recent turns; {@code null} when it has no more turns
     * than that (nothing to compact).
     *
     * @throws IllegalArgumentException if {@code keepRecentTurns} is negative
     */
    public static @Nullable Split split(List<TranscriptEntry> history, int keepRecentTurns) {
        if (keepRecentTurns < 0) {
            throw new IllegalArgumentException("keepRecentTurns must not be negative");
        }
        List<List<TranscriptEntry>> turns = splitTurns(history);
        if (turns.size() <= keepRecentTurns) {
            return null;
        }
        int cut = turns.size() - keepRecentTurns;
        List<TranscriptEntry> older = new ArrayList<>();
        turns.subList(0, cut).forEach(older::addAll);
        List<TranscriptEntry> kept = new ArrayList<>();
        turns.subList(cut, turns.size()).forEach(kept::addAll);
        return new Split(older, kept);
    }

    /**
     * Splits entries into turns, each starting at a prompt (entries before the first prompt form a turn of their own).
     */
    public static List<List<TranscriptEntry>> splitTurns(List<TranscriptEntry> entries) {
        List<List<TranscriptEntry>> turns = new ArrayList<>();
        List<TranscriptEntry> current = null;
        for (TranscriptEntry entry : entries) {
            if (current == null || entry instanceof TranscriptEntry.Prompt) {
                current = new ArrayList<>();
                turns.add(current);
            }
            current.add(entry);
        }
        return turns;
    }

    /**
     * Summarises {@code entries} as {@code format} writes them; returns the summary, stripped.
     *
     * @param summarySoFar passed to {@link Format#prompt}
     * @throws AgentException {@code cancelled} when {@code token} is cancelled, {@code generation_failed} when the
     *     model calls a tool, or the model's failure
     */
    public String summarize(
            List<TranscriptEntry> entries, @Nullable String summarySoFar, Format format, CancellationToken token)
            throws AgentException {
        ModelRequest request = new ModelRequest(
                format.instructions(),
                null,
                List.of(TranscriptEntry.Prompt.of(format.prompt(entries, summarySoFar), null)),
                List.of(),
                ToolCallingMode.DISALLOWED,
                false,
                null,
                options.generationOptions());
        ModelResponse response = new RetryPolicy(model)
                .generate(request, token, TurnListener.NONE, options.maxAttempts(), false, null, null);
        if (!(response instanceof ModelResponse.Answer answer)) {
            throw new AgentException(
                    ErrorCode.GENERATION_FAILED, "The model called a tool instead of writing the summary.");
        }
        return answer.text().strip();
    }
}
