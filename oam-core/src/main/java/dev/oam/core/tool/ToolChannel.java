package dev.oam.core.tool;

import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * How a turn reaches the engine that executes its client tools. The bridge implements it with {@code tool/call}
 * requests; tests implement it directly.
 */
public interface ToolChannel {
    /** Sends one call; never blocks on the engine's answer. */
    PendingCall send(ToolCall call);

    /**
     * Like {@link #send(ToolCall)}, and calls {@code beforeSending} with the pending call before the call can reach the
     * engine, so a callback attached to its {@linkplain PendingCall#reply reply} there runs on the thread completing
     * the reply however soon the reply comes (not on the caller's, after {@code send} returned). Default: sends, then
     * calls it.
     */
    default PendingCall send(ToolCall call, Consumer<? super PendingCall> beforeSending) {
        PendingCall pending = send(call);
        beforeSending.accept(pending);
        return pending;
    }

    /**
     * {@code "client"} for tools the engine runs through {@code tool/call}, {@code "local"} for tools run inside the
     * bridge.
     */
    default String execution(String toolName) {
        return "client";
    }

    /** A call the engine has not answered yet. */
    interface PendingCall {
        /** Completes with the engine's reply; never completes exceptionally. */
        CompletableFuture<ToolReply> reply();

        /** The turn no longer needs the output ({@code tool/cancel}); a later reply is ignored. */
        void abandon(String reason);
    }

    /** A channel whose engine has no tools: every call gets an error output. */
    ToolChannel NONE = call -> new PendingCall() {
        @Override
        public CompletableFuture<ToolReply> reply() {
            return CompletableFuture.completedFuture(
                    ToolReply.error("No engine is connected to run '" + call.name() + "'."));
        }

        @Override
        public void abandon(String reason) {}
    };
}
