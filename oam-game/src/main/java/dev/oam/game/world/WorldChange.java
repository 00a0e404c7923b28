package dev.oam.game.world;

import com.fasterxml.jackson.databind.JsonNode;
import org.jspecify.annotations.Nullable;

/**
 * One changed leaf of a world. {@code oldValue} is {@code null} when the value was created and {@code newValue} when it
 * was removed (a stored JSON null is a {@code NullNode}).
 */
public record WorldChange(
        String path, @Nullable JsonNode oldValue, @Nullable JsonNode newValue) {}
