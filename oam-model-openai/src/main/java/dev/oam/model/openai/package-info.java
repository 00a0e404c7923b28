/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.model.openai;

import org.jspecify.annotations.NullMarked;
