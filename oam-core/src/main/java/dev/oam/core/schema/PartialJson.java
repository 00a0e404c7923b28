package dev.oam.core.schema;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Reads the prefix of a JSON text that is still being generated as the most complete value it
 * implies: open strings that are values are closed, an unfinished key or literal is dropped, open
 * containers are closed. {@code {"line": "Aye, I've go} reads as {@code {"line": "Aye, I've go"}}.
 */
public final class PartialJson {
    private PartialJson() {}

    public static @Nullable JsonNode parse(String prefix) {
        String trimmed = prefix.strip();
        if (trimmed.isEmpty()) {
            return null;
        }
        try {
            return Json.parse(trimmed);
        } catch (Exception complete) {
            // not complete yet
        }
        List<String> candidates = candidates(trimmed);
        for (String candidate : candidates) {
            try {
                return Json.parse(candidate);
            } catch (Exception e) {
                // try a shorter one
            }
        }
        return null;
    }

    private static List<String> candidates(String text) {
        StringBuilder stack = new StringBuilder();
        List<int[]> cuts = new ArrayList<>(); // {position, stack length at that point}
        List<String> cutStacks = new ArrayList<>();
        boolean inString = false;
        boolean escape = false;
        boolean stringIsKey = false;
        int unicodeStart = -1; // where an unfinished backslash-u escape starts
        int unicodeDigits = 0;
        char last = 0; // last significant token: { [ , : v (value) k (key)
        int i = 0;
        int n = text.length();
        while (i < n) {
            char c = text.charAt(i);
            if (inString) {
                if (unicodeStart >= 0) {
                    unicodeDigits++;
                    if (unicodeDigits == 4) {
                        unicodeStart = -1;
                    }
                } else if (escape) {
                    escape = false;
                    if (c == 'u') {
                        unicodeStart = i - 1;
                        unicodeDigits = 0;
                    }
                } else if (c == '\\') {
                    escape = true;
                } else if (c == '"') {
                    inString = false;
                    last = stringIsKey ? 'k' : 'v';
                    if (!stringIsKey) {
                        cuts.add(new int[] {i + 1});
                        cutStacks.add(stack.toString());
                    }
                }
                i++;
                continue;
            }
            switch (c) {
                case '"' -> {
                    inString = true;
                    stringIsKey = stack.length() > 0
                            && stack.charAt(stack.length() - 1) == '{'
                            && (last == '{' || last == ',');
                }
                case '{', '[' -> {
                    stack.append(c);
                    last = c;
                    cuts.add(new int[] {i + 1});
                    cutStacks.add(stack.toString());
                }
                case '}', ']' -> {
                    if (stack.length() > 0) {
                        stack.setLength(stack.length() - 1);
                    }
                    last = 'v';
                    cuts.add(new int[] {i + 1});
                    cutStacks.add(stack.toString());
                }
                case ',', ':' -> last = c;
                default -> {
                    if (!Character.isWhitespace(c)) {
                        int start = i;
                        while (i + 1 < n && "{}[],: \t\r\n\"".indexOf(text.charAt(i + 1)) < 0) {
                            i++;
                        }
                        if (i + 1 < n) {
                            last = 'v';
                            cuts.add(new int[] {i + 1});
                            cutStacks.add(stack.toString());
                        } else if (start <= i) {
                            last = 'p'; // a literal or number that may still grow
                        }
                    }
                }
            }
            i++;
        }
        List<String> out = new ArrayList<>();
        if (inString && !stringIsKey) {
            String body = text;
            if (unicodeStart >= 0) {
                body = body.substring(0, unicodeStart);
            } else if (escape) {
                body = body.substring(0, body.length() - 1);
            }
            out.add(body + "\"" + closers(stack.toString()));
        }
        if (last == 'p') {
            out.add(text + closers(stack.toString()));
        }
        for (int k = cuts.size() - 1; k >= 0; k--) {
            String head = text.substring(0, cuts.get(k)[0]);
            out.add(head + closers(cutStacks.get(k)));
        }
        return out;
    }

    private static String closers(String stack) {
        StringBuilder out = new StringBuilder();
        for (int i = stack.length() - 1; i >= 0; i--) {
            out.append(stack.charAt(i) == '{' ? '}' : ']');
        }
        return out.toString();
    }
}
