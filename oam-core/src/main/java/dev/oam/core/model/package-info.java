/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.core.model;

import org.jspecify.annotations.NullMarked;
