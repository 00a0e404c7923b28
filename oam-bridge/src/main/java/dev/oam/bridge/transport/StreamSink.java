package dev.oam.bridge.transport;

import dev.oam.bridge.MessageSink;

/**
 * A sink over a byte stream that any thread may write (stdio's pipe). Given one, the engine lets the thread that
 * produced a line write it when that cannot block, instead of handing it to its writer thread: a worker answering its
 * own request when nothing is queued, and the input thread while it handles the last line there is (see
 * docs/CONCURRENCY.md, Outbound queue). Called by one thread at a time.
 */
public interface StreamSink extends MessageSink {
    /**
     * Whether {@link #send} would only buffer {@code line}: return without writing anything to the peer, so without
     * blocking however slowly the peer reads. Asked by the input thread in an input burst, which then sends the line
     * holding the engine's outbound lock, so the answer must be exact.
     */
    boolean buffers(String line);

    /**
     * Whether {@code line} can be sent now, and it and every line sent since the last {@link #flush} flushed, without
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
