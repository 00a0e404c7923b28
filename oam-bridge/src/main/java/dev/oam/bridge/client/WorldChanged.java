package dev.oam.bridge.client;

import org.jspecify.annotations.Nullable;

/**
 * One {@code world/changed} notification of a {@link OamWorld#subscribe} subscription.
 *
 * @param oldValue the value before, as a Java value; meaningful only when not {@code created}
 * @param newValue the value after; meaningful only when not {@code removed}
 * @param created the path had no value before
 * @param removed the path has no value now
 */
public record WorldChanged(
        String world,
        String subscription,
        String path,
        @Nullable Object oldValue,
        @Nullable Object newValue,
        boolean created,
        boolean removed) {}
