/**
 * The process model host: one model file's engine in a child JVM, spoken to in JSON lines, so a native abort costs one
 * model.
 *
 * <p>Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.model.llama.host;

import org.jspecify.annotations.NullMarked;
