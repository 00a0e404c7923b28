package dev.oam.model.llama.grammar;

/**
 * Compiles GBNF grammars against one model's vocabulary and caches what it learns (token masks per grammar
 * state) across generations. One per loaded model; thread-safe.
 */
public interface GrammarCompiler {
    /**
     * A fresh constraint at the start of {@code gbnf} (root rule {@code root}).
     *
     * @throws IllegalArgumentException naming the cause when the grammar cannot be parsed
     */
    TokenConstraint start(String gbnf);
}
