package dev.oam.model.openai;

import org.jspecify.annotations.Nullable;

/**
 * An API key from the host's environment. Its {@link #toString()} never shows the value, so a key cannot reach a log or
 * an error message by accident; {@link #redact(String)} removes it from text a server sent back (some servers echo the
 * key they rejected).
 */
final class Secret {
    static final Secret NONE = new Secret(null);

    private final @Nullable String value;

    private Secret(@Nullable String value) {
        this.value = value;
    }

    static Secret of(@Nullable String value) {
        return value == null || value.isEmpty() ? NONE : new Secret(value);
    }

    boolean isPresent() {
        return value != null;
    }

    /** The value, for the Authorization header only. */
    String reveal() {
        if (value == null) {
            throw new IllegalStateException("no key");
        }
        return value;
    }

    String redact(String text) {
        if (value == null || value.length() < 4) {
            return text;
        }
        return text.replace(value, "***");
    }

    @Override
    public String toString() {
        return value == null ? "(none)" : "***";
    }
}
