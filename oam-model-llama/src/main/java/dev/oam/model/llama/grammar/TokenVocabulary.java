package dev.oam.model.llama.grammar;

import java.util.Arrays;
import java.util.BitSet;
import java.util.Objects;

/**
 * A model's vocabulary as a grammar sees it: the bytes each token id decodes to (as llama.cpp's
 * {@code llama_token_to_piece(vocab, id, buf, n, 0, special=false)} gives them: SPM's {@code ▁} already a space, byte
 * tokens {@code <0xXX>} already raw bytes), which ids are control or special tokens (they never match a grammar), and
 * which ids end generation (allowed only where the grammar may end).
 *
 * <p>Immutable. Built once per model; the arrays are copied in and never handed out.
 */
public final class TokenVocabulary {
    private final byte[][] pieces;
    private final BitSet control;
    private final BitSet endOfGeneration;

    /**
     * @param pieces the bytes of token {@code i} at index {@code i}; a control token's entry is ignored
     * @param control ids that are control or special tokens (never produced under a grammar)
     * @param endOfGeneration ids that end generation (EOS, EOT, ...); each must also be in {@code control}
     */
    public TokenVocabulary(byte[][] pieces, BitSet control, BitSet endOfGeneration) {
        Objects.requireNonNull(pieces, "pieces");
        this.pieces = new byte[pieces.length][];
        for (int i = 0; i < pieces.length; i++) {
            this.pieces[i] =
                    Objects.requireNonNull(pieces[i], "pieces[" + i + "]").clone();
        }
        if (control.length() > pieces.length || endOfGeneration.length() > pieces.length) {
            throw new IllegalArgumentException("a token id is outside the vocabulary of " + pieces.length);
        }
        this.control = (BitSet) control.clone();
        this.endOfGeneration = (BitSet) endOfGeneration.clone();
        this.control.or(endOfGeneration);
    }

    /** Number of token ids ({@code n_vocab}). */
    public int size() {
        return pieces.length;
    }

    /** A copy of the bytes of {@code token}. */
    public byte[] piece(int token) {
        return pieces[token].clone();
    }

    /** Length in bytes of {@code token}'s piece (no copy). */
    public int pieceLength(int token) {
        return pieces[token].length;
    }

    /** Byte {@code index} of {@code token}'s piece (no copy). */
    public byte pieceByte(int token, int index) {
        return pieces[token][index];
    }

    public boolean isControl(int token) {
        return control.get(token);
    }

    public boolean isEndOfGeneration(int token) {
        return endOfGeneration.get(token);
    }

    @Override
    public String toString() {
        return "TokenVocabulary[" + pieces.length + " tokens, " + control.cardinality() + " control, eog "
                + endOfGeneration + "]";
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof TokenVocabulary v
                && Arrays.deepEquals(pieces, v.pieces)
                && control.equals(v.control)
                && endOfGeneration.equals(v.endOfGeneration);
    }

    @Override
    public int hashCode() {
        return Arrays.deepHashCode(pieces) * 31 + control.hashCode();
    }
}
