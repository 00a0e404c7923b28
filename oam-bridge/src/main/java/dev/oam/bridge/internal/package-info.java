/**
 * Engine internals for the bridge's friend modules only (the transports: {@code dev.oam.cli}, {@code dev.oam.ffi}).
 * Not API: the module exports this package only to those modules. Types are non-null unless marked
 * {@code @Nullable}.
 */
@NullMarked
package dev.oam.bridge.internal;

import org.jspecify.annotations.NullMarked;
