/**
 * The JNI engine: llama.cpp through the de.kherud binding, one model computing at a time in the process.
 *
 * <p>Types are non-null unless marked {@code @Nullable}.
 */
@NullMarked
package dev.oam.model.llama.jni;

import org.jspecify.annotations.NullMarked;
