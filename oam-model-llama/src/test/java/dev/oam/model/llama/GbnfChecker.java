package dev.oam.model.llama;

import dev.oam.model.llama.grammar.GbnfParser;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.Term;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/**
 * A backtracking matcher for grammars ({@link Grammar}; GBNF text is read with {@link GbnfParser}, which fails the way
 * llama.cpp would refuse a grammar: unknown escape, undefined rule, bad name, no root; that matters because llama.cpp
 * then silently generates without one). An oracle independent of the Java decoder's automaton.
 */
public final class GbnfChecker {
    private final Grammar grammar;
    private int[] input = new int[0];
    private final Map<String, BitSet> memo = new HashMap<>();

    private GbnfChecker(Grammar grammar) {
        this.grammar = grammar;
    }

    public static GbnfChecker parse(Grammar grammar) {
        return new GbnfChecker(grammar);
    }

    public static GbnfChecker parse(String grammar) {
        return new GbnfChecker(GbnfParser.parse(grammar));
    }

    int ruleCount() {
        return grammar.rules().size();
    }

    /**
     * {@link #accepts} for JSON written compactly in a test: a space is put after every {@code :} and {@code ,} outside
     * strings, as {@link Gbnf} writes JSON.
     */
    boolean acceptsCompact(String compact) {
        return accepts(spaced(compact));
    }

    static String spaced(String compact) {
        StringBuilder out = new StringBuilder();
        boolean inString = false;
        for (int i = 0; i < compact.length(); i++) {
            char c = compact.charAt(i);
            out.append(c);
            if (inString) {
                if (c == '\\' && i + 1 < compact.length()) {
                    out.append(compact.charAt(++i));
                } else if (c == '"') {
                    inString = false;
                }
            } else if (c == '"') {
                inString = true;
            } else if (c == ':' || c == ',') {
                out.append(' ');
            }
        }
        return out.toString();
    }

    /** Whether the whole of {@code text} is in the grammar's language. */
    public synchronized boolean accepts(String text) {
        input = text.codePoints().toArray();
        memo.clear();
        return ends(new Term.RuleRef(Grammar.ROOT), 0).get(input.length);
    }

    /** Whether {@code text} is a prefix of some sentence (what a model could still be generating). */
    synchronized boolean acceptsPrefix(String text) {
        input = text.codePoints().toArray();
        memo.clear();
        prefixMode = true;
        try {
            return ends(new Term.RuleRef(Grammar.ROOT), 0).get(input.length);
        } finally {
            prefixMode = false;
        }
    }

    private boolean prefixMode;

    private BitSet ends(Term node, int pos) {
        BitSet out = new BitSet();
        if (prefixMode && pos == input.length) {
            out.set(pos); // the input ran out inside this node: a prefix
            return out;
        }
        switch (node) {
            case Term.Literal lit -> {
                int[] cps = lit.text().codePoints().toArray();
                int i = 0;
                while (i < cps.length && pos + i < input.length && input[pos + i] == cps[i]) {
                    i++;
                }
                if (i == cps.length || (prefixMode && pos + i == input.length)) {
                    out.set(pos + i);
                }
            }
            case Term.CharClass cls -> {
                if (pos < input.length && cls.negated() != inSpans(cls, input[pos])) {
                    out.set(pos + 1);
                }
            }
            case Term.RuleRef ref -> {
                String key = ref.name() + "@" + pos;
                BitSet cached = memo.get(key);
                if (cached != null) {
                    return cached;
                }
                memo.put(key, new BitSet()); // no left recursion is emitted; guards against loops
                BitSet result = ends(grammar.rule(ref.name()), pos);
                memo.put(key, result);
                return result;
            }
            case Term.Sequence seq -> {
                BitSet current = new BitSet();
                current.set(pos);
                for (Term item : seq.items()) {
                    BitSet next = new BitSet();
                    for (int p = current.nextSetBit(0); p >= 0; p = current.nextSetBit(p + 1)) {
                        next.or(ends(item, p));
                    }
                    current = next;
                    if (current.isEmpty()) {
                        break;
                    }
                }
                out.or(current);
            }
            case Term.Alternatives alt -> alt.options().forEach(option -> out.or(ends(option, pos)));
            case Term.Group group -> out.or(ends(group.term(), pos));
            case Term.Repeat rep -> {
                BitSet current = new BitSet();
                current.set(pos);
                BitSet seen = new BitSet();
                if (rep.min() == 0) {
                    out.set(pos);
                }
                for (int count = 1; rep.max() < 0 || count <= rep.max(); count++) {
                    BitSet next = new BitSet();
                    for (int p = current.nextSetBit(0); p >= 0; p = current.nextSetBit(p + 1)) {
                        next.or(ends(rep.term(), p));
                    }
                    if (count > rep.min()) {
                        next.andNot(seen);
                    }
                    if (next.isEmpty()) {
                        break;
                    }
                    if (count >= rep.min()) {
                        out.or(next);
                        seen.or(next);
                    }
                    current = next;
                }
            }
        }
        return out;
    }

    private static boolean inSpans(Term.CharClass cls, int cp) {
        for (Term.CharClass.Span span : cls.spans()) {
            if (cp >= span.first() && cp <= span.last()) {
                return true;
            }
        }
        return false;
    }
}
