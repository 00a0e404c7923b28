package dev.oam.model.llama.grammar;

import dev.oam.model.llama.grammar.Term.Alternatives;
import dev.oam.model.llama.grammar.Term.CharClass;
import dev.oam.model.llama.grammar.Term.Group;
import dev.oam.model.llama.grammar.Term.Literal;
import dev.oam.model.llama.grammar.Term.Repeat;
import dev.oam.model.llama.grammar.Term.RuleRef;
import dev.oam.model.llama.grammar.Term.Sequence;

/**
 * Writes terms as llama.cpp's GBNF: items separated by one space, options by {@code " | "}; in literals every
 * non-printable or non-ASCII code point escaped ({@code \xHH} below U+0100, then backslash-u with four and backslash-U
 * with eight hex digits); in classes the same, except that tab, carriage return and line feed are {@code \t \r \n},
 * {@code \xHH} is for ASCII only, a quote stays bare, and {@code [} is escaped only in a class that also holds
 * {@code ]}.
 */
final class GbnfPrinter {
    private GbnfPrinter() {}

    static void print(Term term, StringBuilder out) {
        switch (term) {
            case Literal l -> literal(l.text(), out);
            case CharClass c -> charClass(c, out);
            case RuleRef r -> out.append(r.name());
            case Sequence s -> {
                for (int i = 0; i < s.items().size(); i++) {
                    if (i > 0) {
                        out.append(' ');
                    }
                    print(s.items().get(i), out);
                }
            }
            case Alternatives a -> {
                for (int i = 0; i < a.options().size(); i++) {
                    if (i > 0) {
                        out.append(" | ");
                    }
                    print(a.options().get(i), out);
                }
            }
            case Repeat r -> {
                print(r.term(), out);
                switch (r.spelling()) {
                    case OPERATOR -> out.append(r.max() == 1 ? '?' : r.min() == 0 ? '*' : '+');
                    case COUNT -> out.append('{').append(r.min()).append('}');
                    case BOUNDS -> {
                        out.append('{').append(r.min()).append(',');
                        if (r.max() >= 0) {
                            out.append(r.max());
                        }
                        out.append('}');
                    }
                }
            }
            case Group g -> {
                out.append('(');
                print(g.term(), out);
                out.append(')');
            }
        }
    }

    private static void literal(String text, StringBuilder out) {
        out.append('"');
        text.codePoints().forEach(cp -> {
            switch (cp) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (cp >= 0x20 && cp < 0x7F) {
                        out.appendCodePoint(cp);
                    } else {
                        escape(cp, out);
                    }
                }
            }
        });
        out.append('"');
    }

    private static void charClass(CharClass c, StringBuilder out) {
        boolean closes = c.spans().stream().anyMatch(s -> s.first() == ']' || s.last() == ']');
        out.append(c.negated() ? "[^" : "[");
        for (CharClass.Span span : c.spans()) {
            classChar(span.first(), closes, out);
            if (span.range()) {
                out.append('-');
                classChar(span.last(), closes, out);
            }
        }
        out.append(']');
    }

    private static void classChar(int cp, boolean closes, StringBuilder out) {
        switch (cp) {
            case '\\' -> out.append("\\\\");
            case ']' -> out.append("\\]");
            case '[' -> out.append(closes ? "\\[" : "[");
            case '\t' -> out.append("\\t");
            case '\r' -> out.append("\\r");
            case '\n' -> out.append("\\n");
            default -> {
                if (cp >= 0x20 && cp < 0x7F) {
                    out.appendCodePoint(cp);
                } else if (cp < 0x80) {
                    escape(cp, out);
                } else {
                    out.append(cp < 0x10000 ? String.format("\\u%04X", cp) : String.format("\\U%08X", cp));
                }
            }
        }
    }

    private static void escape(int cp, StringBuilder out) {
        if (cp < 0x100) {
            out.append(String.format("\\x%02X", cp));
        } else if (cp < 0x10000) {
            out.append(String.format("\\u%04X", cp));
        } else {
            out.append(String.format("\\U%08X", cp));
        }
    }
}
