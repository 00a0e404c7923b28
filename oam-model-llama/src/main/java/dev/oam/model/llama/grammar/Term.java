package dev.oam.model.llama.grammar;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A rule body of a {@link Grammar}: GBNF's expressions as a small immutable tree. The tree keeps GBNF's spelling where
 * GBNF has two for one meaning (a group in parentheses, {@code x?} or {@code x{0,1}}, {@code x{2}} or {@code x{2,2}}, a
 * one-character range {@code [5-5]}), so printing a tree ({@link #gbnf()}) gives one text for it and reading that text
 * back gives the same tree. Build with the factories, which flatten a sequence within a sequence and alternatives
 * within alternatives and leave a one-item sequence or one-option choice as the item.
 */
public sealed interface Term
        permits Term.Literal, Term.CharClass, Term.RuleRef, Term.Sequence, Term.Alternatives, Term.Repeat, Term.Group {

    /** This term as GBNF text. */
    default String gbnf() {
        StringBuilder out = new StringBuilder();
        GbnfPrinter.print(this, out);
        return out.toString();
    }

    /** Code points, one after the other ({@code ""} matches the empty string). */
    record Literal(String text) implements Term {
        public Literal {
            Objects.requireNonNull(text, "text");
        }
    }

    /**
     * One code point in (or, {@code negated}, outside) the spans, which keep their written order.
     *
     * @param spans at least one unless negated ({@code [^]} is any character)
     */
    record CharClass(boolean negated, List<Span> spans) implements Term {
        public CharClass {
            spans = List.copyOf(spans);
            if (spans.isEmpty() && !negated) {
                throw new IllegalArgumentException("spans: a class that admits nothing");
            }
        }

        /**
         * The code points {@code first} to {@code last}, written as a range ({@code a-z}) when {@code range}, else as
         * the one character {@code first} (then {@code last == first}).
         */
        public record Span(int first, int last, boolean range) {
            public Span {
                if (first < 0 || last > Character.MAX_CODE_POINT || last < first || (!range && last != first)) {
                    throw new IllegalArgumentException("span: " + first + "-" + last + (range ? "" : " (one)"));
                }
            }

            /** The one character {@code c}. */
            public static Span of(int c) {
                return new Span(c, c, false);
            }

            /** The range {@code first-last}. */
            public static Span range(int first, int last) {
                return new Span(first, last, true);
            }
        }
    }

    /** The rule {@code name}. */
    record RuleRef(String name) implements Term {
        public RuleRef {
            if (name.isEmpty() || !name.chars().allMatch(Grammar::isNameChar)) {
                throw new IllegalArgumentException("name: '" + name + "' is not a GBNF rule name");
            }
        }
    }

    /** Items one after the other; none is a sequence or alternatives (group those). */
    record Sequence(List<Term> items) implements Term {
        public Sequence {
            items = List.copyOf(items);
            for (Term item : items) {
                if (item instanceof Sequence || item instanceof Alternatives) {
                    throw new IllegalArgumentException("items: a sequence or alternatives must be grouped");
                }
            }
        }
    }

    /** One of the options; none is itself alternatives (group it). */
    record Alternatives(List<Term> options) implements Term {
        public Alternatives {
            options = List.copyOf(options);
            if (options.size() < 2 || options.stream().anyMatch(o -> o instanceof Alternatives)) {
                throw new IllegalArgumentException("options: at least two, none of them alternatives");
            }
        }
    }

    /**
     * {@code term} {@code min} to {@code max} times ({@code max} -1: no limit), written as {@code spelling} says.
     *
     * @param term an atom: a literal, class, reference, group or repetition
     */
    record Repeat(Term term, int min, int max, Spelling spelling) implements Term {
        public Repeat {
            if (term instanceof Sequence || term instanceof Alternatives) {
                throw new IllegalArgumentException("term: a sequence or alternatives must be grouped");
            }
            if (min < 0 || (max >= 0 && max < min) || max < -1) {
                throw new IllegalArgumentException("min, max: {" + min + "," + max + "}");
            }
            boolean fits = switch (spelling) {
                case OPERATOR -> min <= 1 && (max == 1 ? min == 0 : max == -1);
                case COUNT -> max == min;
                case BOUNDS -> true;
            };
            if (!fits) {
                throw new IllegalArgumentException("spelling: " + spelling + " cannot write {" + min + "," + max + "}");
            }
        }
    }

    /** How a repetition is written. */
    enum Spelling {
        /** {@code ?}, {@code *} or {@code +}. */
        OPERATOR,
        /** {@code {n}}. */
        COUNT,
        /** {@code {m,n}} or {@code {m,}}. */
        BOUNDS
    }

    /** {@code term} in parentheses. */
    record Group(Term term) implements Term {
        public Group {
            Objects.requireNonNull(term, "term");
        }
    }

    // ---- factories ----

    static Literal literal(String text) {
        return new Literal(text);
    }

    static RuleRef ref(String name) {
        return new RuleRef(name);
    }

    static CharClass chars(CharClass.Span... spans) {
        return new CharClass(false, List.of(spans));
    }

    static CharClass notChars(CharClass.Span... spans) {
        return new CharClass(true, List.of(spans));
    }

    static Group group(Term term) {
        return new Group(term);
    }

    /** The items in order, nulls left out: one item is itself, sequences among them are spliced in. */
    static Term sequence(@Nullable Term... items) {
        return sequence(java.util.Arrays.asList(items));
    }

    /** See {@link #sequence(Term...)}. */
    static Term sequence(List<? extends @Nullable Term> items) {
        List<Term> flat = new ArrayList<>();
        for (Term item : items) {
            if (item instanceof Sequence s) {
                flat.addAll(s.items());
            } else if (item != null) {
                flat.add(item);
            }
        }
        return flat.size() == 1 ? flat.get(0) : new Sequence(flat);
    }

    /** One of the options: one option is itself, alternatives among them are spliced in. */
    static Term choice(Term... options) {
        return choice(List.of(options));
    }

    /** See {@link #choice(Term...)}. */
    static Term choice(List<? extends Term> options) {
        List<Term> flat = new ArrayList<>();
        for (Term option : options) {
            if (option instanceof Alternatives a) {
                flat.addAll(a.options());
            } else {
                flat.add(Objects.requireNonNull(option, "option"));
            }
        }
        if (flat.isEmpty()) {
            throw new IllegalArgumentException("options: none");
        }
        return flat.size() == 1 ? flat.get(0) : new Alternatives(flat);
    }

    /** {@code term?}. */
    static Repeat optional(Term term) {
        return new Repeat(term, 0, 1, Spelling.OPERATOR);
    }

    /** {@code term*}. */
    static Repeat star(Term term) {
        return new Repeat(term, 0, -1, Spelling.OPERATOR);
    }

    /** {@code term{n}}. */
    static Repeat times(Term term, int n) {
        return new Repeat(term, n, n, Spelling.COUNT);
    }

    /** {@code term{min,max}}. */
    static Repeat between(Term term, int min, int max) {
        return new Repeat(term, min, max, Spelling.BOUNDS);
    }
}
