package dev.oam.testing.gguf;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.SequencedSet;

/**
 * The SentencePiece vocabulary of every generated model: the pieces, scores and token types, in id order (the order
 * {@link TinyGguf} documents). It does not depend on the model's settings.
 */
record TinyVocabulary(List<String> pieces, float[] scores, int[] types) {
    static final String SPACE = "\u2581";

    /** The words whose every prefix is a piece, so each is reachable as one token. */
    static final List<String> WORDS = List.of(
            // tools, arguments and answer keys the tests use
            "attack",
            "flee",
            "beg",
            "trade",
            "open_gate",
            "check_inventory",
            "gate_id",
            "item",
            "name",
            "arguments",
            "tool_calls",
            "reasoning",
            "choice",
            "answer",
            "emotion",
            "line",
            "neutral",
            "happy",
            "angry",
            "sad",
            "afraid",
            "surprised",
            // JSON and chat words
            "true",
            "false",
            "null",
            "type",
            "object",
            "string",
            "number",
            "content",
            "role",
            "user",
            "assistant",
            "system",
            "tool",
            "message",
            "text",
            "id",
            "value",
            "result",
            "error",
            // the game
            "hello",
            "gold",
            "door",
            "guard",
            "player",
            "goblin",
            "sword",
            "shield",
            "potion",
            "key",
            "gate",
            "king",
            "queen",
            "village",
            "castle",
            "forest",
            "dragon",
            "merchant",
            "price",
            "coin",
            "coins",
            "buy",
            "sell",
            "quest",
            "enemy",
            "friend",
            "world",
            "state",
            "health",
            "damage",
            "run",
            "hide",
            "fight",
            "talk",
            "wait",
            "look",
            "find",
            "open",
            "close",
            "inventory",
            "weapon",
            "food",
            "bread",
            "tavern",
            "road",
            "north",
            "south",
            "night",
            "good",
            "bad",
            "old",
            "new",
            // small words
            "yes",
            "no",
            "the",
            "should",
            "and",
            "or",
            "to",
            "of",
            "in",
            "is",
            "are",
            "you",
            "it",
            "we",
            "my",
            "your",
            "this",
            "that",
            "what",
            "where",
            "who",
            "not",
            "can",
            "will",
            "have",
            "do",
            "go",
            "give",
            "take",
            "want",
            "need",
            "know",
            "see",
            "say",
            "help",
            "please",
            "thank",
            "here",
            "now",
            "ok",
            "hi",
            "sir");

    private static final List<String> EXTRA_PIECES = List.of(
            "{\"",
            "\":",
            "\",",
            "\"}",
            SPACE + "\"",
            "\":" + SPACE + "\"",
            "\"," + SPACE + "\"",
            "\n",
            "\n\n",
            SPACE + SPACE,
            "é",
            "ß",
            "€",
            "ü",
            "café",
            SPACE + "café");

    private static final int TYPE_NORMAL = 1;
    private static final int TYPE_UNKNOWN = 2;
    private static final int TYPE_CONTROL = 3;
    private static final int TYPE_BYTE = 6;

    /** The one vocabulary, built once. */
    static final TinyVocabulary INSTANCE = build();

    private static TinyVocabulary build() {
        SequencedSet<String> specials =
                new LinkedHashSet<>(List.of("<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"));
        List<String> pieces = new ArrayList<>(specials);
        for (int b = 0; b < 256; b++) {
            pieces.add(String.format("<0x%02X>", b));
        }
        SequencedSet<String> normal = new LinkedHashSet<>();
        normal.add(SPACE);
        for (char c = '!'; c <= '~'; c++) {
            normal.add(String.valueOf(c));
        }
        for (char c = 'a'; c <= 'z'; c++) {
            normal.add(SPACE + c);
        }
        for (char c = 'A'; c <= 'Z'; c++) {
            normal.add(SPACE + c);
        }
        for (char c = '0'; c <= '9'; c++) {
            normal.add(SPACE + c);
        }
        for (String word : WORDS) {
            addPrefixes(normal, word);
            addPrefixes(normal, SPACE + word);
        }
        for (String piece : EXTRA_PIECES) {
            // SPM only merges pairs whose concatenation is a piece, so longer pieces need their prefixes
            addPrefixes(normal, piece);
            normal.add(piece);
        }
        int first = pieces.size();
        pieces.addAll(normal);
        float[] scores = new float[pieces.size()];
        int[] types = new int[pieces.size()];
        types[0] = TYPE_UNKNOWN;
        for (int id = 1; id < specials.size(); id++) {
            types[id] = TYPE_CONTROL;
        }
        for (int id = specials.size(); id < first; id++) {
            types[id] = TYPE_BYTE;
        }
        for (int id = first; id < pieces.size(); id++) {
            types[id] = TYPE_NORMAL;
            int rank = id - first;
            String piece = pieces.get(id);
            scores[id] = (float) (piece.codePointCount(0, piece.length()) - rank * 1e-4);
        }
        return new TinyVocabulary(List.copyOf(pieces), scores, types);
    }

    private static void addPrefixes(SequencedSet<String> into, String word) {
        int[] cps = word.codePoints().toArray();
        for (int length = 2; length <= cps.length; length++) {
            into.add(new String(cps, 0, length));
        }
    }
}
