/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.core.schema;

import org.jspecify.annotations.NullMarked;
