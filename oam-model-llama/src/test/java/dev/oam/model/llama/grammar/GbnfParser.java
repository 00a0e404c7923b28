package dev.oam.model.llama.grammar;

import dev.oam.model.llama.grammar.Term.CharClass;
import dev.oam.model.llama.grammar.Term.CharClass.Span;
import dev.oam.model.llama.grammar.Term.Group;
import dev.oam.model.llama.grammar.Term.Literal;
import dev.oam.model.llama.grammar.Term.Repeat;
import dev.oam.model.llama.grammar.Term.RuleRef;
import dev.oam.model.llama.grammar.Term.Spelling;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads GBNF text into a {@link Grammar}, the tests' reader of grammars written by hand, with llama.cpp's syntax:
 * {@code name ::= alternatives}, rule names of {@code [a-zA-Z0-9-]}, string literals and character classes (negated,
 * ranges) with the escapes {@code \x..}, backslash-u with four hex digits, backslash-U with eight, {@code \t \r \n \\
 * \" \[ \] \-}, {@code .} for any character, groups, {@code |}, the postfixes {@code ? * + {m} {m,} {m,n}} and
 * {@code #} comments. A rule ends at a newline outside parentheses; newlines are allowed after {@code |} and inside
 * groups.
 *
 * <p>Stricter than llama.cpp in two ways, both to catch writer bugs rather than generate without a grammar: a rule
 * defined twice and a rule referenced but never defined are errors.
 */
public final class GbnfParser {

    /** The largest {@code {m,n}} bound accepted: repetitions are expanded into rules. */
    static final int MAX_REPEAT = 100_000;

    /** The deepest nesting of groups accepted (parsing and compiling recurse over it). */
    static final int MAX_NESTING = 256;

    private final String text;
    private int pos;
    private int depth;
    /** Every reference read, with where it starts. */
    private final List<RuleRef> refs = new ArrayList<>();

    private final List<Integer> positions = new ArrayList<>();

    private GbnfParser(String text) {
        this.text = text;
    }

    /**
     * The grammar of {@code text}, rules in definition order; printing it ({@link Grammar#gbnf()}) gives {@code text}
     * back when {@code text} is spelled as the printer spells.
     *
     * @throws IllegalArgumentException naming the cause and the line when {@code text} is not GBNF
     */
    public static Grammar parse(String text) {
        GbnfParser parser = new GbnfParser(text);
        Map<String, Term> rules = new LinkedHashMap<>();

        parser.space(true);
        while (parser.pos < text.length()) {
            int start = parser.pos;
            String name = parser.name();
            if (name.isEmpty()) {
                throw parser.error("expected a rule name");
            }
            parser.space(false);
            if (!text.startsWith("::=", parser.pos)) {
                throw parser.error("expected ::= after rule name '" + name + "'");
            }
            parser.pos += 3;
            parser.space(true);
            Term body = parser.alternatives(false);
            if (parser.pos < text.length() && text.charAt(parser.pos) != '\n' && text.charAt(parser.pos) != '\r') {
                throw parser.error("expected the end of rule '" + name + "'");
            }
            if (rules.putIfAbsent(name, body) != null) {
                parser.pos = start;
                throw parser.error("rule '" + name + "' is defined twice");
            }
            parser.space(true);
        }
        if (!rules.containsKey(Grammar.ROOT)) {
            throw new IllegalArgumentException("grammar has no 'root' rule");
        }
        for (int i = 0; i < parser.refs.size(); i++) {
            if (!rules.containsKey(parser.refs.get(i).name())) {
                throw error(
                        text,
                        parser.positions.get(i),
                        "undefined rule '" + parser.refs.get(i).name() + "'");
            }
        }
        return Grammar.of(rules);
    }

    private Term alternatives(boolean nested) {
        List<Term> options = new ArrayList<>();
        options.add(sequence(nested));
        while (pos < text.length() && text.charAt(pos) == '|') {
            pos++;
            space(true);
            options.add(sequence(nested));
        }
        return options.size() == 1 ? options.get(0) : new Term.Alternatives(options);
    }

    private Term sequence(boolean nested) {
        List<Term> items = new ArrayList<>();
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == '|' || c == ')' || c == '\n' || c == '\r') {
                break;
            }
            Term item = item(nested);
            items.add(postfix(item, nested));
        }
        return items.size() == 1 ? items.get(0) : new Term.Sequence(items);
    }

    private Term item(boolean nested) {
        char c = text.charAt(pos);
        Term node;
        if (c == '"') {
            pos++;
            StringBuilder literal = new StringBuilder();
            while (true) {
                if (pos >= text.length() || text.charAt(pos) == '\n') {
                    throw error("unterminated string literal");
                }
                if (text.charAt(pos) == '"') {
                    break;
                }
                literal.appendCodePoint(character());
            }
            pos++;
            node = new Literal(literal.toString());
        } else if (c == '[') {
            pos++;
            boolean negated = pos < text.length() && text.charAt(pos) == '^';
            if (negated) {
                pos++;
            }
            List<Span> spans = new ArrayList<>();
            while (true) {
                if (pos >= text.length() || text.charAt(pos) == '\n') {
                    throw error("unterminated character class");
                }
                if (text.charAt(pos) == ']') {
                    break;
                }
                int lo = character();
                if (pos + 1 < text.length() && text.charAt(pos) == '-' && text.charAt(pos + 1) != ']') {
                    pos++;
                    int hi = character();
                    if (hi < lo) {
                        throw error("character range is backwards");
                    }
                    spans.add(Span.range(lo, hi));
                } else {
                    spans.add(Span.of(lo));
                }
            }
            pos++;
            if (spans.isEmpty() && !negated) {
                throw error("empty character class");
            }
            node = new CharClass(negated, spans);
        } else if (c == '.') {
            pos++;
            node = new CharClass(true, List.of());
        } else if (c == '(') {
            if (++depth > MAX_NESTING) {
                throw error("groups nested deeper than " + MAX_NESTING);
            }
            pos++;
            space(true);
            node = new Group(alternatives(true));
            depth--;
            if (pos >= text.length() || text.charAt(pos) != ')') {
                throw error("expected ')'");
            }
            pos++;
        } else if (isNameChar(c)) {
            int at = pos;
            RuleRef ref = new RuleRef(name());
            refs.add(ref);
            positions.add(at);
            node = ref;
        } else {
            throw error("unexpected '" + printable(c) + "'");
        }
        space(nested);
        return node;
    }

    private Term postfix(Term item, boolean nested) {
        Term node = item;
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == '?' || c == '*' || c == '+') {
                pos++;
                node = new Repeat(node, c == '+' ? 1 : 0, c == '?' ? 1 : -1, Spelling.OPERATOR);
            } else if (c == '{') {
                pos++;
                space(nested);
                int min = number();
                int max = min;
                boolean bounds = false;
                space(nested);
                if (pos < text.length() && text.charAt(pos) == ',') {
                    bounds = true;
                    pos++;
                    space(nested);
                    max = pos < text.length() && Character.isDigit(text.charAt(pos)) ? number() : -1;
                    space(nested);
                }
                if (pos >= text.length() || text.charAt(pos) != '}') {
                    throw error("expected '}' to close a repetition");
                }
                pos++;
                if (max >= 0 && max < min) {
                    throw error("repetition {" + min + "," + max + "} has its maximum below its minimum");
                }
                node = new Repeat(node, min, max, bounds ? Spelling.BOUNDS : Spelling.COUNT);
            } else {
                break;
            }
            space(nested);
        }
        return node;
    }

    private int number() {
        int start = pos;
        while (pos < text.length() && Character.isDigit(text.charAt(pos)) && pos - start < 7) {
            pos++;
        }
        if (start == pos) {
            throw error("expected a number in a repetition");
        }
        int value = Integer.parseInt(text, start, pos, 10);
        if (value > MAX_REPEAT) {
            throw error("repetition bound " + value + " is above " + MAX_REPEAT);
        }
        return value;
    }

    private String name() {
        int start = pos;
        while (pos < text.length() && isNameChar(text.charAt(pos))) {
            pos++;
        }
        return text.substring(start, pos);
    }

    private static boolean isNameChar(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    }

    private int character() {
        int cp = text.codePointAt(pos);
        if (cp != '\\') {
            pos += Character.charCount(cp);
            return cp;
        }
        if (pos + 1 >= text.length()) {
            throw error("escape at the end of the text");
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
            case '\\', '"', '[', ']', '-' -> e;
            default -> {
                pos -= 2;
                throw error("unknown escape '\\" + printable(e) + "'");
            }
        };
    }

    private int hex(int digits) {
        int value = 0;
        for (int i = 0; i < digits; i++) {
            int d = pos < text.length() ? Character.digit(text.charAt(pos), 16) : -1;
            if (d < 0) {
                throw error("expected " + digits + " hex digits in an escape");
            }
            value = value * 16 + d;
            pos++;
        }
        if (value < 0 || value > Character.MAX_CODE_POINT) {
            throw error("escape " + Integer.toHexString(value) + " is above U+10FFFF (as hex)");
        }
        return value;
    }

    /** Skips spaces, tabs and comments, and newlines too when {@code newlines}. */
    private void space(boolean newlines) {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
                pos++;
            } else if (c == '#') {
                while (pos < text.length() && text.charAt(pos) != '\n' && text.charAt(pos) != '\r') {
                    pos++;
                }
            } else {
                break;
            }
        }
    }

    private IllegalArgumentException error(String message) {
        return error(text, pos, message);
    }

    /** {@code message} with the line and column of {@code at} and the line's text. */
    static IllegalArgumentException error(String text, int at, String message) {
        int lineStart = text.lastIndexOf('\n', Math.max(0, at - 1)) + 1;
        if (at == 0) {
            lineStart = 0;
        }
        int lineEnd = text.indexOf('\n', at);
        String line = text.substring(lineStart, lineEnd < 0 ? text.length() : lineEnd);
        int lineNumber = 1;
        for (int i = 0; i < lineStart; i++) {
            if (text.charAt(i) == '\n') {
                lineNumber++;
            }
        }
        if (line.length() > 120) {
            line = line.substring(0, 120) + "…";
        }
        return new IllegalArgumentException(
                "GBNF: " + message + " at line " + lineNumber + ", column " + (at - lineStart + 1) + ": " + line);
    }

    private static String printable(char c) {
        return c >= 0x20 && c < 0x7F ? String.valueOf(c) : String.format("\\x%02X", (int) c);
    }
}
