package dev.oam.game.world;

import java.util.ArrayList;
import java.util.List;

/**
 * A parsed world path: keys and list indexes from the root. The text form is a dot path
 * ({@code "party.0.name"}); {@code "party[0].name"}, {@code "party/0/name"}, a leading {@code "$."} or
 * {@code "/"} are accepted too (small models write them). {@code ""} (also {@code "$"}, {@code "/"},
 * {@code "."}) is the root. Keys containing {@code . / [ ]} cannot be addressed by a path.
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
                int close = rest.indexOf(']', i + 1);
                if (close < 0) {
                    throw malformed(text);
                }
                String inside = rest.substring(i + 1, close).strip();
                if (inside.length() >= 2 && (inside.startsWith("'") && inside.endsWith("'")
                        || inside.startsWith("\"") && inside.endsWith("\""))) {
                    inside = inside.substring(1, inside.length() - 1);
                }
                if (inside.isEmpty() || inside.indexOf('[') >= 0) {
                    throw malformed(text);
                }
                segments.add(inside);
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

    private static WorldException malformed(String text) {
        return new WorldException(text, "'" + text + "' is not a valid path. Use dot-separated keys and list indexes "
                + "such as 'player.gold' or 'party.0.name'.");
    }

    public boolean isRoot() {
        return segments.isEmpty();
    }

    public int size() {
        return segments.size();
    }

    /** Whether this path equals {@code other} or lies inside it. */
    public boolean isWithin(WorldPath other) {
        return segments.size() >= other.segments.size() && segments.subList(0, other.segments.size()).equals(other.segments);
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

    /** The canonical dot form ({@code ""} for the root). */
    @Override
    public String toString() {
        return String.join(".", segments);
    }
}
