package dev.oam.model.llama.ffm;

import dev.oam.core.Log;
import dev.oam.model.llama.grammar.GbnfCompiler;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.GrammarCompiler;
import dev.oam.model.llama.grammar.TokenConstraint;
import org.jspecify.annotations.Nullable;

/**
 * One model's grammar compilation: the implementation {@link FfmTuning#grammar()} names, made on first use (by the
 * first caller with a grammar; others wait), on the caller's thread, never on the decode thread other sessions wait for
 * (the Java compiler's first use builds the vocabulary and its trie, about a second on 262k tokens).
 */
final class Grammars {
    private final ModelVocab vocab;
    private final String modelName;
    private final FfmTuning.Grammar kind;
    private volatile @Nullable GrammarCompiler compiler;

    Grammars(ModelVocab vocab, String modelName, FfmTuning.Grammar kind) {
        this.vocab = vocab;
        this.modelName = modelName;
        this.kind = kind;
    }

    /**
     * Whether constrained outputs are steered to close within their budget ({@code TokenPicker#closing}): with the Java
     * grammar; llama.cpp's own sampler cannot tell the way to the end.
     */
    boolean closeAtBudget() {
        return kind == FfmTuning.Grammar.JAVA;
    }

    /** A constraint for one generation of {@code grammar}. */
    TokenConstraint start(Grammar grammar) {
        return compiler().start(grammar);
    }

    private GrammarCompiler compiler() {
        GrammarCompiler c = compiler;
        if (c == null) {
            synchronized (this) {
                c = compiler;
                if (c == null) {
                    long start = System.nanoTime();
                    c = kind == FfmTuning.Grammar.NATIVE
                            ? new NativeGrammar(vocab)
                            : GbnfCompiler.create(vocab.forGrammars());
                    compiler = c;
                    Log.info("llama model '" + modelName + "': grammar compiler "
                            + c.getClass().getSimpleName() + " ready in " + (System.nanoTime() - start) / 1_000_000
                            + " ms (" + vocab.size + " tokens)");
                }
            }
        }
        return c;
    }

    /** Frees what a constraint holds natively (llama.cpp's sampler); the Java ones hold nothing. */
    static void close(@Nullable TokenConstraint constraint) {
        if (constraint instanceof AutoCloseable closeable) {
            try {
                closeable.close();
            } catch (Exception e) {
                Log.warning("closing a grammar: " + e);
            }
        }
    }
}
