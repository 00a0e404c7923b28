package dev.oam.bridge;

/**
 * Where outgoing lines go (stdout, a C callback, an in-process consumer). Called one line at a time, in order, never by
 * two threads at once: by the engine's writer thread, or, for a sink over a byte stream
 * ({@link dev.oam.bridge.transport.StreamSink}), sometimes by the thread that produced the line.
 */
public interface MessageSink {
    /** Delivers one message (one JSON object, no newline). */
    void send(String line) throws Exception;

    /** Called when no further message is waiting, so buffered sinks can flush. */
    default void flush() throws Exception {}
}
