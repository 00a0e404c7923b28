/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.core.transcript;

import org.jspecify.annotations.NullMarked;
