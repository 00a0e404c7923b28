package dev.oam.testing;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.List;

/** One end of a bridge connection, as a client sees it: lines out, parsed messages in. */
public interface ProtocolClient extends AutoCloseable {
    /** Sends one line (a newline is added by the transport where it needs one). */
    void send(byte[] line);

    default void send(String line) {
        send(line.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    /** The next message from the bridge, or {@code null} after {@code timeout}. */
    JsonNode poll(Duration timeout) throws InterruptedException;

    /** Lines from the bridge that were not JSON objects (must stay empty: stdout carries protocol only). */
    List<String> garbage();

    /** Signals end of input (stdio: closes stdin). */
    void endInput();

    /** Whether the bridge side has stopped (stdio: the process exited; in-process: onShutdown ran). */
    boolean awaitStopped(Duration timeout) throws InterruptedException;

    /** The stopped bridge's exit code (0 for in-process). */
    int exitCode();

    @Override
    void close();
}
