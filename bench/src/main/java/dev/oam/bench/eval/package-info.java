/**
 * The evaluation ({@code bench/run eval}): scenario sets on real models, embedded and behind llama-server, scored by
 * rules.
 *
 * <p>Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.bench.eval;

import org.jspecify.annotations.NullMarked;
