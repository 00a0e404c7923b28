package dev.oam.bridge;

import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeExtension;
import dev.oam.bridge.spi.Methods;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * How an engine stops, by a {@code shutdown} request or by {@link BridgeEngine#close()}: every request from then on
 * fails with -32023; queued and running work, deferred work and outstanding tool calls are cancelled; the requests
 * still in flight get {@link #WAIT_MILLIS} to answer and are then answered -32023; extensions shut down. The
 * {@code shutdown} response is always the last: it is sent once no other request is in flight.
 */
final class Shutdown {
    static final long WAIT_MILLIS = 2_000;

    private final Sessions sessions;
    private final DeferredWork deferred;
    private final ClientCalls clientCalls;
    private final InFlight inflight;
    private final List<BridgeExtension> extensions;
    private final Outbound outbound;
    private final Runnable onShutdown;
    private final ReentrantLock dispatchLock;
    private volatile boolean started;
    private volatile @Nullable Thread thread; // oam-shutdown, answering a shutdown request

    Shutdown(
            Sessions sessions,
            DeferredWork deferred,
            ClientCalls clientCalls,
            InFlight inflight,
            List<BridgeExtension> extensions,
            Outbound outbound,
            Runnable onShutdown,
            ReentrantLock dispatchLock) {
        this.sessions = sessions;
        this.deferred = deferred;
        this.clientCalls = clientCalls;
        this.inflight = inflight;
        this.extensions = extensions;
        this.outbound = outbound;
        this.onShutdown = onShutdown;
        this.dispatchLock = dispatchLock;
    }

    boolean started() {
        return started;
    }

    /**
     * The order-sensitive part of {@code shutdown}, on the dispatcher: from here on every request fails with -32023.
     * The rest runs on {@code oam-shutdown}, which answers the request last.
     */
    void begin(RealRequest request) {
        started = true;
        cancelEverything();
        Thread shutdown = Thread.ofVirtual().name("oam-shutdown").unstarted(() -> {
            waitForInflight(request);
            finish(request);
            request.respond(Json.object());
            outbound.after(onShutdown);
        });
        thread = shutdown; // before it starts, so a close() right after this sees it
        shutdown.start();
    }

    /** Shuts down without a request (idempotent), or lets a {@code shutdown} request's thread finish. */
    void close() {
        if (!started) {
            started = true;
            // A line being dispatched on another thread when this started is handled first (its request is then in
            // flight, so it is waited for and answered); every later one sees started and is refused.
            dispatchLock.lock();
            dispatchLock.unlock();
            cancelEverything();
            waitForInflight(null);
            finish(null);
        }
        Thread shutdown = thread;
        if (shutdown != null) {
            try {
                shutdown.join(); // bounded: it waits at most WAIT_MILLIS for other requests
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void cancelEverything() {
        sessions.cancelAll();
        deferred.cancelAll();
        clientCalls.abandonAll("The bridge is shutting down.");
    }

    /** Waits (at most {@link #WAIT_MILLIS}) until no request but {@code except} is in flight. */
    private void waitForInflight(@Nullable RealRequest except) {
        inflight.awaitNoneBut(except, WAIT_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void finish(@Nullable RealRequest except) {
        for (RealRequest pending : inflight.snapshot()) {
            if (!pending.method().equals(Methods.SHUTDOWN)) {
                pending.fail(
                        new BridgeException(ErrorCode.SHUT_DOWN, "The bridge shut down before this request finished."));
            }
        }
        // A request whose own answer won the race against the fail above is in flight until that answer is queued:
        // wait for it, so the shutdown response cannot overtake it. Only such requests are left: microseconds.
        waitForInflight(except);
        for (BridgeExtension extension : extensions) {
            try {
                extension.shutdown();
            } catch (RuntimeException e) {
                Log.error("extension shutdown failed", e);
            }
        }
        sessions.clear();
    }
}
