/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.core.json;

import org.jspecify.annotations.NullMarked;
