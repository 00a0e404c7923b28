package dev.oam.bridge.transport;

/**
 * What a line transport reports about its input, so that answers to pipelined requests go out in few writes and no
 * answer waits for input that was not there yet. Called by the transport's input thread only, and only when the state
 * changes.
 */
public interface LineInput {
    /** For an engine whose sink is not a {@link StreamSink}: nothing to report. */
    LineInput NONE = new LineInput() {
        @Override
        public void burst(boolean ahead) {}

        @Override
        public void lastLine(boolean handling) {}
    };

    /**
     * {@code true} when the input thread starts handling a line with more input already buffered or readable behind it
     * (an input burst: answers are buffered, not flushed), {@code false} when that ends: before the last line there is,
     * and before any read that may wait (what the burst held is flushed then).
     */
    void burst(boolean ahead);

    /**
     * {@code true} before the input thread hands the engine the last line of the input there is (nothing more buffered,
     * nothing more readable without waiting), {@code false} after it. In between, the input thread writes its own
     * answers when the sink takes them without blocking.
     */
    void lastLine(boolean handling);
}
