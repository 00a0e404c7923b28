/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.testing;

import org.jspecify.annotations.NullMarked;
