/**
 * The FFM engine: llama.cpp's C API through {@code java.lang.foreign}, one decode thread with continuous batching over
 * one KV sequence per lane. Its native code is compiled for release 22 into {@code META-INF/versions/22}; this
 * package's release-21 part holds what a host or test may name without FFM (its tuning and observer).
 *
 * <p>Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.model.llama.ffm;

import org.jspecify.annotations.NullMarked;
