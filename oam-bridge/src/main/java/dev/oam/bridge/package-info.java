/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.bridge;

import org.jspecify.annotations.NullMarked;
