/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.game.world;

import org.jspecify.annotations.NullMarked;
