package dev.oam.game.npc;

import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolRecord;

/** What happens during {@link Npc#talk}, in order (the {@code npc/event} types). */
public sealed interface NpcEvent {
    record ToolCallStarted(ToolCall call, String execution) implements NpcEvent {}

    record ToolCallCompleted(ToolRecord record) implements NpcEvent {}

    /** The spoken line or the emotion changed (streaming); replaying these ends exactly at the final line. */
    record Line(LineTracker.Event change) implements NpcEvent {}

    /** Receives a talk's events on the talking thread, in order. */
    @FunctionalInterface
    interface Listener {
        Listener NONE = event -> {};

        void onEvent(NpcEvent event);
    }
}
