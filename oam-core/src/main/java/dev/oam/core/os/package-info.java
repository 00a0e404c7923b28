/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.core.os;

import org.jspecify.annotations.NullMarked;
