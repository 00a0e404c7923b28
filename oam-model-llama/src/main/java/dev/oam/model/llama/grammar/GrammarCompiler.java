package dev.oam.model.llama.grammar;

/**
 * Compiles grammars ({@link Grammar}) against one model's vocabulary and caches what it learns (token masks per grammar
 * state) across generations. One per loaded model; thread-safe.
 */
public interface GrammarCompiler {
    /**
     * A fresh constraint at the start of {@code grammar} (its root rule).
     *
     * @throws IllegalArgumentException naming the cause when the grammar cannot be compiled
     */
    TokenConstraint start(Grammar grammar);
}
