package dev.oam.model.llama.grammar;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * One generation's position in a compiled grammar: a {@link GrammarState} plus the leading bytes of a character a token
 * ended in the middle of ({@code pending}). Byte steps go through the state's memoized transitions, so {@link #allows}
 * costs a few array reads per byte of the piece.
 *
 * <p>{@code pending} packs an unfinished UTF-8 sequence: 0 when none, else {@code value << 4 | (length - 1) << 2 |
 * remaining} (length 2 to 4 bytes, 1 to 3 remaining). While it is set, the state's stacks are unchanged; the character
 * is checked against them when it completes, and at each byte before that some character with those leading bytes must
 * still be admitted. When the lead byte alone decides the character's interval (the usual case: a JSON string body
 * admits all of U+0080 to U+10FFFF alike), the state advances at once and {@code pending} is {@code SKIP | remaining}:
 * the continuation bytes are then only counted (after E0, F0 and F4 the first one is range-checked, as those leads also
 * start overlong or out-of-range forms).
 *
 * <p>Not thread-safe (one generation, one thread); the grammar, trie and cache it uses are shared.
 */
public final class GbnfConstraint implements TokenConstraint {
    private static final int[] MIN_CODE_POINT = {0, 0, 0x80, 0x800, 0x10000};
    /** Marks {@code pending} as "the character is already matched; skip this many continuation bytes". */
    private static final int SKIP = 1 << 30;
    /** With {@link #SKIP}: the next byte is the first continuation of lead {@code (pending >>> 4) & 0xFF}, to check. */
    private static final int CHECK_FIRST = 1 << 29;

    private final GbnfCompiler compiler;
    private final GbnfGrammar grammar;
    private GrammarState state;
    private int pending;
    private boolean ended; // an end-of-generation token was accepted
    // scratch for the walk, sized by the trie's depth
    private final GrammarState[] walkStates;
    private final int[] walkPending;
    private final int[] stepPending = new int[1];

    GbnfConstraint(GbnfCompiler compiler, GbnfGrammar grammar) {
        this.compiler = compiler;
        this.grammar = grammar;
        this.state = grammar.start;
        int depth = compiler.trie().maxDepth + 1;
        this.walkStates = new GrammarState[depth];
        this.walkPending = new int[depth];
    }

    @Override
    public boolean allows(int token) {
        TokenVocabulary vocabulary = compiler.vocabulary();
        if (ended || token < 0 || token >= vocabulary.size()) {
            return false;
        }
        if (vocabulary.isControl(token)) {
            return vocabulary.isEndOfGeneration(token) && canEnd();
        }
        return advance(token) != null;
    }

    @Override
    public void fillMask(long[] mask) {
        TokenVocabulary vocabulary = compiler.vocabulary();
        int words = (vocabulary.size() + 63) >>> 6;
        if (mask.length < words) {
            throw new IllegalArgumentException("mask has " + mask.length + " words; the vocabulary of "
                    + vocabulary.size() + " tokens needs " + words);
        }
        if (ended) {
            Arrays.fill(mask, 0L);
            return;
        }
        MaskCache.Key key = new MaskCache.Key(state.maskKey(), pending);
        MaskCache.Mask cached = compiler.masks().get(key);
        if (cached != null) {
            cached.copyTo(mask);
            return;
        }
        Arrays.fill(mask, 0L);
        int[] free = pending == 0 ? state.freeRanges(Math.min(Slice.MAX_PURE, compiler.trie().maxDepth)) : null;
        Slice slice = free == null ? null : compiler.slice(free);
        if (slice != null) {
            System.arraycopy(slice.pure, 0, mask, 0, slice.pure.length);
            walk(slice.remainder, mask);
        } else {
            walk(compiler.trie(), mask);
        }
        if (canEnd()) {
            for (int t : compiler.endOfGeneration()) {
                mask[t >>> 6] |= 1L << t;
            }
        }
        compiler.masks().put(key, MaskCache.Mask.of(mask, words));
    }

    /**
     * Sets in {@code mask} the tokens of {@code trie} that continue the grammar from the current position, walking it
     * once and skipping every subtree whose first byte is rejected.
     */
    void walk(TokenTrie trie, long[] mask) {
        byte[] label = trie.label;
        short[] depth = trie.depth;
        int[] skip = trie.skip;
        int[] token = trie.token;
        int[] sameAs = trie.sameAs;
        GrammarState[] states = walkStates;
        int[] pendings = walkPending;
        GrammarState dead = grammar.dead;
        states[0] = state;
        pendings[0] = pending;
        int n = label.length;
        int i = 0;
        while (i < n) {
            int d = depth[i];
            GrammarState from = states[d - 1];
            int p = pendings[d - 1];
            int b = label[i] & 0xFF;
            GrammarState to;
            if (p == 0 && b < 0x80) {
                to = from.next(grammar.asciiInterval(b));
                if (to == dead) { // transitions to a dead state always give the grammar's one dead instance
                    i = skip[i];
                    continue;
                }
                pendings[d] = 0;
            } else {
                to = step(from, p, b);
                if (to == null) {
                    i = skip[i];
                    continue;
                }
                pendings[d] = stepPending[0];
            }
            states[d] = to;
            for (int t = token[i]; t >= 0; t = sameAs[t]) {
                mask[t >>> 6] |= 1L << t;
            }
            i++;
        }
        Arrays.fill(states, null);
    }

    @Override
    public void accept(int token) {
        TokenVocabulary vocabulary = compiler.vocabulary();
        if (token < 0 || token >= vocabulary.size()) {
            throw new IllegalArgumentException("token " + token + " is outside the vocabulary of " + vocabulary.size());
        }
        if (ended) {
            throw new IllegalArgumentException("token " + token + " follows the end of generation");
        }
        if (vocabulary.isControl(token)) {
            if (vocabulary.isEndOfGeneration(token) && canEnd()) {
                ended = true;
                return;
            }
            throw new IllegalArgumentException("token " + token
                    + (vocabulary.isEndOfGeneration(token)
                            ? " ends generation where the grammar cannot end"
                            : " is a control token")
                    + " (" + where() + ")");
        }
        GrammarState next = advance(token);
        if (next == null) {
            throw new IllegalArgumentException("token " + token + " (" + describe(vocabulary.piece(token))
                    + ") does not continue the grammar (" + where() + ")");
        }
        state = next;
        pending = stepPending[0];
    }

    /** A closing path longer than this is not searched (the grammars of steps close within a few dozen). */
    static final int MAX_CLOSING = 256;
    /** States a closing search visits at most. */
    private static final int MAX_VISITED = 20_000;

    @Override
    public int stepsToEnd() {
        if (ended) {
            return 0;
        }
        return pending != 0 ? Integer.MAX_VALUE : distance(state);
    }

    @Override
    public int stepsToEndAfter(int token) {
        TokenVocabulary vocabulary = compiler.vocabulary();
        if (ended || token < 0 || token >= vocabulary.size()) {
            return Integer.MAX_VALUE;
        }
        if (vocabulary.isControl(token)) {
            return vocabulary.isEndOfGeneration(token) && canEnd() ? 0 : Integer.MAX_VALUE;
        }
        GrammarState next = advance(token);
        return next == null || stepPending[0] != 0 ? Integer.MAX_VALUE : distance(next);
    }

    /**
     * The fewest code points from {@code from} to a state where the grammar may end: a breadth-first search over the
     * DFA's transitions (one per code-point interval), which are memoized, so a search near the end of a value is
     * cheap. {@link Integer#MAX_VALUE} past {@link #MAX_CLOSING} steps or {@link #MAX_VISITED} states.
     */
    private int distance(GrammarState from) {
        if (from.canEnd) {
            return 0;
        }
        java.util.Set<GrammarState> seen = new java.util.HashSet<>();
        java.util.List<GrammarState> level = new java.util.ArrayList<>(java.util.List.of(from));
        seen.add(from);
        for (int steps = 1; steps <= MAX_CLOSING && !level.isEmpty(); steps++) {
            java.util.List<GrammarState> nextLevel = new java.util.ArrayList<>();
            for (GrammarState s : level) {
                for (int iv = 0; iv < grammar.intervalCount; iv++) {
                    GrammarState to = s.next(iv);
                    if (to == grammar.dead || !seen.add(to)) {
                        continue;
                    }
                    if (to.canEnd) {
                        return steps;
                    }
                    if (seen.size() > MAX_VISITED) {
                        return Integer.MAX_VALUE;
                    }
                    nextLevel.add(to);
                }
            }
            level = nextLevel;
        }
        return Integer.MAX_VALUE;
    }

    @Override
    public String forcedText(int maxCodePoints) {
        if (ended || pending != 0) {
            return "";
        }
        StringBuilder out = new StringBuilder();
        GrammarState s = state;
        for (int i = 0; i < maxCodePoints; i++) {
            int cp = s.forcedCodePoint();
            if (cp < 0) {
                break;
            }
            out.appendCodePoint(cp);
            s = s.next(grammar.interval(cp));
        }
        return out.toString();
    }

    @Override
    public boolean canEnd() {
        return !ended && pending == 0 && state.canEnd;
    }

    @Override
    public boolean isComplete() {
        return ended || (pending == 0 && state.canEnd && state.tops.length == 0);
    }

    /** The state after {@code token}'s piece, with its pending bytes in {@code stepPending[0]}; null if rejected. */
    private @Nullable GrammarState advance(int token) {
        TokenVocabulary vocabulary = compiler.vocabulary();
        int length = vocabulary.pieceLength(token);
        if (length == 0) {
            return null; // an empty piece would let generation loop without progress (llama.cpp rejects it too)
        }
        GrammarState s = state;
        int p = pending;
        for (int i = 0; i < length; i++) {
            s = step(s, p, vocabulary.pieceByte(token, i) & 0xFF);
            if (s == null) {
                return null;
            }
            p = stepPending[0];
        }
        stepPending[0] = p;
        return s;
    }

    /**
     * One byte from ({@code s}, {@code p}): the next state with its pending bytes in {@code stepPending[0]}, or null
     * when the byte cannot come next.
     */
    private @Nullable GrammarState step(GrammarState s, int p, int b) {
        if (p == 0) {
            if (b < 0x80) {
                GrammarState to = s.next(grammar.asciiInterval(b));
                stepPending[0] = 0;
                return to.isDead() ? null : to;
            }
            int iv = grammar.leadInterval(b);
            if (iv >= 0) {
                GrammarState to = s.next(iv);
                int check = b == 0xE0 || b == 0xF0 || b == 0xF4 ? CHECK_FIRST | b << 4 : 0;
                stepPending[0] = SKIP | check | (grammar.leadLength(b) - 1);
                return to.isDead() ? null : to;
            }
            int length;
            int value;
            if (b >= 0xC2 && b <= 0xDF) {
                length = 2;
                value = b & 0x1F;
            } else if (b >= 0xE0 && b <= 0xEF) {
                length = 3;
                value = b & 0x0F;
            } else if (b >= 0xF0 && b <= 0xF4) {
                length = 4;
                value = b & 0x07;
            } else {
                return null; // a continuation byte without a lead, or a byte UTF-8 never uses
            }
            return partial(s, value, length, length - 1);
        }
        if ((b & 0xC0) != 0x80) {
            return null; // a character left unfinished
        }
        if ((p & SKIP) != 0) {
            if ((p & CHECK_FIRST) != 0) {
                int range = GbnfGrammar.firstContinuation((p >>> 4) & 0xFF);
                if (b < range >>> 8 || b > (range & 0xFF)) {
                    return null; // overlong, or above U+10FFFF
                }
            }
            int left = (p & 3) - 1;
            stepPending[0] = left == 0 ? 0 : SKIP | left;
            return s;
        }
        int value = (p >>> 4) << 6 | (b & 0x3F);
        int length = ((p >>> 2) & 3) + 1;
        int remaining = (p & 3) - 1;
        if (remaining > 0) {
            return partial(s, value, length, remaining);
        }
        if (value < MIN_CODE_POINT[length] || value > Character.MAX_CODE_POINT) {
            return null; // overlong or out of range
        }
        GrammarState to = s.next(grammar.interval(value));
        stepPending[0] = 0;
        return to.isDead() ? null : to;
    }

    private @Nullable GrammarState partial(GrammarState s, int value, int length, int remaining) {
        int shift = 6 * remaining;
        int lo = Math.max(value << shift, MIN_CODE_POINT[length]);
        int hi = Math.min(value << shift | ((1 << shift) - 1), Character.MAX_CODE_POINT);
        if (lo > hi || !s.admitsAny(lo, hi)) {
            return null;
        }
        stepPending[0] = value << 4 | (length - 1) << 2 | remaining;
        return s;
    }

    private String where() {
        return state.canEnd
                ? "the grammar may end here"
                : "at " + state.tops.length + " grammar position(s)" + (pending != 0 ? " inside a character" : "");
    }

    private static String describe(byte[] piece) {
        StringBuilder out = new StringBuilder("'");
        for (byte b : piece) {
            int c = b & 0xFF;
            out.append(c >= 0x20 && c < 0x7F ? String.valueOf((char) c) : String.format("\\x%02X", c));
        }
        return out.append('\'').toString();
    }

    /** The current grammar state (for tests). */
    GrammarState state() {
        return state;
    }

    @Override
    public String toString() {
        return "GbnfConstraint[" + state + (pending != 0 ? ", inside a character" : "") + (ended ? ", ended" : "")
                + "]";
    }
}
