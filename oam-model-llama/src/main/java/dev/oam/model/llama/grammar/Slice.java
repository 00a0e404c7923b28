package dev.oam.model.llama.grammar;

import java.util.Arrays;

/**
 * The vocabulary split for one set of "free" code points (the idea of the llguidance library's slicer): the tokens
 * whose piece is whole UTF-8 made only of those code points and at most {@link #MAX_PURE} bytes long ({@link #pure}),
 * and a trie of all the others ({@link #remainder}). Where a grammar state provably accepts every string of free code
 * points up to {@link #MAX_PURE} characters (a JSON string body far from its length bound, free text), its mask is
 * {@code pure} plus a walk of the much smaller remainder trie, instead of a walk of the whole vocabulary.
 *
 * <p>Immutable; built once per distinct set and shared by every grammar (keyed by code points, not by a grammar's
 * intervals).
 */
public final class Slice {
    /**
     * The longest pure piece in bytes. Longer pieces (runs of spaces or dashes, long words: a few percent of a real
     * vocabulary) go to the remainder, so a state needs to accept only this many free characters, not the longest
     * piece's worth, to use the slice: a 40-character JSON string gets it for its first 24.
     */
    static final int MAX_PURE = 16;

    final long[] pure;
    final TokenTrie remainder;
    final int pureCount;

    /** @param ranges sorted, disjoint, inclusive code point ranges */
    Slice(TokenVocabulary vocabulary, int[] ranges) {
        int n = vocabulary.size();
        pure = new long[(n + 63) >>> 6];
        int count = 0;
        for (int t = 0; t < n; t++) {
            if (TokenTrie.matchable(vocabulary, t)
                    && vocabulary.pieceLength(t) <= MAX_PURE
                    && isPure(vocabulary, t, ranges)) {
                pure[t >>> 6] |= 1L << t;
                count++;
            }
        }
        pureCount = count;
        remainder = new TokenTrie(vocabulary, t -> (pure[t >>> 6] & (1L << t)) == 0);
    }

    /** Whether {@code token}'s piece decodes to whole code points, each inside {@code ranges}. */
    static boolean isPure(TokenVocabulary vocabulary, int token, int[] ranges) {
        int length = vocabulary.pieceLength(token);
        int i = 0;
        while (i < length) {
            int b = vocabulary.pieceByte(token, i) & 0xFF;
            int cp;
            int extra;
            int min;
            if (b < 0x80) {
                cp = b;
                extra = 0;
                min = 0;
            } else if (b >= 0xC2 && b <= 0xDF) {
                cp = b & 0x1F;
                extra = 1;
                min = 0x80;
            } else if (b >= 0xE0 && b <= 0xEF) {
                cp = b & 0x0F;
                extra = 2;
                min = 0x800;
            } else if (b >= 0xF0 && b <= 0xF4) {
                cp = b & 0x07;
                extra = 3;
                min = 0x10000;
            } else {
                return false;
            }
            if (i + extra > length - 1) {
                return false; // ends mid-character
            }
            for (int k = 1; k <= extra; k++) {
                int c = vocabulary.pieceByte(token, i + k) & 0xFF;
                if ((c & 0xC0) != 0x80) {
                    return false;
                }
                cp = cp << 6 | (c & 0x3F);
            }
            if (cp < min || cp > Character.MAX_CODE_POINT || !inRanges(ranges, cp)) {
                return false;
            }
            i += 1 + extra;
        }
        return true;
    }

    private static boolean inRanges(int[] ranges, int cp) {
        int lo = 0;
        int hi = ranges.length / 2 - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            if (cp < ranges[2 * mid]) {
                hi = mid - 1;
            } else if (cp > ranges[2 * mid + 1]) {
                lo = mid + 1;
            } else {
                return true;
            }
        }
        return false;
    }

    long bytes() {
        return 8L * pure.length + 11L * remainder.size();
    }

    @Override
    public String toString() {
        return "Slice[" + pureCount + " pure tokens, remainder trie of " + remainder.size() + " nodes, "
                + Arrays.hashCode(pure) + "]";
    }
}
