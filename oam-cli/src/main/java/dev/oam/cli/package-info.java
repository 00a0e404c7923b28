/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.cli;

import org.jspecify.annotations.NullMarked;
