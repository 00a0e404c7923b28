package dev.oam.game.world;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;

/**
 * A parsed world path: keys and list indexes from the root. The text form is a dot path ({@code "party.0.name"});
 * {@code "party[0].name"}, {@code "party/0/name"}, a leading {@code "$."} or {@code "/"} are accepted too (small models
 * write them). {@code ""} (also {@code "$"}, {@code "/"}, {@code "."}) is the root. Any key can be written as a quoted
 * segment in brackets: {@code stats["hp.max"]}, {@code ['a/b']}, with JSON string escapes inside double quotes and
 * {@code \'} or {@code \\} inside single ones; that is how keys containing {@code . / [ ]}, empty keys and keys with
 * surrounding spaces are addressed. {@link #toString} quotes exactly those segments, so it always parses back to the
 * same path.
 */
public record WorldPath(List<String> segments) {
    public static final WorldPath ROOT = new WorldPath(List.of());

    public WorldPath {
        segments = List.copyOf(segments);
    }

    /** Parses a path; {@link WorldException} (naming {@code text}) when it is malformed. */
    public static WorldPath parse(String text) throws WorldException {
        String rest = text.strip();
        if (rest.equals("$") || rest.equals("/") || rest.equals(".")) {
            return ROOT;
        }
        if (rest.startsWith("$.") || rest.startsWith("$[")) {
            rest = rest.substring(1);
            if (rest.startsWith(".")) {
                rest = rest.substring(1);
            }
        } else if (rest.startsWith("/")) {
            rest = rest.substring(1);
        }
        if (rest.isEmpty()) {
            return ROOT;
        }
        List<String> segments = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        // After a closing bracket a separator or another bracket must follow: "a[0].b", "a[0][1]".
        boolean afterBracket = false;
        for (int i = 0; i < rest.length(); i++) {
            char c = rest.charAt(i);
            if (c == '.' || c == '/') {
                if (!afterBracket) {
                    if (current.isEmpty()) {
                        throw malformed(text);
                    }
                    segments.add(current.toString());
                    current.setLength(0);
                }
                afterBracket = false;
            } else if (c == '[') {
                if (!afterBracket) {
                    if (!current.isEmpty()) {
                        segments.add(current.toString());
                        current.setLength(0);
                    } else if (!segments.isEmpty()) {
                        throw malformed(text); // "a.[0]"
                    }
                }
                int open = i + 1;
                while (open < rest.length() && rest.charAt(open) == ' ') {
                    open++;
                }
                int close;
                if (open < rest.length() && (rest.charAt(open) == '"' || rest.charAt(open) == '\'')) {
                    StringBuilder key = new StringBuilder();
                    int end = quoted(rest, open, key, text);
                    close = end + 1;
                    while (close < rest.length() && rest.charAt(close) == ' ') {
                        close++;
                    }
                    if (close >= rest.length() || rest.charAt(close) != ']') {
                        throw malformed(text);
                    }
                    segments.add(key.toString());
                } else {
                    close = rest.indexOf(']', i + 1);
                    if (close < 0) {
                        throw malformed(text);
                    }
                    String inside = rest.substring(i + 1, close).strip();
                    if (inside.isEmpty() || inside.indexOf('[') >= 0) {
                        throw malformed(text);
                    }
                    segments.add(inside);
                }
                i = close;
                afterBracket = true;
            } else if (c == ']' || afterBracket) {
                throw malformed(text);
            } else {
                current.append(c);
            }
        }
        if (!afterBracket) {
            if (current.isEmpty()) {
                throw malformed(text); // a trailing separator
            }
            segments.add(current.toString());
        }
        return new WorldPath(segments);
    }

    /**
     * Reads the quoted key starting at {@code rest[start]} (a {@code "} or {@code '}) into {@code key}; returns the
     * index of the closing quote.
     */
    private static int quoted(String rest, int start, StringBuilder key, String text) throws WorldException {
        char quote = rest.charAt(start);
        for (int i = start + 1; i < rest.length(); i++) {
            char c = rest.charAt(i);
            if (c == quote) {
                return i;
            }
            if (c != '\\') {
                key.append(c);
                continue;
            }
            if (++i >= rest.length()) {
                break;
            }
            char escaped = rest.charAt(i);
            if (quote == '\'') {
                if (escaped != '\'' && escaped != '\\') {
                    key.append('\\'); // only \' and \\ are escapes in single quotes
                }
                key.append(escaped);
                continue;
            }
            switch (escaped) {
                case '"', '\\', '/' -> key.append(escaped);
                case 'b' -> key.append('\b');
                case 'f' -> key.append('\f');
                case 'n' -> key.append('\n');
                case 'r' -> key.append('\r');
                case 't' -> key.append('\t');
                case 'u' -> {
                    if (i + 4 >= rest.length()) {
                        throw malformed(text);
                    }
                    try {
                        key.append((char) Integer.parseInt(rest.substring(i + 1, i + 5), 16));
                    } catch (NumberFormatException e) {
                        throw malformed(text);
                    }
                    i += 4;
                }
                default -> throw malformed(text);
            }
        }
        throw malformed(text); // no closing quote
    }

    private static WorldException malformed(String text) {
        return new WorldException(
                text,
                "'" + text + "' is not a valid path. Use dot-separated keys and list indexes "
                        + "such as 'player.gold' or 'party.0.name', and a quoted key in brackets for a key "
                        + "with a dot, slash or "
                        + "bracket, such as 'stats[\"hp.max\"]'.");
    }

    public boolean isRoot() {
        return segments.isEmpty();
    }

    public int size() {
        return segments.size();
    }

    /** Whether this path equals {@code other} or lies inside it. */
    public boolean isWithin(WorldPath other) {
        return segments.size() >= other.segments.size()
                && segments.subList(0, other.segments.size()).equals(other.segments);
    }

    /** Whether one of the two paths contains the other (a change here concerns an observer there). */
    public boolean overlaps(WorldPath other) {
        return isWithin(other) || other.isWithin(this);
    }

    public WorldPath parent() {
        if (segments.isEmpty()) {
            throw new IllegalStateException("the root has no parent");
        }
        return new WorldPath(segments.subList(0, segments.size() - 1));
    }

    public WorldPath prefix(int length) {
        return new WorldPath(segments.subList(0, length));
    }

    public WorldPath child(String segment) {
        List<String> longer = new ArrayList<>(segments);
        longer.add(segment);
        return new WorldPath(longer);
    }

    public String last() {
        return segments.getLast();
    }

    /**
     * The canonical form ({@code ""} for the root): keys joined with dots, except that a key a dot path cannot hold
     * (empty, with {@code . / [ ]}, with surrounding spaces, or a first key {@code $}) is written {@code ["…"]} with
     * JSON string escapes. It parses back to this path.
     */
    @Override
    public String toString() {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < segments.size(); i++) {
            String segment = segments.get(i);
            if (needsQuotes(segment, i == 0)) {
                out.append('[').append(Json.write(TextNode.valueOf(segment))).append(']');
            } else {
                if (i > 0) {
                    out.append('.');
                }
                out.append(segment);
            }
        }
        return out.toString();
    }

    private static boolean needsQuotes(String segment, boolean first) {
        if (segment.isEmpty() || !segment.equals(segment.strip()) || (first && segment.equals("$"))) {
            return true;
        }
        for (int i = 0; i < segment.length(); i++) {
            char c = segment.charAt(i);
            if (c == '.' || c == '/' || c == '[' || c == ']') {
                return true;
            }
        }
        return false;
    }
}
