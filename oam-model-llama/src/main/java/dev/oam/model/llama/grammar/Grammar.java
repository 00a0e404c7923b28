package dev.oam.model.llama.grammar;

import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A grammar: named rules ({@link Term} trees) in order, one of them {@value #ROOT}, every reference defined. What
 * llama.cpp needs as text is {@link #gbnf()}, one rule a line ({@code name ::= body}) in this order; sizing
 * ({@code GrammarBound}) and the Java decoder ({@link GbnfCompiler}) read the trees. Immutable; equal when the texts
 * are equal.
 */
public final class Grammar {
    /** The rule a sentence of the grammar is. */
    public static final String ROOT = "root";

    private final Map<String, Term> rules;
    private final String text;

    private Grammar(Map<String, Term> rules) {
        this.rules = Collections.unmodifiableMap(new LinkedHashMap<>(rules));
        StringBuilder out = new StringBuilder();
        this.rules.forEach((name, body) -> {
            out.append(name).append(" ::= ");
            GbnfPrinter.print(body, out);
            out.append('\n');
        });
        this.text = out.toString();
    }

    /**
     * The grammar of {@code rules} in their iteration order.
     *
     * @throws IllegalArgumentException when there is no {@value #ROOT} rule, a name is not a GBNF rule name or a
     *     reference names no rule
     */
    public static Grammar of(Map<String, Term> rules) {
        if (!rules.containsKey(ROOT)) {
            throw new IllegalArgumentException("grammar has no 'root' rule");
        }
        for (Map.Entry<String, Term> rule : rules.entrySet()) {
            String name = rule.getKey();
            if (name.isEmpty() || !name.chars().allMatch(Grammar::isNameChar)) {
                throw new IllegalArgumentException("'" + name + "' is not a GBNF rule name");
            }
            Deque<Term> pending = new ArrayDeque<>();
            pending.push(rule.getValue());
            while (!pending.isEmpty()) {
                switch (pending.pop()) {
                    case Term.RuleRef r -> {
                        if (!rules.containsKey(r.name())) {
                            throw new IllegalArgumentException(
                                    "GBNF: undefined rule '" + r.name() + "' (in rule '" + name + "')");
                        }
                    }
                    case Term.Sequence s -> s.items().forEach(pending::push);
                    case Term.Alternatives a -> a.options().forEach(pending::push);
                    case Term.Repeat r -> pending.push(r.term());
                    case Term.Group g -> pending.push(g.term());
                    case Term.Literal l -> {}
                    case Term.CharClass c -> {}
                }
            }
        }
        return new Grammar(rules);
    }

    /** The rules in order. */
    public Map<String, Term> rules() {
        return rules;
    }

    /** The body of rule {@code name}. */
    public Term rule(String name) {
        Term body = rules.get(name);
        if (body == null) {
            throw new IllegalArgumentException("undefined rule " + name);
        }
        return body;
    }

    /** The grammar as GBNF text, as llama.cpp reads it. */
    public String gbnf() {
        return text;
    }

    static boolean isNameChar(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof Grammar g && g.text.equals(text);
    }

    @Override
    public int hashCode() {
        return text.hashCode();
    }

    @Override
    public String toString() {
        return text;
    }
}
