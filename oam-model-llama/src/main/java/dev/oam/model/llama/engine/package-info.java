/**
 * What both engines share: the {@link dev.oam.model.llama.engine.Engine} seam, requests, results and settings, the
 * model file as an engine needs it, the lanes (slots) and their fair queue, a generation's events, sampling in Java,
 * and the binding's native library.
 *
 * <p>Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.model.llama.engine;

import org.jspecify.annotations.NullMarked;
