/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.testing.gguf;

import org.jspecify.annotations.NullMarked;
