/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.game.content;

import org.jspecify.annotations.NullMarked;
