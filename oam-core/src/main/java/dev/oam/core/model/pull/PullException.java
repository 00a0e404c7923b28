package dev.oam.core.model.pull;

import java.util.Locale;
import java.util.Objects;

/** A pull failed; {@link #reason()} says which way, the message says what to do about it. */
public final class PullException extends Exception {
    /** Why a pull failed; {@link #code()} is the stable string the wire and {@code oam pull --json} carry. */
    public enum Reason {
        /** The name is malformed or names nothing this build can fetch. */
        INVALID_NAME,
        /** The repository, revision, file or package does not exist. */
        NOT_FOUND,
        /** The repository is gated or private and the token (none, or {@code HF_TOKEN}'s) gives no access. */
        GATED,
        /** The downloaded bytes do not have the SHA-256 the source published; nothing was kept. */
        HASH_MISMATCH,
        /** The cache's disk cannot hold the file. */
        DISK_FULL,
        /** The source answered something that is not the file: an HTML page, a redirect elsewhere, no SHA-256. */
        BAD_ANSWER,
        /** The file is not a GGUF model. */
        NOT_GGUF,
        /** The source could not be reached or the transfer broke (what arrived is kept; the next pull resumes). */
        NETWORK,
        /** The model is not in the cache (and was not pulled). */
        NOT_CACHED,
        /** The pull was cancelled (what arrived is kept; the next pull resumes). */
        CANCELLED,
        /** The cache folder could not be written or read. */
        IO;

        public String code() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Reason reason;

    public PullException(Reason reason, String message) {
        this(reason, message, null);
    }

    public PullException(Reason reason, String message, @org.jspecify.annotations.Nullable Throwable cause) {
        super(message, cause);
        this.reason = Objects.requireNonNull(reason, "reason");
    }

    public Reason reason() {
        return reason;
    }
}
