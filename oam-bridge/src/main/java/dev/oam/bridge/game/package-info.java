/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.bridge.game;

import org.jspecify.annotations.NullMarked;
