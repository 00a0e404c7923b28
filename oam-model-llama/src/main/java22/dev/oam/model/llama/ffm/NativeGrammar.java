package dev.oam.model.llama.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.GrammarCompiler;
import dev.oam.model.llama.grammar.TokenConstraint;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.BitSet;

/**
 * GBNF through llama.cpp's own grammar sampler ({@code llama_sampler_init_grammar}), behind the Java
 * {@link TokenConstraint} interface: the FFM engine's explicit fallback ({@code OAM_LLAMA_GRAMMAR=native}) and the
 * oracle of {@code FfmGrammarOracleTest}; the default is the Java compiler of {@code dev.oam.model.llama.grammar}. It
 * matches control tokens by their text (llama.cpp's pieces with special=true), which the Java compiler never allows.
 * The cost is llama.cpp's: a single-token check is microseconds, a full mask is one {@code llama_sampler_apply} over
 * the whole vocabulary (tens of milliseconds on a vocabulary of 262k tokens), paid only on steps where the model's own
 * choice is rejected.
 *
 * <p>Decode thread only (the sampler objects and the scratch arrays are not thread-safe).
 */
final class NativeGrammar implements GrammarCompiler {
    private final ModelVocab vocab;
    private final int nVocab;
    private final int endToken;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment one;
    private final MemorySegment oneArray;
    private final MemorySegment all;
    private final MemorySegment pristine;
    private final MemorySegment allArray;

    NativeGrammar(ModelVocab vocab) {
        this.vocab = vocab;
        this.nVocab = vocab.size;
        BitSet eog = vocab.endOfGeneration();
        this.endToken = eog.nextSetBit(0);
        one = arena.allocate(LlamaNative.TOKEN_DATA);
        oneArray = arena.allocate(LlamaNative.TOKEN_DATA_ARRAY);
        all = arena.allocate(LlamaNative.TOKEN_DATA, nVocab);
        pristine = arena.allocate(LlamaNative.TOKEN_DATA, nVocab);
        for (int t = 0; t < nVocab; t++) {
            pristine.set(JAVA_INT, t * 12L, t); // logit and p stay 0
        }
        allArray = arena.allocate(LlamaNative.TOKEN_DATA_ARRAY);
    }

    @Override
    public TokenConstraint start(Grammar grammar) {
        LlamaNative api = vocab.api;
        MemorySegment sampler;
        try (Arena local = Arena.ofConfined()) {
            sampler = (MemorySegment) api.samplerInitGrammar.invokeExact(
                    vocab.vocab, local.allocateFrom(grammar.gbnf()), local.allocateFrom(Grammar.ROOT));
        } catch (Throwable e) {
            throw LlamaNative.failed("llama_sampler_init_grammar", e);
        }
        if (sampler.equals(MemorySegment.NULL)) {
            throw new IllegalArgumentException("llama.cpp cannot parse the grammar");
        }
        return new Constraint(sampler);
    }

    private void apply(MemorySegment sampler, MemorySegment array) {
        try {
            vocab.api.samplerApply.invokeExact(sampler, array);
        } catch (Throwable e) {
            throw LlamaNative.failed("llama_sampler_apply", e);
        }
    }

    private final class Constraint implements TokenConstraint, AutoCloseable {
        private MemorySegment sampler;

        Constraint(MemorySegment sampler) {
            this.sampler = sampler;
        }

        @Override
        public boolean allows(int token) {
            if (token < 0 || token >= nVocab) {
                return false;
            }
            one.set(JAVA_INT, 0, token);
            one.set(JAVA_FLOAT, 4, 0f);
            one.set(JAVA_FLOAT, 8, 0f);
            oneArray.set(ADDRESS, 0, one);
            oneArray.set(JAVA_LONG, 8, 1);
            oneArray.set(JAVA_LONG, 16, -1);
            oneArray.set(JAVA_BOOLEAN, 24, false);
            apply(sampler, oneArray);
            return one.get(JAVA_FLOAT, 4) != Float.NEGATIVE_INFINITY;
        }

        @Override
        public void fillMask(long[] mask) {
            MemorySegment.copy(pristine, 0, all, 0, pristine.byteSize());
            allArray.set(ADDRESS, 0, all);
            allArray.set(JAVA_LONG, 8, nVocab);
            allArray.set(JAVA_LONG, 16, -1);
            allArray.set(JAVA_BOOLEAN, 24, false);
            apply(sampler, allArray);
            java.util.Arrays.fill(mask, 0L);
            long size = allArray.get(JAVA_LONG, 8);
            for (long i = 0; i < size; i++) {
                int id = all.get(JAVA_INT, i * 12);
                if (all.get(JAVA_FLOAT, i * 12 + 4) != Float.NEGATIVE_INFINITY && id >= 0 && id < nVocab) {
                    mask[id >>> 6] |= 1L << id;
                }
            }
        }

        @Override
        public void accept(int token) {
            if (!allows(token)) {
                throw new IllegalArgumentException("the grammar does not allow token " + token);
            }
            try {
                vocab.api.samplerAccept.invokeExact(sampler, token);
            } catch (Throwable e) {
                throw LlamaNative.failed("llama_sampler_accept", e);
            }
        }

        @Override
        public boolean canEnd() {
            return endToken >= 0 && allows(endToken);
        }

        /** llama.cpp's sampler cannot tell; the mask then allows only end-of-generation, which ends the request. */
        @Override
        public boolean isComplete() {
            return false;
        }

        @Override
        public void close() {
            if (!sampler.equals(MemorySegment.NULL)) {
                try {
                    vocab.api.samplerFree.invokeExact(sampler);
                } catch (Throwable e) {
                    throw LlamaNative.failed("llama_sampler_free", e);
                }
                sampler = MemorySegment.NULL;
            }
        }
    }
}
