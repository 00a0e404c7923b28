package dev.oam.bridge;

/** Where outgoing lines go (stdout, a C callback, an in-process consumer). Called by the writer thread only. */
public interface MessageSink {
    /** Delivers one message (one JSON object, no newline). */
    void send(String line) throws Exception;

    /** Called when no further message is waiting, so buffered sinks can flush. */
    default void flush() throws Exception {}
}
