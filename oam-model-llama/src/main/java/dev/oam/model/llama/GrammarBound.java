package dev.oam.model.llama;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The longest output, in UTF-8 bytes, that a GBNF grammar of the subset {@link Gbnf} writes can produce:
 * literals, character classes, rule references, groups, alternatives and the repetitions {@code ?},
 * {@code *}, {@code +}, {@code {m}}, {@code {m,n}}.
 *
 * <p>Why bytes: every token llama.cpp samples under a grammar decodes to at least one byte (control tokens
 * never match a grammar), so a grammar whose longest output is {@code n} bytes ends within {@code n} tokens.
 * That is how a constrained step is made to fit its token budget instead of being cut off mid-JSON.
 */
final class GrammarBound {
    static final long UNBOUNDED = Long.MAX_VALUE;

    private final Map<String, String> rules = new LinkedHashMap<>();
    private final Map<String, Long> memo = new HashMap<>();
    private final Predicate<String> uncounted;
    /** Whether this counts the shortest output in code points instead of the longest in bytes. */
    private final boolean shortest;

    private GrammarBound(String grammar, Predicate<String> uncounted) {
        this(grammar, uncounted, false);
    }

    private GrammarBound(String grammar, Predicate<String> uncounted, boolean shortest) {
        this.uncounted = uncounted;
        this.shortest = shortest;
        for (String line : grammar.split("\n")) {
            int at = line.indexOf(" ::= ");
            if (at > 0) {
                rules.put(line.substring(0, at).strip(), line.substring(at + 5));
            }
        }
    }

    /**
     * The longest output of {@code root} in bytes, or {@link #UNBOUNDED}.
     *
     * @param uncounted rules whose output does not count (free text, which the token limit may cut without harm)
     */
    static long maxBytes(String grammar, Predicate<String> uncounted) {
        GrammarBound bound = new GrammarBound(grammar, uncounted);
        return bound.rule("root");
    }

    /**
     * The fewest code points a sentence of {@code grammar} has: what an engine that closes a structure at its token
     * budget needs at the least (a code point may take a token of its own).
     */
    static long minCodePoints(String grammar) {
        return new GrammarBound(grammar, name -> false, true).rule("root");
    }

    private long rule(String name) {
        if (!shortest && uncounted.test(name)) {
            return 0;
        }
        Long known = memo.get(name);
        if (known != null) {
            return known;
        }
        String body = rules.get(name);
        if (body == null) {
            throw new IllegalArgumentException("undefined rule " + name);
        }
        memo.put(name, UNBOUNDED); // a rule that reaches itself is unbounded
        Parser parser = new Parser(body);
        long value = parser.alternatives();
        parser.skipSpace();
        if (!parser.atEnd()) {
            throw new IllegalArgumentException("cannot read rule " + name + " at " + parser.pos + ": " + body);
        }
        memo.put(name, value);
        return value;
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

    private final class Parser {
        private final String text;
        private int pos;

        Parser(String text) {
            this.text = text;
        }

        boolean atEnd() {
            return pos >= text.length();
        }

        void skipSpace() {
            while (pos < text.length() && Character.isWhitespace(text.charAt(pos))) {
                pos++;
            }
        }

        long alternatives() {
            long max = sequence();
            skipSpace();
            while (pos < text.length() && text.charAt(pos) == '|') {
                pos++;
                long next = sequence();
                max = shortest ? Math.min(max, next) : Math.max(max, next);
                skipSpace();
            }
            return max;
        }

        long sequence() {
            long sum = 0;
            while (true) {
                skipSpace();
                if (atEnd() || text.charAt(pos) == '|' || text.charAt(pos) == ')') {
                    return sum;
                }
                sum = add(sum, repeated(atom()));
            }
        }

        long atom() {
            char c = text.charAt(pos);
            if (c == '"') {
                pos++;
                long bytes = 0;
                while (text.charAt(pos) != '"') {
                    int cp = character();
                    bytes += shortest ? 1 : utf8Length(cp);
                }
                pos++;
                return bytes;
            }
            if (c == '[') {
                pos++;
                boolean negated = text.charAt(pos) == '^';
                if (negated) {
                    pos++;
                }
                int highest = 0;
                while (text.charAt(pos) != ']') {
                    int from = character();
                    int to = from;
                    if (text.charAt(pos) == '-' && text.charAt(pos + 1) != ']') {
                        pos++;
                        to = character();
                    }
                    highest = Math.max(highest, Math.max(from, to));
                }
                pos++;
                return shortest ? 1 : negated ? 4 : utf8Length(highest);
            }
            if (c == '(') {
                pos++;
                long inner = alternatives();
                if (atEnd() || text.charAt(pos) != ')') {
                    throw new IllegalArgumentException("unclosed group in " + text);
                }
                pos++;
                return inner;
            }
            int start = pos;
            while (pos < text.length() && (Character.isLetterOrDigit(text.charAt(pos)) || text.charAt(pos) == '-')) {
                pos++;
            }
            if (start == pos) {
                throw new IllegalArgumentException("unexpected '" + c + "' in " + text);
            }
            return rule(text.substring(start, pos));
        }

        long repeated(long value) {
            if (atEnd()) {
                return value;
            }
            char c = text.charAt(pos);
            if (c == '?') {
                pos++;
                return shortest ? 0 : value;
            }
            if (c == '*' || c == '+') {
                pos++;
                if (shortest) {
                    return c == '*' ? 0 : value;
                }
                return value == 0 ? 0 : UNBOUNDED;
            }
            if (c == '{') {
                int close = text.indexOf('}', pos);
                String[] bounds = text.substring(pos + 1, close).split(",", -1);
                pos = close + 1;
                if (bounds.length == 1) {
                    return times(value, Long.parseLong(bounds[0].strip()));
                }
                if (shortest) {
                    return times(value, Long.parseLong(bounds[0].strip()));
                }
                return bounds[1].isBlank()
                        ? (value == 0 ? 0 : UNBOUNDED)
                        : times(value, Long.parseLong(bounds[1].strip()));
            }
            return value;
        }

        /** One character of a literal or class, escapes decoded. */
        int character() {
            char c = text.charAt(pos++);
            if (c != '\\') {
                int cp = Character.codePointAt(text, pos - 1);
                pos += Character.charCount(cp) - 1;
                return cp;
            }
            char e = text.charAt(pos++);
            return switch (e) {
                case 'x' -> hex(2);
                case 'u' -> hex(4);
                case 'U' -> hex(8);
                case 'n' -> '\n';
                case 'r' -> '\r';
                case 't' -> '\t';
                default -> e;
            };
        }

        int hex(int digits) {
            int value = Integer.parseInt(text.substring(pos, pos + digits), 16);
            pos += digits;
            return value;
        }
    }
}
