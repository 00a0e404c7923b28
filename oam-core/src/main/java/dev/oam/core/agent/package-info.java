/** Types are non-null unless marked {@code @Nullable}. */
@NullMarked
package dev.oam.core.agent;

import org.jspecify.annotations.NullMarked;
