package dev.oam.model.llama.grammar;

/**
 * One generation's grammar state over a {@link TokenVocabulary}: which tokens may come next, and the state after one
 * was sampled. Made by {@link GrammarCompiler#start(String)}; used by one generation on one thread at a time (not
 * thread-safe), while the compiled grammar and its mask cache are shared by all.
 *
 * <p>The engine's loop per step: sample the unconstrained winner; if {@link #allows} it, take it; otherwise
 * {@link #fillMask} and sample among the allowed tokens. Then {@link #accept} the token. Stop when the token ends
 * generation, or when {@link #isComplete()}.
 */
public interface TokenConstraint {
    /** Whether {@code token} may come next: its whole piece continues the grammar, or it ends generation here. */
    boolean allows(int token);

    /**
     * Sets, in {@code mask} (bit {@code i} of {@code mask[i >>> 6]}, length at least {@code ceil(n_vocab / 64)}),
     * exactly the tokens {@link #allows} would accept, clearing every other bit. At least one bit is set while the
     * grammar is not complete (an end-of-generation token where the grammar may end).
     */
    void fillMask(long[] mask);

    /**
     * Advances past {@code token}.
     *
     * @throws IllegalArgumentException when {@link #allows} is false for it (the state is then unchanged)
     */
    void accept(int token);

    /** Whether the output so far is a whole sentence of the grammar. */
    boolean canEnd();

    /** Whether the output so far is a whole sentence and nothing can follow it: generation should stop. */
    boolean isComplete();

    /**
     * The fewest code points that still complete a sentence from here (0 when the output may end now), or
     * {@link Integer#MAX_VALUE} when unknown; constraints that cannot tell answer 0, so an engine never forces a
     * closing on their account.
     */
    default int stepsToEnd() {
        return 0;
    }

    /**
     * The text that must come next whatever the model chooses (JSON's punctuation and keys between two values), at most
     * {@code maxCodePoints} code points; "" when the next character is a choice, the grammar may end here, or the last
     * token ended inside a character. An engine can feed it to the model in one batch instead of sampling it.
     */
    default String forcedText(int maxCodePoints) {
        return "";
    }

    /** {@link #stepsToEnd()} after {@code token} (not taken), or {@link Integer#MAX_VALUE} when it is not allowed. */
    default int stepsToEndAfter(int token) {
        return 0;
    }
}
