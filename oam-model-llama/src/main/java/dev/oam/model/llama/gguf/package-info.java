/**
 * GGUF files read in Java (header, metadata and tensor table), without loading the model.
 *
 * <p>Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.model.llama.gguf;

import org.jspecify.annotations.NullMarked;
