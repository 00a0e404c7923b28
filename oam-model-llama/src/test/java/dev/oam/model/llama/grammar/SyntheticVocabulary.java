package dev.oam.model.llama.grammar;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * A small vocabulary shaped like a real one: every single byte (as SPM's {@code <0xXX>} tokens give them), JSON pieces,
 * words with a leading space, pieces with quotes and backslashes, multi-byte characters whole and cut mid-character,
 * one piece twice under two ids, an empty piece, and control tokens of which two end generation. Deterministic for a
 * seed.
 */
public final class SyntheticVocabulary {
    /** {@code <eos>}: control, ends generation. */
    public static final int EOS = 0;
    /** {@code <end_of_turn>}: control, ends generation. */
    public static final int END_OF_TURN = 1;
    /** {@code <start_of_turn>}: control only. */
    public static final int START_OF_TURN = 2;
    /** A non-control token with an empty piece. */
    public static final int EMPTY = 3;
    /** Token {@code BYTE + b} is the single byte {@code b}. */
    public static final int BYTE = 4;

    private SyntheticVocabulary() {}

    /**
     * Only short pieces: the control tokens, every byte, and {@code randomPieces} pieces of at most 4 bytes (some cut
     * mid-character), so grammars with longer repetitions than any piece exercise the merged mask keys.
     */
    public static TokenVocabulary shortPieces(long seed, int randomPieces) {
        List<byte[]> pieces = new ArrayList<>();
        pieces.add("<eos>".getBytes(StandardCharsets.UTF_8));
        pieces.add("<end_of_turn>".getBytes(StandardCharsets.UTF_8));
        pieces.add("<start_of_turn>".getBytes(StandardCharsets.UTF_8));
        pieces.add(new byte[0]);
        for (int b = 0; b < 256; b++) {
            pieces.add(new byte[] {(byte) b});
        }
        Random random = new Random(seed);
        String alphabet = "abcdefghijklmnopqrstuvwxyz _-.,:{}[]\"\\0123456789é€🐉";
        int[] cps = alphabet.codePoints().toArray();
        for (int i = 0; i < randomPieces; i++) {
            StringBuilder s = new StringBuilder();
            int length = 1 + random.nextInt(3);
            for (int k = 0; k < length; k++) {
                s.appendCodePoint(cps[random.nextInt(cps.length)]);
            }
            byte[] bytes = s.toString().getBytes(StandardCharsets.UTF_8);
            pieces.add(java.util.Arrays.copyOf(bytes, Math.min(bytes.length, 1 + random.nextInt(4))));
        }
        return vocabulary(pieces);
    }

    private static TokenVocabulary vocabulary(List<byte[]> pieces) {
        BitSet control = new BitSet();
        control.set(EOS, START_OF_TURN + 1);
        BitSet eog = new BitSet();
        eog.set(EOS);
        eog.set(END_OF_TURN);
        return new TokenVocabulary(pieces.toArray(byte[][]::new), control, eog);
    }

    public static TokenVocabulary create(long seed, int randomPieces) {
        List<byte[]> pieces = new ArrayList<>();
        pieces.add("<eos>".getBytes(StandardCharsets.UTF_8));
        pieces.add("<end_of_turn>".getBytes(StandardCharsets.UTF_8));
        pieces.add("<start_of_turn>".getBytes(StandardCharsets.UTF_8));
        pieces.add(new byte[0]);
        for (int b = 0; b < 256; b++) {
            pieces.add(new byte[] {(byte) b});
        }
        Set<String> texts = new LinkedHashSet<>(List.of(
                "{\"",
                "\":\"",
                "\",\"",
                "\"}",
                "}}",
                "]}",
                "\":",
                ",\"",
                "\":{",
                "{\"tool_calls\":[",
                "tool",
                "_calls",
                "name",
                "arguments",
                "\"name\":\"",
                "open_gate",
                "gate",
                "north",
                "south",
                "reasoning",
                "choice",
                "confidence",
                "fight",
                "flee",
                "true",
                "false",
                "null",
                "12",
                "100",
                "0.",
                "0",
                "-",
                ".5",
                " the",
                " a",
                " gate",
                "Hello",
                " world",
                "\\\"",
                "\\\\",
                "\\n",
                "\\u00",
                "\\u",
                "a\"",
                "\"a",
                "\",",
                "é",
                "café",
                " café",
                "🐉",
                "漢字",
                "—",
                "x",
                "xx",
                "xxxx",
                "xxxxxxxx",
                "  ",
                "\n",
                "\n\n",
                "\t",
                "[",
                "[{",
                "}]",
                "},{",
                "\":[",
                "\":true",
                "\":false",
                "e\"",
                "\"\"",
                "s",
                "ing"));
        for (String text : texts) {
            pieces.add(text.getBytes(StandardCharsets.UTF_8));
        }
        byte[] dragon = "🐉".getBytes(StandardCharsets.UTF_8);
        byte[] e = "é".getBytes(StandardCharsets.UTF_8);
        byte[] kanji = "漢".getBytes(StandardCharsets.UTF_8);
        pieces.add(new byte[] {dragon[0], dragon[1]});
        pieces.add(new byte[] {dragon[2], dragon[3]});
        pieces.add(new byte[] {dragon[1], dragon[2], dragon[3]});
        pieces.add(new byte[] {'a', e[0]});
        pieces.add(new byte[] {e[1], 'b'});
        pieces.add(new byte[] {'"', kanji[0], kanji[1]});
        pieces.add(new byte[] {kanji[2], '"'});
        pieces.add("gate".getBytes(StandardCharsets.UTF_8)); // the same piece as an earlier id
        Random random = new Random(seed);
        String alphabet = "abcdefghijklmnopqrstuvwxyz _-.,:;{}[]\"\\0123456789éü€🐉\n";
        int[] cps = alphabet.codePoints().toArray();
        for (int i = 0; i < randomPieces; i++) {
            StringBuilder s = new StringBuilder();
            int length = 1 + random.nextInt(6);
            for (int k = 0; k < length; k++) {
                s.appendCodePoint(cps[random.nextInt(cps.length)]);
            }
            byte[] bytes = s.toString().getBytes(StandardCharsets.UTF_8);
            if (random.nextInt(8) == 0 && bytes.length > 1) { // cut mid-character now and then
                bytes = java.util.Arrays.copyOf(bytes, 1 + random.nextInt(bytes.length - 1));
            }
            pieces.add(bytes);
        }
        return vocabulary(pieces);
    }
}
