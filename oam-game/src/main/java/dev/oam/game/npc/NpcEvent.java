package dev.oam.game.npc;

import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolRecord;

/** What happens during {@link Npc#talk}, in order (the {@code npc/event} types). */
public sealed interface NpcEvent {
    record ToolCallStarted(ToolCall call, String execution) implements NpcEvent {}

    record ToolCallCompleted(ToolRecord record) implements NpcEvent {}

    /** The spoken line or the emotion changed (streaming); replaying these ends exactly at the final line. */
    record Line(LineTracker.Event change) implements NpcEvent {}

    /**
     * Receives a talk's events in order, on the talking thread unless it {@linkplain #acceptsReplyThread() accepts} the
     * thread completing a tool's reply.
     */
    @FunctionalInterface
    interface Listener {
        Listener NONE = event -> {};

        void onEvent(NpcEvent event);

        /**
         * Whether {@link ToolCallCompleted} may reach this listener on the thread completing the tool's reply, as
         * {@link dev.oam.core.agent.TurnListener#acceptsReplyThread()} says of a turn's listener (never two calls at
         * once; it returns at once without blocking). Default false: every event on the talking thread.
         */
        default boolean acceptsReplyThread() {
            return false;
        }
    }
}
