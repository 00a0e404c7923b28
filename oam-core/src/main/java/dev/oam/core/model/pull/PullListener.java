package dev.oam.core.model.pull;

/**
 * Progress of one {@link ModelCache#pull}. Called on the downloading thread, often (about every half per cent, and at
 * the start and the end of each request), so an implementation returns quickly; the bytes a resumed download already
 * had count as done from the first call.
 */
@FunctionalInterface
public interface PullListener {
    PullListener NONE = (done, total) -> {};

    /**
     * @param done bytes on disk so far
     * @param total bytes of the whole file ({@code -1} while unknown)
     */
    void progress(long done, long total);
}
