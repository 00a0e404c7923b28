package dev.oam.server;

import dev.oam.core.Log;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.Request;
import org.jspecify.annotations.Nullable;

/**
 * Notices a client that closes its connection while its completion is still being generated.
 *
 * <p>Jetty's HTTP/1.1 connection does not read while a request is handled, so a peer's close stays unseen until the
 * server writes. While nothing has been written, this probe does a non-blocking read on the connection every
 * {@value #PERIOD_MS} ms: end of stream means the client is gone. Bytes instead mean the client pipelined its next
 * request; they are handed back to Jetty's connection (the buffer it parses from) and probing stops. The probe must be
 * stopped before the response is written, so it never reads while Jetty does.
 */
final class DisconnectProbe implements AutoCloseable {
    static final long PERIOD_MS = 250;

    private final EndPoint endPoint;
    private final Runnable onGone;
    private final Object lock = new Object();
    private boolean stopped; // guarded by lock
    private volatile boolean gone;
    private @Nullable ScheduledFuture<?> task; // guarded by lock

    private DisconnectProbe(EndPoint endPoint, Runnable onGone) {
        this.endPoint = endPoint;
        this.onGone = onGone;
    }

    static DisconnectProbe start(Request request, ScheduledExecutorService timer, Runnable onGone) {
        DisconnectProbe probe = new DisconnectProbe(
                request.getConnectionMetaData().getConnection().getEndPoint(), onGone);
        synchronized (probe.lock) {
            probe.task = timer.scheduleWithFixedDelay(probe::probe, PERIOD_MS, PERIOD_MS, TimeUnit.MILLISECONDS);
        }
        return probe;
    }

    boolean gone() {
        return gone;
    }

    private void probe() {
        synchronized (lock) {
            if (stopped) {
                return;
            }
            ByteBuffer buffer = ByteBuffer.allocate(8192);
            buffer.flip();
            int read;
            try {
                read = endPoint.fill(buffer);
            } catch (IOException e) {
                read = -1;
            }
            if (read == 0) {
                return;
            }
            stopLocked();
            if (read < 0) {
                gone = true;
            } else if (endPoint.getConnection() instanceof Connection.UpgradeTo connection) {
                connection.onUpgradeTo(buffer);
                return;
            } else {
                Log.warning("a pipelined request arrived on a connection that cannot take it back; closing it");
                endPoint.close();
                gone = true;
            }
        }
        onGone.run();
    }

    private void stopLocked() {
        stopped = true;
        if (task != null) {
            task.cancel(false);
        }
    }

    /** Stops probing; waits for a probe in progress. */
    @Override
    public void close() {
        synchronized (lock) {
            stopLocked();
        }
    }
}
