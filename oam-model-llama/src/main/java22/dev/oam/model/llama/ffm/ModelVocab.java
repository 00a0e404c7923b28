package dev.oam.model.llama.ffm;

import dev.oam.model.llama.grammar.TokenVocabulary;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.BitSet;

/** A loaded model's vocabulary as llama.cpp holds it: its size, its end-of-generation and control tokens, pieces. */
final class ModelVocab {
    final LlamaNative api;
    /** The {@code llama_vocab} pointer. */
    final MemorySegment vocab;

    final int size;
    private final BitSet endOfGeneration = new BitSet();

    ModelVocab(LlamaNative api, MemorySegment model) {
        this.api = api;
        try {
            this.vocab = (MemorySegment) api.modelGetVocab.invokeExact(model);
        } catch (Throwable e) {
            throw LlamaNative.failed("llama_model_get_vocab", e);
        }
        this.size = api.nTokens(vocab);
        for (int t = 0; t < size; t++) {
            if (api.isEog(vocab, t)) {
                endOfGeneration.set(t);
            }
        }
    }

    boolean endsGeneration(int token) {
        return endOfGeneration.get(token);
    }

    /** A copy of the end-of-generation tokens. */
    BitSet endOfGeneration() {
        return (BitSet) endOfGeneration.clone();
    }

    boolean isControl(int token) {
        return api.isControl(vocab, token);
    }

    /** The bytes of {@code token} as text shows it (not special), using {@code buffer} when it fits. Thread-safe. */
    byte[] piece(int token, MemorySegment buffer) {
        return api.piece(vocab, token, false, buffer);
    }

    /** {@code llama_tokenize}; thread-safe. */
    int[] tokenize(String text, boolean addSpecial, boolean parseSpecial) {
        return api.tokenize(vocab, text, addSpecial, parseSpecial);
    }

    /**
     * The vocabulary as a Java grammar sees it: each token's bytes from {@code llama_token_to_piece(special=false)}
     * (SPM's space marker and byte tokens already resolved), control tokens and end-of-generation tokens flagged. Built
     * on each call (a 262k vocabulary takes a moment): the grammar compiler keeps it.
     */
    TokenVocabulary forGrammars() {
        byte[][] pieces = new byte[size][];
        BitSet control = new BitSet(size);
        try (Arena local = Arena.ofConfined()) {
            MemorySegment buffer = local.allocate(256);
            for (int t = 0; t < size; t++) {
                boolean isControl = api.isControl(vocab, t) || endOfGeneration.get(t);
                if (isControl) {
                    control.set(t);
                }
                pieces[t] = isControl ? new byte[0] : api.piece(vocab, t, false, buffer);
            }
        }
        return new TokenVocabulary(pieces, control, endOfGeneration);
    }
}
