package dev.oam.model.llama;

import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.Term;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The longest output, in UTF-8 bytes, that a grammar ({@link Grammar}) can produce, and its shortest in code points,
 * read from its trees: literals, character classes, rule references, groups, alternatives and repetitions.
 *
 * <p>Why bytes: every token llama.cpp samples under a grammar decodes to at least one byte (control tokens never match
 * a grammar), so a grammar whose longest output is {@code n} bytes ends within {@code n} tokens. That is how a
 * constrained step is made to fit its token budget instead of being cut off mid-JSON.
 */
final class GrammarBound {
    static final long UNBOUNDED = Long.MAX_VALUE;

    private final Grammar grammar;
    private final Map<String, Long> memo = new HashMap<>();
    private final Predicate<String> uncounted;
    /** Whether this counts the shortest output in code points instead of the longest in bytes. */
    private final boolean shortest;

    private GrammarBound(Grammar grammar, Predicate<String> uncounted, boolean shortest) {
        this.grammar = grammar;
        this.uncounted = uncounted;
        this.shortest = shortest;
    }

    /**
     * The longest output of {@code root} in bytes, or {@link #UNBOUNDED}.
     *
     * @param uncounted rules whose output does not count (free text, which the token limit may cut without harm)
     */
    static long maxBytes(Grammar grammar, Predicate<String> uncounted) {
        return new GrammarBound(grammar, uncounted, false).rule(Grammar.ROOT);
    }

    /**
     * The fewest code points a sentence of {@code grammar} has: what an engine that closes a structure at its token
     * budget needs at the least (a code point may take a token of its own).
     */
    static long minCodePoints(Grammar grammar) {
        return new GrammarBound(grammar, name -> false, true).rule(Grammar.ROOT);
    }

    private long rule(String name) {
        if (!shortest && uncounted.test(name)) {
            return 0;
        }
        Long known = memo.get(name);
        if (known != null) {
            return known;
        }
        Term body = grammar.rule(name);
        memo.put(name, UNBOUNDED); // a rule that reaches itself is unbounded
        long value = term(body);
        memo.put(name, value);
        return value;
    }

    private long term(Term term) {
        return switch (term) {
            case Term.Literal l ->
                shortest ? l.text().codePointCount(0, l.text().length()) : utf8Length(l.text());
            case Term.CharClass c -> shortest ? 1 : c.negated() ? 4 : utf8Length(highest(c));
            case Term.RuleRef r -> rule(r.name());
            case Term.Group g -> term(g.term());
            case Term.Sequence s -> {
                long sum = 0;
                for (Term item : s.items()) {
                    sum = add(sum, term(item));
                }
                yield sum;
            }
            case Term.Alternatives a -> {
                long best = term(a.options().get(0));
                for (int i = 1; i < a.options().size(); i++) {
                    long next = term(a.options().get(i));
                    best = shortest ? Math.min(best, next) : Math.max(best, next);
                }
                yield best;
            }
            case Term.Repeat r -> {
                long value = term(r.term());
                if (shortest) {
                    yield times(value, r.min());
                }
                yield r.max() < 0 ? (value == 0 ? 0 : UNBOUNDED) : times(value, r.max());
            }
        };
    }

    private static int highest(Term.CharClass c) {
        int highest = 0;
        for (Term.CharClass.Span span : c.spans()) {
            highest = Math.max(highest, span.last());
        }
        return highest;
    }

    private static long utf8Length(String text) {
        long bytes = 0;
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i);
            bytes += utf8Length(cp);
            i += Character.charCount(cp);
        }
        return bytes;
    }

    private static long add(long a, long b) {
        return a == UNBOUNDED || b == UNBOUNDED || a + b < 0 ? UNBOUNDED : a + b;
    }

    private static long times(long a, long n) {
        if (a == 0 || n == 0) {
            return 0;
        }
        return a == UNBOUNDED || n == UNBOUNDED || a > UNBOUNDED / n ? UNBOUNDED : a * n;
    }

    private static int utf8Length(int codePoint) {
        return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
    }
}
