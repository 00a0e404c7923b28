/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.game.decision;

import org.jspecify.annotations.NullMarked;
