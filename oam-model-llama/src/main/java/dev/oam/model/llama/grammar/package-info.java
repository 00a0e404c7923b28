/**
 * Grammar-constrained decoding in Java: a GBNF grammar (llama.cpp's syntax; everything
 * {@code dev.oam.model.llama.Gbnf} and {@code StepGrammar} write) applied token by token over a model's
 * vocabulary, for engines that sample in Java. Internal to the llama backend.
 *
 * <p>The seam is {@link dev.oam.model.llama.grammar.TokenVocabulary},
 * {@link dev.oam.model.llama.grammar.GrammarCompiler} and {@link dev.oam.model.llama.grammar.TokenConstraint}.
 * The implementation: {@link dev.oam.model.llama.grammar.GbnfCompiler#create(TokenVocabulary)} (one per loaded
 * model; thread-safe; owns the token trie, the compiled grammars and the mask cache), and
 * {@link dev.oam.model.llama.grammar.GgufVocabulary#of(dev.oam.model.llama.gguf.GgufFile)} for a SentencePiece
 * vocabulary read from a GGUF file without loading the model. An engine that has the model loaded may instead
 * build the vocabulary from {@code llama_token_to_piece(special=false)}, {@code llama_vocab_is_control} and
 * {@code llama_vocab_is_eog}.
 *
 * <p>How masks are made fast: the grammar's states are interned into a lazily built DFA over code-point
 * intervals (a byte step is an array read); a mask is one pass over a flat depth-first trie of the vocabulary
 * that skips rejected subtrees; masks are cached per state (LRU by bytes, repetition counts no piece can tell
 * apart merged in the key); and a state that accepts any run of some characters (a JSON string body, free text)
 * takes the short pieces made only of them as one precomputed bitset and walks only the rest of the trie.
 *
 * <p>Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.model.llama.grammar;

import org.jspecify.annotations.NullMarked;
