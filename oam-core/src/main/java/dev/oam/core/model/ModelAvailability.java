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
    private static final String LOADING = "loading ";

    public ModelAvailability {
        supportedLanguages = List.copyOf(supportedLanguages);
    }

    public static ModelAvailability ready(int contextSize, @Nullable String variant, List<String> languages) {
        return new ModelAvailability(true, null, null, contextSize, variant, languages);
    }

    /** A model that is being loaded: {@code model_not_ready}, and steps wait for it instead of failing. */
    public static ModelAvailability loading(String name) {
        return unavailable("model_not_ready", LOADING + name + "…");
    }

    /** Whether this says the model is still loading ({@link #loading}). */
    public boolean isLoading() {
        return !available && "model_not_ready".equals(reason) && message != null && message.startsWith(LOADING);
    }

    public static ModelAvailability unavailable(String reason, String message) {
        return new ModelAvailability(false, reason, message, null, null, List.of());
    }
}
