package dev.oam.model.openai;

import java.net.http.HttpHeaders;
import org.jspecify.annotations.Nullable;

/**
 * The server answered with an error: an HTTP status of 400 or more, or an {@code error} object in the middle of a
 * stream ({@link #status} 0). {@link Failures#map} turns it into a protocol error; the model looks at it first to
 * decide on a fallback (no streaming, emulated tool calls).
 *
 * @param code the error's {@code code} or {@code type} from the body, lower-cased, when there is one
 * @param message the server's message (not shortened, not yet redacted)
 */
final class HttpFailure extends Exception {
    private final int status;
    private final @Nullable String code;
    private final HttpHeaders headers;

    HttpFailure(int status, @Nullable String code, String message, HttpHeaders headers) {
        super(message, null, false, false);
        this.status = status;
        this.code = code;
        this.headers = headers;
    }

    int status() {
        return status;
    }

    @Nullable
    String code() {
        return code;
    }

    HttpHeaders headers() {
        return headers;
    }

    boolean mentions(String word) {
        String text = (getMessage() + " " + (code == null ? "" : code)).toLowerCase(java.util.Locale.ROOT);
        return text.contains(word);
    }
}
