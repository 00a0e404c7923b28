package dev.oam.bridge;

/**
 * Where outgoing lines go (stdout, a C callback, an in-process consumer). Called one line at a time, in order,
 * by the engine's writer thread, or (when {@link #allowsCallerDelivery()}) by a worker thread delivering its
 * own message, or the input thread delivering one without blocking, while the writer is idle; never by two
 * threads at once.
 */
public interface MessageSink {
    /** Delivers one message (one JSON object, no newline). */
    void send(String line) throws Exception;

    /** Called when no further message is waiting, so buffered sinks can flush. */
    default void flush() throws Exception {}

    /**
     * Whether a worker thread (a virtual thread answering a request, or sending that request's events) may
     * deliver its message itself when nothing is queued, instead of handing it to the writer thread. That saves
     * a thread hand-off per message; a sink that must always be called on one thread (a host callback) keeps
     * the default {@code false}.
     */
    default boolean allowsCallerDelivery() {
        return false;
    }

    /**
     * Whether {@code line} can be sent now, and it and every line sent since the last {@link #flush} flushed, without
     * blocking however slowly the peer reads. The thread reading input delivers a message itself only when this is
     * true (it must never wait for the client), and flushes at once; otherwise the message goes to the writer thread. Asked only of a sink that {@linkplain #allowsCallerDelivery allows caller delivery},
     * by the thread that is delivering. Default {@code false}.
     */
    default boolean takesWithoutBlocking(String line) {
        return false;
    }

    /**
     * Whether {@link #send} would only buffer {@code line}: return without writing anything to the peer, so without
     * blocking however slowly the peer reads. While more input is already there, the thread reading input delivers its
     * own messages this way and leaves the flush for when its input runs dry (as a single-threaded server would); a line
     * this refuses goes to the writer thread. Asked only of a sink that {@linkplain #allowsCallerDelivery allows caller
     * delivery}, by the only thread using the sink at that moment (the input thread, holding the engine's outbound lock
     * while nobody delivers; it then calls {@link #send} under that lock, so it must not block). Default {@code false}.
     */
    default boolean buffers(String line) {
        return false;
    }
}
