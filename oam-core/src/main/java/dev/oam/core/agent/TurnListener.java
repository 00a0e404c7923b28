package dev.oam.core.agent;

/** Receives a turn's events on the turn's thread, in order. */
@FunctionalInterface
public interface TurnListener {
    TurnListener NONE = event -> {};

    void onEvent(TurnEvent event);
}
