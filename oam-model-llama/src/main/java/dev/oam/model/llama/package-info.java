/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.model.llama;

import org.jspecify.annotations.NullMarked;
