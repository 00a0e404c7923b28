package dev.oam.model.llama;

import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A parser and backtracking matcher for the GBNF subset {@link Gbnf} emits: one rule per line,
 * literals, character classes (negated, ranges, escapes), rule references, groups, alternatives and
 * the postfixes {@code ? * + {m} {m,} {m,n}}. Parsing fails the way llama.cpp would refuse a grammar
 * (unknown escape, undefined rule, bad name, no root), which matters because llama.cpp then silently
 * generates without one.
 */
public final class GbnfChecker {
    private sealed interface Node {}

    private record Lit(int[] cps) implements Node {}

    private record Cls(boolean negated, int[] ranges) implements Node {}

    private record Ref(String name) implements Node {}

    private record Seq(List<Node> items) implements Node {}

    private record Alt(List<Node> options) implements Node {}

    private record Rep(Node node, int min, int max) implements Node {}

    private final Map<String, Node> rules = new LinkedHashMap<>();
    private int[] input = new int[0];
    private final Map<String, BitSet> memo = new HashMap<>();

    private GbnfChecker() {}

    public static GbnfChecker parse(dev.oam.model.llama.grammar.Grammar grammar) {
        return parse(grammar.gbnf());
    }

    public static GbnfChecker parse(String grammar) {
        GbnfChecker checker = new GbnfChecker();
        for (String line : grammar.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            int sep = line.indexOf(" ::= ");
            if (sep < 0) {
                throw new IllegalArgumentException("not a rule: " + line);
            }
            String name = line.substring(0, sep);
            if (!name.matches("[a-zA-Z0-9-]+")) {
                throw new IllegalArgumentException("bad rule name: " + name);
            }
            if (checker.rules.containsKey(name)) {
                throw new IllegalArgumentException("rule defined twice: " + name);
            }
            Parser parser = new Parser(line.substring(sep + 5));
            Node body = parser.alternatives();
            if (parser.pos != parser.text.length()) {
                throw new IllegalArgumentException("trailing text in rule " + name + " at " + parser.pos + ": " + line);
            }
            checker.rules.put(name, body);
        }
        if (!checker.rules.containsKey("root")) {
            throw new IllegalArgumentException("no root rule");
        }
        checker.rules.values().forEach(checker::checkRefs);
        return checker;
    }

    int ruleCount() {
        return rules.size();
    }

    private void checkRefs(Node node) {
        switch (node) {
            case Ref ref -> {
                if (!rules.containsKey(ref.name())) {
                    throw new IllegalArgumentException("undefined rule: " + ref.name());
                }
            }
            case Seq seq -> seq.items().forEach(this::checkRefs);
            case Alt alt -> alt.options().forEach(this::checkRefs);
            case Rep rep -> checkRefs(rep.node());
            default -> {}
        }
    }

    /**
     * {@link #accepts} for JSON written compactly in a test: a space is put after every {@code :} and {@code ,}
     * outside strings, as {@link Gbnf} writes JSON.
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
        return ends(new Ref("root"), 0).get(input.length);
    }

    /** Whether {@code text} is a prefix of some sentence (what a model could still be generating). */
    synchronized boolean acceptsPrefix(String text) {
        input = text.codePoints().toArray();
        memo.clear();
        prefixMode = true;
        try {
            return ends(new Ref("root"), 0).get(input.length);
        } finally {
            prefixMode = false;
        }
    }

    private boolean prefixMode;

    private BitSet ends(Node node, int pos) {
        BitSet out = new BitSet();
        if (prefixMode && pos == input.length) {
            out.set(pos); // the input ran out inside this node: a prefix
            return out;
        }
        switch (node) {
            case Lit lit -> {
                int[] cps = lit.cps();
                int i = 0;
                while (i < cps.length && pos + i < input.length && input[pos + i] == cps[i]) {
                    i++;
                }
                if (i == cps.length || (prefixMode && pos + i == input.length)) {
                    out.set(pos + i);
                }
            }
            case Cls cls -> {
                if (pos < input.length && cls.negated() != inRanges(cls.ranges(), input[pos])) {
                    out.set(pos + 1);
                }
            }
            case Ref ref -> {
                String key = ref.name() + "@" + pos;
                BitSet cached = memo.get(key);
                if (cached != null) {
                    return cached;
                }
                memo.put(key, new BitSet()); // no left recursion is emitted; guards against loops
                BitSet result = ends(rules.get(ref.name()), pos);
                memo.put(key, result);
                return result;
            }
            case Seq seq -> {
                BitSet current = new BitSet();
                current.set(pos);
                for (Node item : seq.items()) {
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
            case Alt alt -> alt.options().forEach(option -> out.or(ends(option, pos)));
            case Rep rep -> {
                BitSet current = new BitSet();
                current.set(pos);
                BitSet seen = new BitSet();
                if (rep.min() == 0) {
                    out.set(pos);
                }
                for (int count = 1; rep.max() < 0 || count <= rep.max(); count++) {
                    BitSet next = new BitSet();
                    for (int p = current.nextSetBit(0); p >= 0; p = current.nextSetBit(p + 1)) {
                        next.or(ends(rep.node(), p));
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

    private static boolean inRanges(int[] ranges, int cp) {
        for (int i = 0; i < ranges.length; i += 2) {
            if (cp >= ranges[i] && cp <= ranges[i + 1]) {
                return true;
            }
        }
        return false;
    }

    private static final class Parser {
        final String text;
        int pos;

        Parser(String text) {
            this.text = text;
        }

        Node alternatives() {
            List<Node> options = new ArrayList<>();
            options.add(sequence());
            while (peek() == '|') {
                pos++;
                options.add(sequence());
            }
            return options.size() == 1 ? options.get(0) : new Alt(options);
        }

        Node sequence() {
            List<Node> items = new ArrayList<>();
            while (true) {
                skipSpaces();
                if (pos >= text.length() || peek() == '|' || peek() == ')') {
                    break;
                }
                items.add(postfix(item()));
            }
            if (items.isEmpty()) {
                throw new IllegalArgumentException("empty alternative at " + pos + ": " + text);
            }
            return items.size() == 1 ? items.get(0) : new Seq(items);
        }

        Node item() {
            char c = text.charAt(pos);
            if (c == '"') {
                pos++;
                List<Integer> cps = new ArrayList<>();
                while (peekRaw() != '"') {
                    cps.add(character());
                }
                pos++;
                return new Lit(cps.stream().mapToInt(Integer::intValue).toArray());
            }
            if (c == '[') {
                pos++;
                boolean negated = peekRaw() == '^';
                if (negated) {
                    pos++;
                }
                List<Integer> ranges = new ArrayList<>();
                while (peekRaw() != ']') {
                    int lo = character();
                    int hi = lo;
                    if (peekRaw() == '-' && pos + 1 < text.length() && text.charAt(pos + 1) != ']') {
                        pos++;
                        hi = character();
                    }
                    ranges.add(lo);
                    ranges.add(hi);
                }
                pos++;
                return new Cls(
                        negated, ranges.stream().mapToInt(Integer::intValue).toArray());
            }
            if (c == '(') {
                pos++;
                Node inner = alternatives();
                skipSpaces();
                if (peekRaw() != ')') {
                    throw new IllegalArgumentException("missing ) at " + pos + ": " + text);
                }
                pos++;
                return inner;
            }
            int start = pos;
            while (pos < text.length() && (Character.isLetterOrDigit(text.charAt(pos)) || text.charAt(pos) == '-')) {
                pos++;
            }
            if (start == pos) {
                throw new IllegalArgumentException("unexpected '" + c + "' at " + pos + ": " + text);
            }
            return new Ref(text.substring(start, pos));
        }

        Node postfix(Node node) {
            Node current = node;
            while (pos < text.length()) {
                char c = text.charAt(pos);
                if (c == '?') {
                    current = new Rep(current, 0, 1);
                } else if (c == '*') {
                    current = new Rep(current, 0, -1);
                } else if (c == '+') {
                    current = new Rep(current, 1, -1);
                } else if (c == '{') {
                    int close = text.indexOf('}', pos);
                    String[] bounds = text.substring(pos + 1, close).split(",", -1);
                    int min = Integer.parseInt(bounds[0]);
                    int max = bounds.length == 1 ? min : bounds[1].isEmpty() ? -1 : Integer.parseInt(bounds[1]);
                    if (max >= 0 && max < min) {
                        throw new IllegalArgumentException("bad repetition at " + pos + ": " + text);
                    }
                    current = new Rep(current, min, max);
                    pos = close;
                } else {
                    break;
                }
                pos++;
            }
            return current;
        }

        int character() {
            if (pos >= text.length()) {
                throw new IllegalArgumentException("unterminated literal or class: " + text);
            }
            int cp = text.codePointAt(pos);
            if (cp != '\\') {
                pos += Character.charCount(cp);
                return cp;
            }
            char e = text.charAt(pos + 1);
            pos += 2;
            return switch (e) {
                case 'x' -> hex(2);
                case 'u' -> hex(4);
                case 'U' -> hex(8);
                case 't' -> '\t';
                case 'r' -> '\r';
                case 'n' -> '\n';
                case '\\', '"', '[', ']' -> e;
                default -> throw new IllegalArgumentException("unknown escape \\" + e + " in " + text);
            };
        }

        int hex(int digits) {
            int value = Integer.parseInt(text.substring(pos, pos + digits), 16);
            pos += digits;
            return value;
        }

        char peek() {
            skipSpaces();
            return pos < text.length() ? text.charAt(pos) : '\0';
        }

        char peekRaw() {
            if (pos >= text.length()) {
                throw new IllegalArgumentException("unterminated literal or class: " + text);
            }
            return text.charAt(pos);
        }

        void skipSpaces() {
            while (pos < text.length() && text.charAt(pos) == ' ') {
                pos++;
            }
        }
    }
}
