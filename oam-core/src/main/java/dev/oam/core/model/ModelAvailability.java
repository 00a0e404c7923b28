package dev.oam.core.model;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The answer of {@code model/availability}.
 *
 * @param device where a local model runs, when it knows: the device and its memory, and how many layers it holds
 *     ("Vulkan0 (NVIDIA GeForce RTX 3060), 11800 MiB free, 29/29 layers"; "CPU")
 */
public record ModelAvailability(
        boolean available,
        @Nullable String reason,
        @Nullable String message,
        @Nullable Integer contextSize,
        @Nullable String variant,
        List<String> supportedLanguages,
        @Nullable String device) {
    private static final String LOADING = "loading ";

    public ModelAvailability {
        supportedLanguages = List.copyOf(supportedLanguages);
    }

    public ModelAvailability(
            boolean available,
            @Nullable String reason,
            @Nullable String message,
            @Nullable Integer contextSize,
            @Nullable String variant,
            List<String> supportedLanguages) {
        this(available, reason, message, contextSize, variant, supportedLanguages, null);
    }

    /** The same answer naming the device the model runs on. */
    public ModelAvailability withDevice(@Nullable String device) {
        return new ModelAvailability(available, reason, message, contextSize, variant, supportedLanguages, device);
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
