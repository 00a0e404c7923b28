package dev.oam.bridge.transport;

/**
 * What a message sink over a byte stream that any thread may write (stdio's pipe) offers beyond
 * {@code dev.oam.bridge.MessageSink}: a transport's sink implements both. Given one, the engine lets the thread that
 * produced a line write it when that cannot block, instead of handing it to its writer thread: a worker answering its
 * own request when nothing is queued, and the input thread while it handles the last line there is (see
 * docs/CONCURRENCY.md, Outbound queue). Called by one thread at a time. (Not an extension of {@code MessageSink}: this
 * package sits below the engine's, which uses it.)
 */
public interface StreamSink {
    /**
     * Whether {@code send} would only buffer {@code line}: return without writing anything to the peer, so without
     * blocking however slowly the peer reads. Asked by the input thread in an input burst, which then sends the line
     * holding the engine's outbound lock, so the answer must be exact.
     */
    boolean buffers(String line);

    /**
     * Whether {@code line} can be sent now, and it and every line sent since the last {@code flush} flushed, without
     * blocking however slowly the peer reads. Asked by the input thread before it writes a line itself.
     */
    boolean takesWithoutBlocking(String line);

    /** Called once, by the engine writing to this sink, before any line: where the transport reports its input. */
    void connect(LineInput input);

    /**
     * Told which path each line and tool reply of the engine writing here took. Default: {@link DeliveryListener#NONE}.
     */
    default DeliveryListener deliveryListener() {
        return DeliveryListener.NONE;
    }
}
