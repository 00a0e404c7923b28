/**
 * Grammars as a small tree, and grammar-constrained decoding in Java. Internal to the llama backend.
 *
 * <p>The tree: a {@link dev.oam.model.llama.grammar.Grammar} is ordered named rules, each a
 * {@link dev.oam.model.llama.grammar.Term} (literal, character class, rule reference, sequence, alternatives,
 * repetition, group), built by {@code dev.oam.model.llama.Gbnf}, {@code StepGrammar} and {@code DialogueAnswer}. It is
 * printed to GBNF (llama.cpp's syntax) only where llama.cpp needs text
 * ({@link dev.oam.model.llama.grammar.Grammar#gbnf()}); the printer keeps the spelling the tree records (groups,
 * {@code ?} or {@code {0,1}}, {@code {n}} or {@code {n,n}}), so the text is one fixed function of the tree. Sizing
 * ({@code GrammarBound}) and the Java decoder read the tree; nothing in the product parses GBNF.
 *
 * <p>The seam is {@link dev.oam.model.llama.grammar.TokenVocabulary},
 * {@link dev.oam.model.llama.grammar.GrammarCompiler} and {@link dev.oam.model.llama.grammar.TokenConstraint}. The
 * implementation: {@link dev.oam.model.llama.grammar.GbnfCompiler#create(TokenVocabulary)} (one per loaded model;
 * thread-safe; owns the token trie, the compiled grammars and the mask cache), and
 * {@link dev.oam.model.llama.grammar.GgufVocabulary#of(dev.oam.model.llama.gguf.GgufFile)} for a SentencePiece
 * vocabulary read from a GGUF file without loading the model. An engine that has the model loaded may instead build the
 * vocabulary from {@code llama_token_to_piece(special=false)}, {@code llama_vocab_is_control} and
 * {@code llama_vocab_is_eog}.
 *
 * <p>How masks are made fast: the grammar's states are interned into a lazily built DFA over code-point intervals (a
 * byte step is an array read); a mask is one pass over a flat depth-first trie of the vocabulary that skips rejected
 * subtrees; masks are cached per state (LRU by bytes, repetition counts no piece can tell apart merged in the key); and
 * a state that accepts any run of some characters (a JSON string body, free text) takes the short pieces made only of
 * them as one precomputed bitset and walks only the rest of the trie.
 *
 * <p>Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.model.llama.grammar;

import org.jspecify.annotations.NullMarked;
