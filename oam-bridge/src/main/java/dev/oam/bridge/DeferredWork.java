package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeRequest;
import dev.oam.bridge.spi.Reply;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.model.CancellationToken;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Handler results that run on their own virtual thread ({@link Reply#deferred}), each with a token shutdown cancels.
 */
final class DeferredWork {
    private final Set<CancellationToken> running = ConcurrentHashMap.newKeySet();

    /** Runs {@code work} for {@code request} on a virtual thread {@code oam-deferred-<method>}, which answers it. */
    void start(BridgeRequest request, Reply.Work work) {
        CancellationToken token = CancellationToken.create();
        running.add(token);
        request.setCanceller(token::cancel);
        Thread.ofVirtual().name("oam-deferred-" + request.method()).start(() -> {
            try {
                JsonNode result = work.run(token);
                if (token.isCancelled()) {
                    request.failCancelled();
                } else {
                    request.respond(result);
                }
            } catch (Exception e) {
                request.fail(
                        token.isCancelled()
                                ? new BridgeException(ErrorCode.CANCELLED, "The request was cancelled.")
                                : BridgeException.wrap(e));
            } catch (Throwable t) {
                Log.error("deferred work for '" + request.method() + "' failed", t);
                request.fail(new BridgeException(ErrorCode.INTERNAL_ERROR, "Internal error: " + t));
            } finally {
                running.remove(token);
            }
        });
    }

    void cancelAll() {
        for (CancellationToken token : running) {
            token.cancel();
        }
    }
}
