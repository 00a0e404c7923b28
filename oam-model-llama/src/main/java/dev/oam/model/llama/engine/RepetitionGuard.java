package dev.oam.model.llama.engine;

import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.prompt.CallFormat;
import java.util.function.Consumer;

/**
 * Stops a plain-text generation that has fallen into a loop. Small models decoding greedily repeat a phrase until the
 * token budget runs out ("that is a tool_call that is a tool_call …"; Mantella reports the same of NPC dialogue), which
 * costs the player seconds and shows them nonsense. The guard watches the text as it streams; once its end is one unit
 * of {@value #MIN_UNIT} to {@value #MAX_UNIT} characters written {@value #REPEATS} times in a row, it stops the
 * generation ({@link #stopToken}) and {@link #kept} is the text with the repeats cut, ending at the last sentence end
 * before them where there is one.
 *
 * <p>Not thread-safe: the engine calls {@link #accept} on one thread.
 */
public final class RepetitionGuard implements Consumer<String> {
    static final int MIN_UNIT = 4;
    static final int MAX_UNIT = 120;
    static final int REPEATS = 3;

    private final Consumer<String> downstream;
    private final CancellationToken stop;
    private final StringBuilder text = new StringBuilder();
    private int loopStart = -1;

    /** @param stop cancelled when a loop is found; the generation must run under it */
    public RepetitionGuard(Consumer<String> downstream, CancellationToken stop) {
        this.downstream = downstream;
        this.stop = stop;
    }

    CancellationToken stopToken() {
        return stop;
    }

    @Override
    public void accept(String delta) {
        if (loopStart >= 0) {
            return;
        }
        text.append(delta);
        downstream.accept(delta);
        if (CallFormat.looksLikeCalls(text.toString())
                || CallFormat.mayBecomeCalls(text.toString().stripLeading())) {
            return; // a call, not words: its grammar closes it within the budget
        }
        int unit = repeatedUnit(text);
        if (unit > 0) {
            loopStart = text.length() - (REPEATS - 1) * unit;
            stop.cancel();
        }
    }

    /** Whether a loop stopped the generation. */
    public boolean tripped() {
        return loopStart >= 0;
    }

    /** The text up to the loop's first occurrence, cut back to its last sentence end when it has one. */
    public String kept() {
        String before = text.substring(0, Math.max(0, loopStart));
        int end = Math.max(Math.max(before.lastIndexOf(". "), before.lastIndexOf("! ")), before.lastIndexOf("? "));
        String cut = end > 0 ? before.substring(0, end + 1) : before;
        return cut.strip();
    }

    /** The length of a unit the text ends with {@value #REPEATS} times in a row, or 0. */
    public static int repeatedUnit(CharSequence text) {
        int n = text.length();
        for (int unit = MIN_UNIT; unit <= MAX_UNIT && unit * REPEATS <= n; unit++) {
            boolean repeated = true;
            for (int i = n - unit * (REPEATS - 1); i < n && repeated; i++) {
                repeated = text.charAt(i) == text.charAt(i - unit);
            }
            if (repeated && !isBlank(text, n - unit, n)) {
                return unit;
            }
        }
        return 0;
    }

    private static boolean isBlank(CharSequence text, int from, int to) {
        for (int i = from; i < to; i++) {
            if (!Character.isWhitespace(text.charAt(i))) {
                return false;
            }
        }
        return true;
    }
}
