package dev.oam.model.llama.engine;

import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.function.Consumer;

/**
 * The events of one {@link Generation}: the thread that computes posts {@link Event}s, the caller takes them in
 * {@link #await} and runs {@code onDelta} itself. Once cancelled, a request ends cancelled even if its result is
 * already queued.
 */
public final class GenerationEvents {
    /** Sent from the computing thread to the caller. */
    public sealed interface Event {}

    public record Delta(String text) implements Event {}

    public record Done(EngineResult result) implements Event {}

    public record Failed(Throwable error) implements Event {}

    public record Cancelled() implements Event {}

    private final LinkedBlockingQueue<Event> events = new LinkedBlockingQueue<>();

    void add(Event event) {
        events.add(event);
    }

    /** Runs on the caller's thread: forwards deltas until the request ends or {@code token} is cancelled. */
    EngineResult await(Generation generation, Consumer<String> onDelta, CancellationToken token) throws AgentException {
        Runnable onCancel = generation::cancel;
        token.onCancel(onCancel);
        try {
            while (true) {
                Event event;
                try {
                    event = events.take();
                } catch (InterruptedException e) {
                    generation.cancel();
                    generation.waitAfterCancel();
                    Thread.currentThread().interrupt();
                    throw AgentException.cancelled();
                }
                if (generation.cancelRequested() || event instanceof Cancelled) {
                    generation.waitAfterCancel();
                    if (generation.engineClosed() && !token.isCancelled()) {
                        throw SlotTable.closedError();
                    }
                    throw AgentException.cancelled();
                }
                switch (event) {
                    case Delta d -> {
                        try {
                            onDelta.accept(d.text());
                        } catch (RuntimeException | Error e) {
                            generation.cancel();
                            generation.waitAfterCancel();
                            throw e;
                        }
                    }
                    case Done d -> {
                        return d.result();
                    }
                    case Failed f -> throw generation.failure(f.error());
                    case Cancelled c -> throw new IllegalStateException("handled above");
                }
            }
        } finally {
            token.removeListener(onCancel);
        }
    }
}
