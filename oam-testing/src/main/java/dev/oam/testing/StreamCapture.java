package dev.oam.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/** Reads a stream to its end on a daemon thread and keeps what it read (a child process's stderr). */
public final class StreamCapture {
    private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    private final Thread thread;

    private StreamCapture(InputStream in, String threadName) {
        thread = Thread.ofPlatform().daemon().name(threadName).start(() -> copy(in));
    }

    public static StreamCapture start(InputStream in, String threadName) {
        return new StreamCapture(in, threadName);
    }

    /** What was read so far, as UTF-8. */
    public String text() {
        synchronized (bytes) {
            return bytes.toString(StandardCharsets.UTF_8);
        }
    }

    /** Waits until the stream has ended and everything in it was kept. */
    public void join() throws InterruptedException {
        thread.join();
    }

    private void copy(InputStream in) {
        byte[] buffer = new byte[8192];
        try (in) {
            int n;
            while ((n = in.read(buffer)) > 0) {
                synchronized (bytes) {
                    bytes.write(buffer, 0, n);
                }
            }
        } catch (IOException e) {
            // the process ended
        }
    }
}
