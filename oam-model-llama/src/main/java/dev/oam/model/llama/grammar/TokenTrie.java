package dev.oam.model.llama.grammar;

import java.util.Arrays;
import java.util.function.IntPredicate;

/**
 * The vocabulary's pieces as a trie laid flat in depth-first order, so a mask is one forward pass: node {@code i}'s
 * children follow it, and {@code skip[i]} is the first node after its subtree, which is where the walk jumps when the
 * grammar rejects node {@code i}'s byte. Control tokens, end-of-generation tokens and empty pieces are left out (a
 * grammar never matches them; the constraint handles end-of-generation itself).
 *
 * <p>Built once per vocabulary; immutable.
 */
public final class TokenTrie {
    /** The byte of each node. */
    final byte[] label;
    /** The depth of each node (1 for a first byte). */
    final short[] depth;
    /** The node after each node's subtree. */
    final int[] skip;
    /** The first token whose piece ends at each node, or -1. */
    final int[] token;
    /** For each token id, the next token with the same piece, or -1. */
    final int[] sameAs;

    final int maxDepth;

    /** The longest piece the trie holds; longer ones are left out (none in real vocabularies). */
    static final int MAX_PIECE = Short.MAX_VALUE;

    TokenTrie(TokenVocabulary vocabulary) {
        this(vocabulary, t -> true);
    }

    /** The trie of the tokens {@code include} accepts (of those a grammar can match at all). */
    TokenTrie(TokenVocabulary vocabulary, IntPredicate include) {
        int n = vocabulary.size();
        Integer[] order = new Integer[n];
        int count = 0;
        for (int t = 0; t < n; t++) {
            int length = vocabulary.pieceLength(t);
            if (!vocabulary.isControl(t) && length > 0 && length <= MAX_PIECE && include.test(t)) {
                order[count++] = t;
            }
        }
        Integer[] ids = Arrays.copyOf(order, count);
        Arrays.sort(ids, (a, b) -> compare(vocabulary, a, b));
        sameAs = new int[n];
        Arrays.fill(sameAs, -1);
        // count nodes: each piece adds the bytes past its common prefix with the previous one
        int nodes = 0;
        for (int i = 0; i < ids.length; i++) {
            nodes += vocabulary.pieceLength(ids[i]) - (i == 0 ? 0 : common(vocabulary, ids[i - 1], ids[i]));
        }
        label = new byte[nodes];
        depth = new short[nodes];
        skip = new int[nodes];
        token = new int[nodes];
        Arrays.fill(token, -1);
        int[] open = new int[MAX_PIECE + 1]; // the node at each depth on the current path
        int used = 0;
        int pathLength = 0;
        int deepest = 0;
        int lastToken = -1;
        for (int i = 0; i < ids.length; i++) {
            int t = ids[i];
            int length = vocabulary.pieceLength(t);
            int shared = i == 0 ? 0 : common(vocabulary, ids[i - 1], t);
            // close the nodes deeper than the shared prefix
            for (int d = pathLength; d > shared; d--) {
                skip[open[d]] = used;
            }
            if (shared == length && i > 0 && length == pathLength) {
                sameAs[lastToken] = t; // the same piece again: chain it after the previous one
                lastToken = t;
                continue;
            }
            for (int d = shared + 1; d <= length; d++) {
                label[used] = vocabulary.pieceByte(t, d - 1);
                depth[used] = (short) d;
                open[d] = used;
                used++;
            }
            token[used - 1] = t;
            lastToken = t;
            pathLength = length;
            deepest = Math.max(deepest, length);
        }
        for (int d = pathLength; d >= 1; d--) {
            skip[open[d]] = used;
        }
        maxDepth = deepest;
    }

    /** Whether {@code token} can be matched at all (not control, not empty). */
    static boolean matchable(TokenVocabulary vocabulary, int token) {
        int length = vocabulary.pieceLength(token);
        return !vocabulary.isControl(token) && length > 0 && length <= MAX_PIECE;
    }

    int size() {
        return label.length;
    }

    private static int common(TokenVocabulary v, int a, int b) {
        int n = Math.min(v.pieceLength(a), v.pieceLength(b));
        int i = 0;
        while (i < n && v.pieceByte(a, i) == v.pieceByte(b, i)) {
            i++;
        }
        return i;
    }

    private static int compare(TokenVocabulary v, int a, int b) {
        int n = Math.min(v.pieceLength(a), v.pieceLength(b));
        for (int i = 0; i < n; i++) {
            int c = Integer.compare(v.pieceByte(a, i) & 0xFF, v.pieceByte(b, i) & 0xFF);
            if (c != 0) {
                return c;
            }
        }
        int c = Integer.compare(v.pieceLength(a), v.pieceLength(b));
        return c != 0 ? c : Integer.compare(a, b);
    }
}
