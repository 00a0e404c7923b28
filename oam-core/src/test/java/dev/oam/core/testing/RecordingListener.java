package dev.oam.core.testing;

import dev.oam.core.agent.Step;
import dev.oam.core.agent.TurnEvent;
import dev.oam.core.agent.TurnListener;
import dev.oam.core.tool.ToolRecord;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** Records a turn's events; tests on other threads can wait for one. Thread-safe. */
public final class RecordingListener implements TurnListener {
    private static final Duration WAIT = Duration.ofSeconds(10);

    private final List<TurnEvent> events = new ArrayList<>(); // guarded by this

    @Override
    public synchronized void onEvent(TurnEvent event) {
        events.add(event);
        notifyAll();
    }

    public synchronized List<TurnEvent> events() {
        return List.copyOf(events);
    }

    public <T extends TurnEvent> List<T> ofType(Class<T> type) {
        return events().stream().filter(type::isInstance).map(type::cast).toList();
    }

    public List<Step> steps() {
        return ofType(TurnEvent.ModelStep.class).stream()
                .map(TurnEvent.ModelStep::step)
                .toList();
    }

    public List<TurnEvent.Text> texts() {
        return ofType(TurnEvent.Text.class);
    }

    public List<ToolRecord> completedTools() {
        return ofType(TurnEvent.ToolCallCompleted.class).stream()
                .map(TurnEvent.ToolCallCompleted::record)
                .toList();
    }

    /** Waits for the first recorded event of {@code type} that matches. */
    public synchronized <T extends TurnEvent> T await(Class<T> type, Predicate<? super T> matching) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            for (TurnEvent event : events) {
                if (type.isInstance(event) && matching.test(type.cast(event))) {
                    return type.cast(event);
                }
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("no " + type.getSimpleName() + " event arrived; events: " + events);
            }
            try {
                wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted", e);
            }
        }
    }

    public <T extends TurnEvent> T await(Class<T> type) {
        return await(type, event -> true);
    }
}
