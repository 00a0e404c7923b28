package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeRequest;
import dev.oam.bridge.spi.MethodRegistry;
import dev.oam.bridge.spi.Methods;
import dev.oam.bridge.spi.Params;
import dev.oam.bridge.spi.Reply;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.pull.ModelCache;
import dev.oam.core.model.pull.ModelName;
import dev.oam.core.model.pull.PullException;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code model/pull} and {@code model/cancelPull} (this edition's extension, docs/PROTOCOL.md): a model downloaded into
 * the engine's {@link ModelCache} on a worker thread, its progress sent as {@code model/progress} notifications before
 * the response. Only these requests download; a session naming a model that is not cached fails at once.
 */
final class PullMethods {
    private final BridgeEngine engine;
    /** The tokens of the pulls in flight, by canonical name; model/cancelPull cancels them. */
    private final Map<String, Set<CancellationToken>> running = new ConcurrentHashMap<>();

    private PullMethods(BridgeEngine engine) {
        this.engine = engine;
    }

    static void register(MethodRegistry.Builder registry, BridgeEngine engine) {
        PullMethods methods = new PullMethods(engine);
        registry.register(Methods.MODEL_PULL, methods::pull);
        registry.register(Methods.MODEL_CANCEL_PULL, methods::cancel);
    }

    private ModelCache cache() {
        return engine.configuration().modelCache();
    }

    private String canonical(Params params) throws BridgeException {
        String text = params.string("model");
        try {
            return cache().parse(text).text();
        } catch (PullException e) {
            throw BridgeException.invalidParameter("model", ": " + e.getMessage() + ".");
        }
    }

    private Reply pull(BridgeRequest request) throws BridgeException {
        String name = canonical(request.params());
        JsonNode id = request.id();
        return Reply.deferred(token -> {
            Thread worker = Thread.currentThread();
            Runnable interrupt = worker::interrupt;
            running.computeIfAbsent(name, k -> ConcurrentHashMap.newKeySet()).add(token);
            token.onCancel(interrupt);
            try {
                ModelCache.Pulled pulled = cache().pull(name, (done, total) -> {
                    ObjectNode progress = Json.object();
                    progress.put("model", name);
                    if (id != null) {
                        progress.set("requestId", id);
                    }
                    progress.put("bytesDone", done);
                    progress.put("bytesTotal", total);
                    engine.sendNotification(Methods.MODEL_PROGRESS, progress);
                });
                ObjectNode result = Json.object();
                result.put("model", pulled.name());
                result.put("path", pulled.path().toString());
                result.put("bytes", pulled.size());
                result.put("downloaded", pulled.downloaded());
                return result;
            } catch (InterruptedException e) {
                throw new BridgeException(
                        ErrorCode.CANCELLED,
                        "The pull of " + name + " was cancelled; what arrived is kept and the"
                                + " next model/pull resumes it.");
            } catch (PullException e) {
                if (e.reason() == PullException.Reason.CANCELLED) {
                    throw new BridgeException(
                            ErrorCode.CANCELLED, "The pull of " + name + " was cancelled; " + e.getMessage() + ".");
                }
                ObjectNode data = Json.object();
                data.put("reason", e.reason().code());
                data.put("model", name);
                throw new BridgeException(
                        ErrorCode.PULL_FAILED, "Cannot pull " + name + ": " + e.getMessage() + ".", data);
            } finally {
                token.removeListener(interrupt);
                Thread.interrupted(); // a cancel that came after the work ended must not reach the next use of this
                // thread
                running.computeIfPresent(name, (k, tokens) -> {
                    tokens.remove(token);
                    return tokens.isEmpty() ? null : tokens;
                });
            }
        });
    }

    private Reply cancel(BridgeRequest request) throws BridgeException {
        String name = canonical(request.params());
        Set<CancellationToken> tokens = running.getOrDefault(name, Set.of());
        int cancelled = 0;
        for (CancellationToken token : tokens) {
            if (!token.isCancelled()) {
                token.cancel();
                cancelled++;
            }
        }
        ObjectNode result = Json.object();
        result.put("cancelled", cancelled > 0);
        return Reply.result(result);
    }

    /** Whether {@code text} is a model name rather than a path (for the message of a session that names one). */
    static boolean isName(String text) {
        return ModelName.isName(text);
    }
}
