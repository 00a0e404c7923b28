package dev.oam.testing;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** A client wired straight to an in-process {@link BridgeEngine}. */
public final class InMemoryClient implements ProtocolClient {
    private final BridgeEngine engine;
    private final Inbox inbox = new Inbox();
    private final CountDownLatch stopped = new CountDownLatch(1);

    private InMemoryClient(BridgeConfiguration.Builder configuration) {
        this.engine =
                new BridgeEngine(configuration.onShutdown(stopped::countDown).build(), inbox::accept);
    }

    public static InMemoryClient connect(BridgeConfiguration.Builder configuration) {
        return new InMemoryClient(configuration);
    }

    /**
     * An engine configured as {@code oam stdio} would be by these flags (the ones the contract suites pass:
     * {@code --max-sessions}, {@code --tool-timeout}, {@code --no-scripted-models}; {@code --log-level} is ignored),
     * with the model backends on the class path.
     */
    public static InMemoryClient connectWithFlags(String... flags) {
        BridgeConfiguration.Builder builder = BridgeConfiguration.builder();
        for (int i = 0; i < flags.length; i++) {
            switch (flags[i]) {
                case "--max-sessions" -> builder.maxSessions(Integer.parseInt(flags[++i]));
                case "--tool-timeout" ->
                    builder.defaultToolTimeout(Duration.ofMillis((long) (Double.parseDouble(flags[++i]) * 1000)));
                case "--no-scripted-models" -> builder.allowsScriptedModels(false);
                case "--log-level" -> i++;
                default -> throw new IllegalArgumentException("unknown flag " + flags[i]);
            }
        }
        return connect(builder);
    }

    public BridgeEngine engine() {
        return engine;
    }

    @Override
    public void send(byte[] line) {
        engine.receive(line, 0, line.length);
    }

    @Override
    public JsonNode poll(Duration timeout) throws InterruptedException {
        return inbox.poll(timeout);
    }

    @Override
    public List<String> garbage() {
        return inbox.garbage();
    }

    @Override
    public void endInput() {
        Thread.ofVirtual().start(() -> {
            try {
                engine.awaitIdle(Duration.ofDays(1));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            engine.close();
            stopped.countDown();
        });
    }

    @Override
    public boolean awaitStopped(Duration timeout) throws InterruptedException {
        return stopped.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public int exitCode() {
        return 0;
    }

    @Override
    public void close() {
        engine.close();
    }
}
