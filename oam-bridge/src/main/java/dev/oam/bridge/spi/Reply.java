package dev.oam.bridge.spi;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.model.CancellationToken;

/** What a handler returns: a result now, deferred work, or nothing because it arranged its own response. */
public sealed interface Reply {
    static Reply result(JsonNode result) {
        return new Result(result);
    }

    /** Work that runs on its own virtual thread; shutdown cancels its token. */
    static Reply deferred(Work work) {
        return new Deferred(work);
    }

    /** The handler queued the request somewhere that will answer it (e.g. a session's queue). */
    static Reply pending() {
        return Pending.INSTANCE;
    }

    record Result(JsonNode value) implements Reply {}

    record Deferred(Work work) implements Reply {}

    enum Pending implements Reply {
        INSTANCE
    }

    @FunctionalInterface
    interface Work {
        JsonNode run(CancellationToken token) throws Exception;
    }
}
