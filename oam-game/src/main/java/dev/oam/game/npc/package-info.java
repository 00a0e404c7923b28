/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.game.npc;

import org.jspecify.annotations.NullMarked;
