/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.server;

import org.jspecify.annotations.NullMarked;
