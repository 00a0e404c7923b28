package dev.oam.model.llama.grammar;

import dev.oam.model.llama.grammar.Term.Alternatives;
import dev.oam.model.llama.grammar.Term.CharClass;
import dev.oam.model.llama.grammar.Term.Group;
import dev.oam.model.llama.grammar.Term.Literal;
import dev.oam.model.llama.grammar.Term.Repeat;
import dev.oam.model.llama.grammar.Term.RuleRef;
import dev.oam.model.llama.grammar.Term.Sequence;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * A grammar ({@link Grammar}) compiled into a pushdown automaton over code points, with a lazily built, shared DFA of
 * its states.
 *
 * <p>The program is llama.cpp's shape: every rule is a list of alternatives, each a run of elements ending in
 * {@link #END}; an element is a character class or a rule reference. Groups and repetitions become rules of their own
 * ({@code x{2,4}} is {@code x x o2} with {@code o2 ::= x o1 |}, {@code o1 ::= x |}), so a matcher needs only stacks of
 * positions. A reference at the end of an alternative pushes no return position, so {@code x*} and the nested optionals
 * run in constant stack depth.
 *
 * <p>The code-point alphabet is cut into intervals at every class boundary: within an interval every class answers the
 * same, so transitions are memoized per (state, interval) and a multi-byte character costs one binary search. States
 * are interned (up to {@link #MAX_STATES}), so after warm-up a byte step is an array read. Immutable apart from those
 * thread-safe caches.
 */
public final class GbnfGrammar {
    /** The end of an alternative in {@link #code}. */
    static final int END = -1;
    /** Interned states per grammar; past it new states still work but are no longer shared. */
    static final int MAX_STATES = 50_000;
    /** The largest program accepted (elements after expanding repetitions). */
    static final int MAX_CODE = 4_000_000;

    /** Elements: {@code >= 0} a class id; {@link #END}; {@code <= -2} the rule {@code -2 - code}. */
    final int[] code;
    /** The start position of each alternative of each rule. */
    final int[][] alternatives;
    /** Interval boundaries: interval {@code i} is {@code [bounds[i], bounds[i + 1])}; the last ends at U+10FFFF. */
    final int[] bounds;
    /** Per class id, the intervals it admits. */
    final long[][] classIntervals;

    final int intervalCount;
    private final int[] asciiInterval = new int[128];
    /**
     * Per UTF-8 lead byte, the one interval every character it starts falls in, or -1 (the character must be decoded
     * whole: its interval depends on the continuation bytes, or some of them would be invalid).
     */
    private final int[] leadInterval = new int[256];

    private final int[] leadLength = new int[256];
    /** Per position, the same position in a repetition with fewer iterations left; null when nothing merges. */
    private final int @Nullable [] clamp;

    private final ConcurrentHashMap<GrammarState, GrammarState> states = new ConcurrentHashMap<>();
    final GrammarState dead;
    final GrammarState start;

    private GbnfGrammar(int[] code, int[][] alternatives, List<int[]> classes, int @Nullable [] clamp) {
        this.code = code;
        this.alternatives = alternatives;
        this.clamp = clamp;
        TreeSet<Integer> cuts = new TreeSet<>();
        cuts.add(0);
        for (int[] ranges : classes) {
            for (int i = 0; i < ranges.length; i += 2) {
                cuts.add(ranges[i]);
                if (ranges[i + 1] < Character.MAX_CODE_POINT) {
                    cuts.add(ranges[i + 1] + 1);
                }
            }
        }
        bounds = cuts.stream().mapToInt(Integer::intValue).toArray();
        intervalCount = bounds.length;
        classIntervals = new long[classes.size()][];
        for (int c = 0; c < classes.size(); c++) {
            int[] ranges = classes.get(c);
            long[] set = new long[(intervalCount + 63) >>> 6];
            for (int i = 0; i < ranges.length; i += 2) {
                for (int iv = search(ranges[i]); iv < intervalCount && bounds[iv] <= ranges[i + 1]; iv++) {
                    set[iv >>> 6] |= 1L << iv;
                }
            }
            classIntervals[c] = set;
        }
        for (int b = 0; b < 128; b++) {
            asciiInterval[b] = search(b);
        }
        for (int b = 0x80; b < 0x100; b++) {
            int length = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
            leadInterval[b] = -1;
            if (length > 0) {
                int bits = 6 * (length - 1);
                // the valid characters the lead starts: E0 and F0 exclude overlong forms, F4 stops at U+10FFFF
                int lo = Math.max((b & (0x7F >> length)) << bits, length == 3 ? 0x800 : length == 4 ? 0x10000 : 0x80);
                int hi = Math.min(lo | ((1 << bits) - 1), Character.MAX_CODE_POINT);
                int iv = search(lo);
                if (iv == search(hi)) {
                    leadInterval[b] = iv;
                    leadLength[b] = length;
                }
            }
        }
        dead = new GrammarState(this, new Frame[0], false);
        Set<Frame> tops = new LinkedHashSet<>();
        boolean[] end = new boolean[1];
        for (int alt : alternatives[0]) {
            expand(alt, null, tops, end);
        }
        start = intern(new GrammarState(this, tops.toArray(Frame[]::new), end[0]));
    }

    /**
     * Compiles {@code grammar}.
     *
     * @throws IllegalArgumentException naming the cause when it is left-recursive or too large
     */
    static GbnfGrammar compile(Grammar grammar) {
        return compile(grammar, Integer.MAX_VALUE);
    }

    /**
     * Compiles {@code grammar} for a vocabulary whose longest piece is {@code longestPiece} bytes (which lets
     * {@link #maskKey} merge repetition counts no token can tell apart).
     */
    static GbnfGrammar compile(Grammar grammar, int longestPiece) {
        return new Lowering(grammar.rules(), longestPiece).run();
    }

    /** The interval of {@code cp}. */
    int interval(int cp) {
        return cp < 128 ? asciiInterval[cp] : search(cp);
    }

    /** The interval of the ASCII character {@code b}. */
    int asciiInterval(int b) {
        return asciiInterval[b];
    }

    private int search(int cp) {
        int i = Arrays.binarySearch(bounds, cp);
        return i >= 0 ? i : -i - 2;
    }

    /**
     * The range the first continuation byte after lead {@code b} must be in, as {@code lo << 8 | hi}: narrower than
     * {@code 80..BF} only after E0, F0 and F4 (overlong forms and code points above U+10FFFF).
     */
    static int firstContinuation(int b) {
        return b == 0xE0
                ? 0xA0 << 8 | 0xBF
                : b == 0xF0 ? 0x90 << 8 | 0xBF : b == 0xF4 ? 0x80 << 8 | 0x8F : 0x80 << 8 | 0xBF;
    }

    /** See {@link #leadInterval}. */
    int leadInterval(int b) {
        return leadInterval[b];
    }

    /** The length of the character lead byte {@code b} starts, where {@link #leadInterval} is set. */
    int leadLength(int b) {
        return leadLength[b];
    }

    /**
     * The key {@code state}'s mask is cached under: {@code state} with every count of a bounded repetition lowered to
     * at most one more than the longest piece. A token of {@code n} bytes holds at most {@code n} characters, hence at
     * most {@code n} iterations of a repeated item that always consumes one, and the repetition may stop after any of
     * them; so no token tells "{@code k} more allowed" from "{@code longest + 1} more allowed" once {@code k} is
     * larger, and their masks are equal. This is what makes the body of a long JSON string cost one mask instead of one
     * per remaining character.
     */
    GrammarState maskKey(GrammarState state) {
        if (clamp == null) {
            return state;
        }
        Frame[] tops = state.tops;
        Frame[] mapped = null;
        for (int i = 0; i < tops.length; i++) {
            Frame f = clamp(tops[i]);
            if (f != tops[i]) {
                if (mapped == null) {
                    mapped = tops.clone();
                }
                mapped[i] = f;
            }
        }
        return mapped == null ? state : new GrammarState(this, mapped, state.canEnd);
    }

    private @Nullable Frame clamp(@Nullable Frame frame) {
        if (frame == null) {
            return null;
        }
        Frame parent = clamp(frame.parent);
        int pc = clamp[frame.pc];
        return parent == frame.parent && pc == frame.pc ? frame : new Frame(pc, parent);
    }

    /** States a free-set search may visit before it gives up (no slice: the full walk is used). */
    static final int MAX_FREE_SEARCH = 4096;
    /** Code points a free set must cover to be worth a slice. */
    static final int MIN_FREE_CODE_POINTS = 64;

    /**
     * The code points (sorted inclusive ranges) that {@code state} accepts in any order for at least {@code longest}
     * characters, or null when there are too few to be worth a slice.
     *
     * <p>Start from the intervals {@code state} admits. Explore the states reached by strings of those, up to
     * {@code longest - 1} characters deep; where a reached state does not admit the whole set, drop the interval that
     * led there, and start over. What remains is sound: every string of at most {@code longest} characters from the set
     * passes through states that admit the next one, so every piece made only of them is allowed. For a JSON string
     * body this drops the quote and backslash (their states admit other things) and keeps the plain characters while at
     * least {@code longest} more are allowed.
     */
    int @Nullable [] freeRanges(GrammarState state, int longest) {
        long[] free = state.admittedIntervals();
        restart:
        while (true) {
            if (!worthASlice(free)) {
                return null;
            }
            List<GrammarState> level = List.of(state);
            Set<GrammarState> seen = new java.util.HashSet<>(level);
            for (int depth = 1; depth < longest; depth++) {
                List<GrammarState> next = new ArrayList<>();
                for (GrammarState from : level) {
                    for (int iv = nextSet(free, 0); iv >= 0; iv = nextSet(free, iv + 1)) {
                        GrammarState to = from.next(iv);
                        if (!to.admitsAll(free)) {
                            free[iv >>> 6] &= ~(1L << iv);
                            continue restart;
                        }
                        if (seen.add(to)) {
                            next.add(to);
                            if (seen.size() > MAX_FREE_SEARCH) {
                                return null;
                            }
                        }
                    }
                }
                if (next.isEmpty()) {
                    break;
                }
                level = next;
            }
            return ranges(free);
        }
    }

    private boolean worthASlice(long[] intervals) {
        long covered = 0;
        for (int iv = nextSet(intervals, 0); iv >= 0; iv = nextSet(intervals, iv + 1)) {
            covered += intervalEnd(iv) - bounds[iv] + 1;
        }
        return covered >= MIN_FREE_CODE_POINTS;
    }

    int intervalEnd(int iv) {
        return iv + 1 < intervalCount ? bounds[iv + 1] - 1 : Character.MAX_CODE_POINT;
    }

    private int[] ranges(long[] intervals) {
        List<Integer> out = new ArrayList<>();
        for (int iv = nextSet(intervals, 0); iv >= 0; iv = nextSet(intervals, iv + 1)) {
            if (!out.isEmpty() && out.get(out.size() - 1) == bounds[iv] - 1) {
                out.set(out.size() - 1, intervalEnd(iv));
            } else {
                out.add(bounds[iv]);
                out.add(intervalEnd(iv));
            }
        }
        return out.stream().mapToInt(Integer::intValue).toArray();
    }

    private int nextSet(long[] set, int from) {
        if (from >= intervalCount) {
            return -1;
        }
        int word = from >>> 6;
        long w = set[word] & (-1L << from);
        while (true) {
            if (w != 0) {
                int iv = (word << 6) + Long.numberOfTrailingZeros(w);
                return iv < intervalCount ? iv : -1;
            }
            if (++word >= set.length) {
                return -1;
            }
            w = set[word];
        }
    }

    /** The shared instance equal to {@code state}, or {@code state} itself once the table is full. */
    GrammarState intern(GrammarState state) {
        if (state.isDead()) {
            return dead;
        }
        GrammarState known = states.get(state);
        if (known != null) {
            return known;
        }
        if (states.size() >= MAX_STATES) {
            return state;
        }
        known = states.putIfAbsent(state, state);
        return known != null ? known : state;
    }

    int internedStates() {
        return states.size();
    }

    /**
     * Adds to {@code tops} the character positions reachable from position {@code pc} with return stack {@code parent}
     * without consuming input; sets {@code end[0]} when the whole grammar can end there.
     */
    void expand(int pc, Frame parent, Set<Frame> tops, boolean[] end) {
        int op = code[pc];
        if (op == END) {
            if (parent == null) {
                end[0] = true;
            } else {
                expand(parent.pc, parent.parent, tops, end);
            }
        } else if (op >= 0) {
            tops.add(new Frame(pc, parent));
        } else {
            int rule = -2 - op;
            Frame next = code[pc + 1] == END ? parent : new Frame(pc + 1, parent);
            for (int alt : alternatives[rule]) {
                expand(alt, next, tops, end);
            }
        }
    }

    /** Whether class {@code classId} admits interval {@code iv}. */
    boolean admits(int classId, int iv) {
        return (classIntervals[classId][iv >>> 6] & (1L << iv)) != 0;
    }

    /** Turns rule trees into the flat program. */
    private static final class Lowering {
        private final Map<String, Term> trees;
        private final Map<String, Integer> ruleIds = new HashMap<>();
        private final List<List<int[]>> rules = new ArrayList<>(); // rule -> alternatives (element lists)
        private final List<int[]> classes = new ArrayList<>();
        private final Map<String, Integer> classIds = new HashMap<>();
        private long size;

        private final int longestPiece;
        /** Each bounded repetition's optional rules, innermost (one more) first, with its item. */
        private final List<int[]> chains = new ArrayList<>();

        private final List<Integer> chainItems = new ArrayList<>();

        Lowering(Map<String, Term> trees, int longestPiece) {
            this.trees = trees;
            this.longestPiece = longestPiece;
        }

        GbnfGrammar run() {
            ruleId(Grammar.ROOT);
            for (String name : trees.keySet()) {
                ruleId(name);
            }
            for (Map.Entry<String, Term> rule : trees.entrySet()) {
                List<int[]> alts = rules.get(ruleIds.get(rule.getKey()));
                Term body = rule.getValue();
                if (body instanceof Alternatives a) {
                    for (Term option : a.options()) {
                        alts.add(elements(option));
                    }
                } else {
                    alts.add(elements(body));
                }
            }
            boolean[] nullable = checkLeftRecursion();
            int total = 0;
            for (List<int[]> alts : rules) {
                for (int[] alt : alts) {
                    total += alt.length + 1;
                }
            }
            int[] code = new int[total + 1];
            int[][] starts = new int[rules.size()][];
            int pc = 0;
            for (int r = 0; r < rules.size(); r++) {
                List<int[]> alts = rules.get(r);
                starts[r] = new int[alts.size()];
                for (int a = 0; a < alts.size(); a++) {
                    starts[r][a] = pc;
                    System.arraycopy(alts.get(a), 0, code, pc, alts.get(a).length);
                    pc += alts.get(a).length;
                    code[pc++] = END;
                }
            }
            code[pc] = END;
            return new GbnfGrammar(code, starts, classes, clampMap(code.length, starts, nullable));
        }

        /**
         * Maps the positions of {@code opt_k} (up to {@code k} more iterations) to those of {@code opt_limit} for every
         * {@code k > limit = longestPiece + 1}, for repetitions whose item always consumes a character.
         */
        private int @Nullable [] clampMap(int length, int[][] starts, boolean[] nullable) {
            long limit = (long) longestPiece + 1;
            int[] map = null;
            for (int c = 0; c < chains.size(); c++) {
                int[] chain = chains.get(c);
                int item = chainItems.get(c);
                if (chain.length <= limit || (item < 0 && nullable[-2 - item])) {
                    continue;
                }
                if (map == null) {
                    map = new int[length];
                    for (int i = 0; i < length; i++) {
                        map[i] = i;
                    }
                }
                int target = starts[chain[(int) limit - 1]][0];
                for (int k = (int) limit + 1; k <= chain.length; k++) {
                    int from = starts[chain[k - 1]][0];
                    map[from] = target;
                    map[from + 1] = target + 1;
                }
            }
            return map;
        }

        private int ruleId(String name) {
            Integer id = ruleIds.get(name);
            if (id == null) {
                id = rules.size();
                ruleIds.put(name, id);
                rules.add(new ArrayList<>());
            }
            return id;
        }

        private int newRule(List<int[]> alts) {
            int id = rules.size();
            rules.add(alts);
            return id;
        }

        private int[] elements(Term node) {
            List<Integer> out = new ArrayList<>();
            lower(node, out);
            grow(out.size() + 1);
            return out.stream().mapToInt(Integer::intValue).toArray();
        }

        private void grow(long elements) {
            size += elements;
            if (size > MAX_CODE) {
                throw new IllegalArgumentException("GBNF: the grammar expands to more than " + MAX_CODE
                        + " elements (repetitions are expanded); it is too large");
            }
        }

        private void lower(Term node, List<Integer> out) {
            switch (node) {
                case Literal l -> l.text().codePoints().forEach(cp -> out.add(classId(false, new int[] {cp, cp})));
                case CharClass c -> out.add(classId(c.negated(), ranges(c)));
                case RuleRef ref -> {
                    if (!trees.containsKey(ref.name())) {
                        throw new IllegalArgumentException("GBNF: undefined rule '" + ref.name() + "'");
                    }
                    out.add(-2 - ruleId(ref.name()));
                }
                case Sequence s -> s.items().forEach(item -> lower(item, out));
                case Group g -> lower(g.term(), out);
                case Alternatives a -> {
                    List<int[]> alts = new ArrayList<>();
                    for (Term option : a.options()) {
                        alts.add(elements(option));
                    }
                    out.add(-2 - newRule(alts));
                }
                case Repeat r -> repeat(r, out);
            }
        }

        /** {@code x{m,n}}: m copies of x, then nested optionals (n - m of them) or {@code x*}. */
        private void repeat(Repeat r, List<Integer> out) {
            int[] item = elements(r.term());
            int element = item.length == 1 ? item[0] : -2 - newRule(new ArrayList<>(List.of(item)));
            grow(r.min());
            for (int i = 0; i < r.min(); i++) {
                out.add(element);
            }
            if (r.max() < 0) {
                int star = newRule(new ArrayList<>());
                rules.get(star).add(new int[] {element, -2 - star});
                rules.get(star).add(new int[0]);
                grow(4);
                out.add(-2 - star);
            } else if (r.max() > r.min()) {
                int[] chain = new int[r.max() - r.min()];
                int previous = newRule(new ArrayList<>(List.of(new int[] {element}, new int[0])));
                chain[0] = previous;
                for (int k = 2; k <= r.max() - r.min(); k++) {
                    previous = newRule(new ArrayList<>(List.of(new int[] {element, -2 - previous}, new int[0])));
                    chain[k - 1] = previous;
                    grow(5);
                }
                chains.add(chain);
                chainItems.add(element);
                out.add(-2 - previous);
            }
        }

        /** The spans of {@code c} as inclusive {@code [first, last]} pairs. */
        private static int[] ranges(CharClass c) {
            int[] out = new int[c.spans().size() * 2];
            for (int i = 0; i < c.spans().size(); i++) {
                out[2 * i] = c.spans().get(i).first();
                out[2 * i + 1] = c.spans().get(i).last();
            }
            return out;
        }

        private int classId(boolean negated, int[] ranges) {
            int[] positive = normalize(negated, ranges);
            String key = Arrays.toString(positive);
            Integer id = classIds.get(key);
            if (id == null) {
                id = classes.size();
                classes.add(positive);
                classIds.put(key, id);
            }
            return id;
        }

        /** Sorted, merged, inclusive ranges of the code points the class admits. */
        private static int[] normalize(boolean negated, int[] ranges) {
            int[][] pairs = new int[ranges.length / 2][];
            for (int i = 0; i < pairs.length; i++) {
                pairs[i] = new int[] {ranges[2 * i], ranges[2 * i + 1]};
            }
            Arrays.sort(pairs, (a, b) -> Integer.compare(a[0], b[0]));
            List<int[]> merged = new ArrayList<>();
            for (int[] p : pairs) {
                if (!merged.isEmpty() && p[0] <= merged.get(merged.size() - 1)[1] + 1) {
                    merged.get(merged.size() - 1)[1] = Math.max(merged.get(merged.size() - 1)[1], p[1]);
                } else {
                    merged.add(p.clone());
                }
            }
            if (negated) {
                List<int[]> complement = new ArrayList<>();
                int next = 0;
                for (int[] p : merged) {
                    if (p[0] > next) {
                        complement.add(new int[] {next, p[0] - 1});
                    }
                    next = p[1] + 1;
                }
                if (next <= Character.MAX_CODE_POINT) {
                    complement.add(new int[] {next, Character.MAX_CODE_POINT});
                }
                merged = complement;
            }
            int[] out = new int[merged.size() * 2];
            for (int i = 0; i < merged.size(); i++) {
                out[2 * i] = merged.get(i)[0];
                out[2 * i + 1] = merged.get(i)[1];
            }
            return out;
        }

        /**
         * Rejects a rule that can reach itself without consuming input, as llama.cpp does: a top-down matcher would
         * loop on it.
         */
        private boolean[] checkLeftRecursion() {
            int n = rules.size();
            boolean[] nullable = new boolean[n];
            boolean changed = true;
            while (changed) {
                changed = false;
                for (int r = 0; r < n; r++) {
                    if (nullable[r]) {
                        continue;
                    }
                    for (int[] alt : rules.get(r)) {
                        boolean all = true;
                        for (int e : alt) {
                            if (e >= 0 || !nullable[-2 - e]) {
                                all = false;
                                break;
                            }
                        }
                        if (all) {
                            nullable[r] = true;
                            changed = true;
                            break;
                        }
                    }
                }
            }
            int[] mark = new int[n]; // 0 new, 1 on the path, 2 done
            for (int r = 0; r < n; r++) {
                if (mark[r] == 0) {
                    visit(r, nullable, mark);
                }
            }
            return nullable;
        }

        private void visit(int root, boolean[] nullable, int[] mark) {
            // iterative DFS: the nested optionals of a long repetition are thousands of rules deep
            List<int[]> stack = new ArrayList<>(); // {rule, next edge index}
            List<int[]> edges = new ArrayList<>();
            stack.add(new int[] {root, 0});
            edges.add(leftEdges(root, nullable));
            mark[root] = 1;
            while (!stack.isEmpty()) {
                int[] top = stack.get(stack.size() - 1);
                int[] out = edges.get(edges.size() - 1);
                if (top[1] == out.length) {
                    mark[top[0]] = 2;
                    stack.remove(stack.size() - 1);
                    edges.remove(edges.size() - 1);
                    continue;
                }
                int next = out[top[1]++];
                if (mark[next] == 1) {
                    throw new IllegalArgumentException("GBNF: rule '" + name(next) + "' is left-recursive (it can "
                            + "reach itself without matching a character)");
                }
                if (mark[next] == 0) {
                    mark[next] = 1;
                    stack.add(new int[] {next, 0});
                    edges.add(leftEdges(next, nullable));
                }
            }
        }

        private int[] leftEdges(int r, boolean[] nullable) {
            List<Integer> out = new ArrayList<>();
            for (int[] alt : rules.get(r)) {
                for (int e : alt) {
                    if (e >= 0) {
                        break;
                    }
                    out.add(-2 - e);
                    if (!nullable[-2 - e]) {
                        break;
                    }
                }
            }
            return out.stream().mapToInt(Integer::intValue).toArray();
        }

        private String name(int rule) {
            for (Map.Entry<String, Integer> e : ruleIds.entrySet()) {
                if (e.getValue() == rule) {
                    return e.getKey();
                }
            }
            return "(a group or repetition)";
        }
    }
}
