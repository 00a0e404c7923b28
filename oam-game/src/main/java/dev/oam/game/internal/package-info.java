/**
 * What the game packages share and nobody else needs: the prompt text rules and the lenient model view. Not exported.
 * Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.game.internal;

import org.jspecify.annotations.NullMarked;
