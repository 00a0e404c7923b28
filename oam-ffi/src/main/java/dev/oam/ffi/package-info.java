/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.ffi;

import org.jspecify.annotations.NullMarked;
