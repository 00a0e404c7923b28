/**
 * Grammar-constrained decoding in Java: a GBNF grammar (the subset {@code dev.oam.model.llama.Gbnf} writes)
 * applied token by token over a model's vocabulary, for engines that sample in Java. Internal to the llama
 * backend.
 *
 * <p>Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.model.llama.grammar;

import org.jspecify.annotations.NullMarked;
