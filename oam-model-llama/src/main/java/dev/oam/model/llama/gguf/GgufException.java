package dev.oam.model.llama.gguf;

import java.io.Serial;

/**
 * A model file that cannot be used: missing, unreadable, not GGUF, truncated or corrupt, or lacking what a model needs.
 * The message names the file and the problem in words a game developer can act on.
 */
public final class GgufException extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    public GgufException(String message) {
        super(message);
    }

    GgufException(String message, Throwable cause) {
        super(message, cause);
    }
}
