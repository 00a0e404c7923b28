package dev.oam.model.llama.grammar;

import dev.oam.model.llama.gguf.GgufFile;
import java.nio.charset.StandardCharsets;
import java.util.BitSet;
import java.util.List;
import java.util.Set;

/**
 * A {@link TokenVocabulary} from a GGUF file's vocabulary, SentencePiece ({@code tokenizer.ggml.model} = {@code llama},
 * as Gemma and Llama 2 use) or byte-level BPE ({@code gpt2}, as SmolLM2, Llama 3 and Qwen use), without loading the
 * model: what llama.cpp's {@code llama_token_to_piece(special=false)} would give, computed from
 * {@code tokenizer.ggml.tokens} and {@code tokenizer.ggml.token_type}.
 *
 * <ul>
 *   <li>normal and user-defined tokens: their text as UTF-8, with SentencePiece's {@code ▁} (U+2581) as a space; a
 *       byte-level BPE token's normal text maps each character back to the byte GPT-2's byte-to-character table gave it
 *       (user-defined ones are plain UTF-8 there);
 *   <li>byte tokens ({@code <0xXX>}): that one byte;
 *   <li>control, unknown and unused tokens: control (never matched by a grammar);
 *   <li>end of generation: {@code tokenizer.ggml.eos_token_id}, {@code eot_token_id}, {@code eom_token_id} and the
 *       control tokens llama.cpp also treats as such by their text ({@code <end_of_turn>}, {@code <|eot_id|>},
 *       {@code <|im_end|>}, …).
 * </ul>
 */
public final class GgufVocabulary {
    private static final int NORMAL = 1;
    private static final int UNKNOWN = 2;
    private static final int CONTROL = 3;
    private static final int UNUSED = 5;
    private static final int BYTE = 6;
    private static final Set<String> END_TEXTS = Set.of(
            "<end_of_turn>",
            "<|eot_id|>",
            "<|eom_id|>",
            "<|im_end|>",
            "<|end|>",
            "<|endoftext|>",
            "<EOT>",
            "<|end_of_text|>",
            "</s>");

    private GgufVocabulary() {}

    /**
     * The vocabulary of {@code file}.
     *
     * @throws IllegalArgumentException when the file's tokenizer is not SentencePiece ({@code llama}), or a byte token
     *     is malformed
     */
    public static TokenVocabulary of(GgufFile file) {
        Object model = file.metadata().get("tokenizer.ggml.model");
        boolean byteLevel = "gpt2".equals(model);
        if (!"llama".equals(model) && !byteLevel) {
            throw new IllegalArgumentException("Model file " + file.path() + " has tokenizer '" + model
                    + "'; only SentencePiece ('llama') and byte-level BPE ('gpt2') vocabularies are read here");
        }
        List<String> tokens = file.tokens();
        List<?> types = file.metadata().get("tokenizer.ggml.token_type") instanceof List<?> list ? list : null;
        int n = tokens.size();
        byte[][] pieces = new byte[n][];
        BitSet control = new BitSet();
        BitSet end = new BitSet();
        for (int id = 0; id < n; id++) {
            String text = tokens.get(id);
            int type =
                    types != null && types.get(id) instanceof Long t ? t.intValue() : isByteToken(text) ? BYTE : NORMAL;
            switch (type) {
                case BYTE -> {
                    if (!isByteToken(text)) {
                        throw new IllegalArgumentException("token " + id + " is a byte token but reads '" + text + "'");
                    }
                    pieces[id] = new byte[] {(byte) Integer.parseInt(text, 3, 5, 16)};
                }
                case UNKNOWN, CONTROL, UNUSED -> {
                    pieces[id] = text.getBytes(StandardCharsets.UTF_8);
                    control.set(id);
                    if (END_TEXTS.contains(text)) {
                        end.set(id);
                    }
                }
                default ->
                    pieces[id] = byteLevel && type == NORMAL
                            ? byteLevelBytes(text)
                            : text.replace('\u2581', ' ').getBytes(StandardCharsets.UTF_8); // normal, user-defined
            }
        }
        for (String key :
                List.of("tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id")) {
            if (file.metadata().get(key) instanceof Long id && id >= 0 && id < n) {
                end.set(id.intValue());
                control.set(id.intValue());
            }
        }
        return new TokenVocabulary(pieces, control, end);
    }

    /**
     * GPT-2's table: the bytes {@code !}..{@code ~}, {@code ¡}..{@code ¬} and {@code ®}..{@code ÿ} stand for
     * themselves; the other 68 bytes, in order, for the characters from U+0100 on.
     */
    private static final int[] CHAR_TO_BYTE = byteLevelTable();

    private static int[] byteLevelTable() {
        int[] table = new int[0x100 + 68];
        java.util.Arrays.fill(table, -1);
        int next = 0x100;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            table[printable ? b : next++] = b;
        }
        return table;
    }

    private static byte[] byteLevelBytes(String text) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream(text.length());
        text.codePoints().forEach(cp -> {
            int b = cp < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[cp] : -1;
            if (b >= 0) {
                out.write(b);
            } else {
                byte[] raw = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8);
                out.write(raw, 0, raw.length); // not of the table: taken as text
            }
        });
        return out.toByteArray();
    }

    private static boolean isByteToken(String text) {
        return text.length() == 6
                && text.startsWith("<0x")
                && text.endsWith(">")
                && Character.digit(text.charAt(3), 16) >= 0
                && Character.digit(text.charAt(4), 16) >= 0;
    }
}
