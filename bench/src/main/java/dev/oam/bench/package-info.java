/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.bench;

import org.jspecify.annotations.NullMarked;
