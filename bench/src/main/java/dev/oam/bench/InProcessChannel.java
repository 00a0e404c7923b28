package dev.oam.bench;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.MessageSink;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link BridgeEngine} in this JVM. Lines go in through {@link BridgeEngine#receive(String)} on the caller's thread
 * and come out on the engine's writer thread (the sink).
 *
 * <p>Two delivery modes: <em>direct</em> (the handler runs inside the sink; used by counters) and <em>driver</em> (the
 * sink stamps the time and hands the line to a separate client thread, as a game host's main thread would receive it;
 * the client reacts there, so it never calls back into the engine from the writer thread).
 */
final class InProcessChannel extends Channel {
    private record Timed(String line, long nanos) {}

    private static final Timed STOP = new Timed("", 0);

    private final BridgeEngine engine;
    private final LinkedBlockingQueue<Timed> toDriver = new LinkedBlockingQueue<>();
    private final Thread driver;
    private volatile boolean viaDriver;
    private volatile long flushes;

    InProcessChannel(String name) {
        super(name);
        this.engine = BridgeEngine.withSink(BridgeConfiguration.defaults(), new MessageSink() {
            @Override
            public void send(String line) {
                deliver(line);
            }

            @Override
            public void flush() {
                flushes++;
            }
        });
        this.driver = Thread.ofPlatform().daemon().name(name + "-driver").start(this::driveLoop);
    }

    /** Whether lines are handed to the driver thread (true) or handled in the sink (false). */
    @Override
    void clientThreadDelivery(boolean on) {
        this.viaDriver = on;
    }

    private void deliver(String line) {
        long now = System.nanoTime();
        if (viaDriver) {
            toDriver.offer(new Timed(line, now));
            return;
        }
        try {
            handler().onLine(line, now);
        } catch (RuntimeException e) {
            fail("the line handler failed: " + e);
        }
    }

    private void driveLoop() {
        try {
            while (true) {
                Timed item = toDriver.poll(1, TimeUnit.SECONDS);
                if (item == null) {
                    continue;
                }
                if (item == STOP) {
                    return;
                }
                try {
                    handler().onLine(item.line(), item.nanos());
                } catch (RuntimeException e) {
                    fail("the line handler failed: " + e);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    Meter.Reading reading() {
        long pid = ProcessHandle.current().pid();
        return new Meter.Reading(
                Meter.ownCpuNanos(), Meter.contextSwitches(pid), flushes, System.nanoTime(), Meter.runQueueWait(pid));
    }

    @Override
    void send(String line) {
        engine.receive(line);
    }

    @Override
    void flush() {}

    @Override
    public void close() {
        engine.close();
        toDriver.offer(STOP);
        try {
            driver.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
