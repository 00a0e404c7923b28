package dev.oam.model.llama.grammar;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A state of a grammar's DFA between whole code points: the set of matcher stacks (each topped by a character class)
 * and whether the grammar may end here. Equal by value; {@link GbnfGrammar#intern} makes equal states one object so
 * transitions and masks are shared.
 *
 * <p>Thread-safe: the fields are final and the transition table is filled lazily with benign races (two threads
 * computing the same entry get equal states; a reader seeing {@code null} recomputes).
 */
public final class GrammarState {
    private final GbnfGrammar grammar;
    /** Stacks topped by a character class, in a canonical order. */
    final Frame[] tops;

    final boolean canEnd;
    /** Intervals that some top admits. */
    private final long[] admitted;
    /** Memoized transitions per interval; {@code null} until first computed. */
    private final GrammarState[] next;

    private final int hash;
    // Lazily set; a race computes equal values. Volatile because an int[] has no final-field guarantee: a
    // reader must not see the reference before the contents.
    private volatile @Nullable GrammarState maskKey;
    private volatile int @Nullable [] free; // NO_FREE when none
    private static final int[] NO_FREE = new int[0];

    GrammarState(GbnfGrammar grammar, Frame[] tops, boolean canEnd) {
        this.grammar = grammar;
        Frame[] sorted = tops.clone();
        Arrays.sort(
                sorted,
                (a, b) -> a.hashCode() != b.hashCode()
                        ? Integer.compare(a.hashCode(), b.hashCode())
                        : Integer.compare(a.pc, b.pc));
        this.tops = sorted;
        this.canEnd = canEnd;
        int h = canEnd ? 1 : 0;
        for (Frame f : sorted) {
            h += f.hashCode(); // order-free, as equality is set equality
        }
        this.hash = h;
        this.admitted = new long[(grammar.intervalCount + 63) >>> 6];
        for (Frame f : sorted) {
            long[] set = grammar.classIntervals[grammar.code[f.pc]];
            for (int i = 0; i < admitted.length; i++) {
                admitted[i] |= set[i];
            }
        }
        this.next = new GrammarState[grammar.intervalCount];
    }

    /** The state this one's mask is cached under ({@link GbnfGrammar#maskKey}). */
    GrammarState maskKey() {
        GrammarState key = maskKey;
        if (key == null) {
            key = grammar.maskKey(this);
            maskKey = key;
        }
        return key;
    }

    /** {@link GbnfGrammar#freeRanges} for this state, computed once; null when there are none. */
    int @Nullable [] freeRanges(int longest) {
        int[] known = free;
        if (known == null) {
            known = grammar.freeRanges(this, longest);
            if (known == null) {
                known = NO_FREE;
            }
            free = known;
        }
        return known == NO_FREE ? null : known;
    }

    /** A copy of the intervals some top admits. */
    long[] admittedIntervals() {
        return admitted.clone();
    }

    /** Whether every interval in {@code intervals} is admitted. */
    boolean admitsAll(long[] intervals) {
        for (int i = 0; i < intervals.length; i++) {
            if ((intervals[i] & ~admitted[i]) != 0) {
                return false;
            }
        }
        return true;
    }

    /** No stack left and not at an end: nothing matched or can match. */
    boolean isDead() {
        return tops.length == 0 && !canEnd;
    }

    /** Whether some code point in {@code [lo, hi]} can come next. */
    boolean admitsAny(int lo, int hi) {
        int from = grammar.interval(lo);
        int to = grammar.interval(hi);
        for (int iv = from; iv <= to; iv++) {
            long word = admitted[iv >>> 6] >>> (iv & 63);
            if (word != 0) {
                int skip = Long.numberOfTrailingZeros(word);
                return iv + skip <= to;
            }
            iv |= 63; // nothing more in this word
        }
        return false;
    }

    /**
     * The one code point that must come next, or -1 when there is a choice: several intervals, an interval of more than
     * one code point, or the grammar may end here.
     */
    int forcedCodePoint() {
        if (canEnd) {
            return -1;
        }
        int found = -1;
        for (int w = 0; w < admitted.length; w++) {
            long bits = admitted[w];
            if (bits == 0) {
                continue;
            }
            if (found >= 0 || Long.bitCount(bits) > 1) {
                return -1;
            }
            found = (w << 6) + Long.numberOfTrailingZeros(bits);
        }
        if (found < 0 || grammar.intervalEnd(found) != grammar.bounds[found]) {
            return -1;
        }
        return grammar.bounds[found];
    }

    /** The state after a code point of interval {@code iv} (the grammar's dead state when none can follow). */
    GrammarState next(int iv) {
        GrammarState known = next[iv];
        if (known != null) {
            return known;
        }
        GrammarState computed = grammar.intern(advance(iv));
        next[iv] = computed;
        return computed;
    }

    private GrammarState advance(int iv) {
        if ((admitted[iv >>> 6] & (1L << iv)) == 0) {
            return grammar.dead;
        }
        Set<Frame> out = new LinkedHashSet<>();
        boolean[] end = new boolean[1];
        for (Frame f : tops) {
            if (grammar.admits(grammar.code[f.pc], iv)) {
                grammar.expand(f.pc + 1, f.parent, out, end);
            }
        }
        return new GrammarState(grammar, out.toArray(Frame[]::new), end[0]);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof GrammarState s)
                || s.hash != hash
                || s.canEnd != canEnd
                || s.tops.length != tops.length
                || s.grammar != grammar) {
            return false;
        }
        outer:
        for (Frame f : tops) {
            for (Frame g : s.tops) {
                if (f.equals(g)) {
                    continue outer;
                }
            }
            return false;
        }
        return true;
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        return "GrammarState" + Arrays.toString(tops) + (canEnd ? " (can end)" : "");
    }
}
