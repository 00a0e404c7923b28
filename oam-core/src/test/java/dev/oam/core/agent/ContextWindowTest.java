package dev.oam.core.agent;

import static dev.oam.core.testing.TestOptions.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.oam.core.ErrorCode;
import dev.oam.core.agent.ContextWindow.Fitted;
import dev.oam.core.agent.StepPlanner.StepOffer;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.testing.TinyContextModel;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.core.transcript.TranscriptEntry.Prompt;
import dev.oam.core.transcript.TranscriptEntry.Response;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The context window on its own: what a step's request holds, which turns it hides, and its caches. The tiny model
 * counts one token per character, so every total here is the characters of the texts involved.
 */
class ContextWindowTest {
    private static final StepOffer NO_TOOLS = new StepOffer(ToolCallingMode.DISALLOWED, List.of(), false);

    private final TinyContextModel model = TinyContextModel.withContext(100);
    private final ContextWindow window = new ContextWindow(model);

    /** Turns of one prompt and one response, each text {@code size} characters. */
    private static List<TranscriptEntry> history(int turns, int size) {
        List<TranscriptEntry> entries = new ArrayList<>();
        for (int i = 0; i < turns; i++) {
            entries.add(Prompt.of(String.valueOf((char) ('a' + i)).repeat(size), null));
            entries.add(Response.text(String.valueOf((char) ('A' + i)).repeat(size)));
        }
        return List.copyOf(entries);
    }

    private Fitted fit(List<TranscriptEntry> base, List<TranscriptEntry> turn, AgentOptions opts)
            throws AgentException {
        return window.fit("inst", "note!", base, turn, NO_TOOLS, null, opts);
    }

    @Test
    void requestHoldsEverythingAndCountsItWhenItFits() throws AgentException {
        List<TranscriptEntry> base = history(2, 5);
        List<TranscriptEntry> turn = List.of(Prompt.of("now", null));

        Fitted fitted = fit(base, turn, options().reservedResponseTokens(10).build());

        assertThat(fitted.trimmedEntries()).isZero();
        assertThat(fitted.request().instructions()).isEqualTo("inst");
        assertThat(fitted.request().contextNote()).isEqualTo("note!");
        assertThat(fitted.request().entries()).containsExactlyElementsOf(concat(base, turn));
        assertThat(fitted.request().inputTokens()).isEqualTo(4 + 5 + 4 * 5 + 3);
        assertThat(fitted.request().mode()).isEqualTo(ToolCallingMode.DISALLOWED);
    }

    @Test
    void oldestWholeTurnsAreHiddenUntilTheStepFits() throws AgentException {
        List<TranscriptEntry> base = history(4, 10); // 20 tokens a turn
        List<TranscriptEntry> turn = List.of(Prompt.of("x".repeat(10), null));

        // 9 fixed + 80 history + 10 turn = 99; the budget is 100 - 40 = 60: two turns must go
        Fitted fitted = fit(base, turn, options().reservedResponseTokens(40).build());

        assertThat(fitted.trimmedEntries()).isEqualTo(4);
        assertThat(fitted.request().entries()).containsExactlyElementsOf(concat(base.subList(4, 8), turn));
        assertThat(fitted.request().inputTokens()).isEqualTo(9 + 40 + 10);
    }

    @Test
    void theRunningTurnIsNeverHidden() {
        List<TranscriptEntry> turn = List.of(Prompt.of("x".repeat(80), null));

        AgentException error = catchThrowableOfType(
                AgentException.class,
                () -> fit(
                        history(2, 5),
                        turn,
                        options().reservedResponseTokens(20).build()));

        assertThat(error.code()).isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED);
        assertThat(error.getMessage()).contains("needs 89 tokens", "even with every earlier turn hidden");
    }

    @Test
    void withoutTrimHistoryAnOverlongStepFails() {
        AgentException error = catchThrowableOfType(
                AgentException.class,
                () -> fit(
                        history(4, 10),
                        List.of(Prompt.of("y", null)),
                        options().trimHistory(false).reservedResponseTokens(20).build()));

        assertThat(error.code()).isEqualTo(ErrorCode.CONTEXT_SIZE_EXCEEDED);
        assertThat(error.getMessage()).contains("(trimHistory is off)");
    }

    @Test
    void eachEntryIsCountedOnceAcrossStepsAndExtendedHistories() throws AgentException {
        AgentOptions opts = options().reservedResponseTokens(10).build();
        List<TranscriptEntry> base = history(1, 5);
        List<TranscriptEntry> turn = new ArrayList<>(List.of(Prompt.of("now", null)));
        fit(base, turn, opts);
        turn.add(Response.text("done"));
        List<TranscriptEntry> extended = concat(base, turn);

        Fitted next = fit(extended, List.of(Prompt.of("next", null)), opts);

        for (TranscriptEntry entry : extended) {
            assertThat(model.timesCounted(entry)).as("counts of %s", entry).isEqualTo(1);
        }
        assertThat(next.request().inputTokens()).isEqualTo(9 + 10 + 3 + 4 + 4);
    }

    @Test
    void aReplacedHistoryIsIndexedAgainEvenWhenItLooksLikeAnExtension() throws AgentException {
        AgentOptions opts = options().reservedResponseTokens(0).build();
        List<TranscriptEntry> old = history(1, 5);
        fit(old, List.of(), opts);
        // same last entry at the same place and a prompt after it: only the notice tells it from an extension
        List<TranscriptEntry> replaced =
                List.of(Prompt.of("z".repeat(30), null), old.get(1), Prompt.of("p", null), Response.text("r"));

        window.historyReplaced();
        Fitted fitted = fit(replaced, List.of(), opts);

        assertThat(fitted.request().inputTokens()).isEqualTo(9 + 30 + 5 + 1 + 1);
    }

    @Test
    void aGrowingHistoryIsNotWalkedToPruneTheTokenCache() throws AgentException {
        AgentOptions opts = options().reservedResponseTokens(0).build();
        fit(history(1, 3), List.of(), opts); // 2 counts that go stale
        List<TranscriptEntry> live = new ArrayList<>();
        for (int turn = 0; turn < 200; turn++) { // 400 entries: the old rule pruned at every multiple of 64
            live.add(Prompt.of("p" + turn, null));
            live.add(Response.text("r" + turn));
            fit(List.copyOf(live), List.of(), opts);
            int before = window.cachedCounts();

            window.committed(List.copyOf(live));

            assertThat(window.cachedCounts()).as("counts after turn %d", turn).isEqualTo(before);
        }
    }

    @Test
    void theTokenCacheIsPrunedToTheLiveHistoryOnceStaleCountsOutnumberTheLiveOnes() throws AgentException {
        AgentOptions opts = options().reservedResponseTokens(0).build();
        List<TranscriptEntry> live = history(10, 1); // 20 entries
        fit(live, List.of(), opts);
        for (int i = 0; i < 2 * live.size() + ContextWindow.PRUNE_SLACK - 20 - 2; i++) {
            fit(
                    live,
                    List.of(Response.text("s" + i)),
                    opts); // e.g. the entries of failed turns: counted, never committed
        }
        assertThat(window.cachedCounts()).isEqualTo(2 * live.size() + ContextWindow.PRUNE_SLACK); // 2: "inst", "note!"

        window.committed(live); // not more than twice the live history plus the slack: kept
        assertThat(window.cachedCounts()).isEqualTo(2 * live.size() + ContextWindow.PRUNE_SLACK);
        fit(live, List.of(Response.text("one more")), opts);
        window.committed(live); // 20 entries: the old rule (every 64 entries) did not prune here

        assertThat(window.cachedCounts()).isEqualTo(live.size());
    }

    private static List<TranscriptEntry> concat(List<TranscriptEntry> a, List<TranscriptEntry> b) {
        List<TranscriptEntry> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }
}
