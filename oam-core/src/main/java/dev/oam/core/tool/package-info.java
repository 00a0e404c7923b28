/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.core.tool;

import org.jspecify.annotations.NullMarked;
