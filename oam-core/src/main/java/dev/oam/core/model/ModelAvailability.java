package dev.oam.core.model;

import java.util.List;
import org.jspecify.annotations.Nullable;

/** The answer of {@code model/availability}. */
public record ModelAvailability(
        boolean available,
        @Nullable String reason,
        @Nullable String message,
        @Nullable Integer contextSize,
        @Nullable String variant,
        List<String> supportedLanguages) {

    public ModelAvailability {
        supportedLanguages = List.copyOf(supportedLanguages);
    }

    public static ModelAvailability ready(int contextSize, @Nullable String variant, List<String> languages) {
        return new ModelAvailability(true, null, null, contextSize, variant, languages);
    }

    public static ModelAvailability unavailable(String reason, String message) {
        return new ModelAvailability(false, reason, message, null, null, List.of());
    }
}
