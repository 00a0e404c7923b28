package dev.oam.core.internal;

import dev.oam.core.Environment;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * Named event counters for measuring which path the code took (e.g. whether a tool reply was announced on the thread
 * that read it), off unless the JVM runs with {@code -Doam.debug.counters=true}; then they are printed to standard
 * error when the JVM exits, one line: {@code oam debug counters: name=count ...}. Not a metrics API: call sites test
 * {@link #ENABLED} first, so a disabled counter costs nothing once compiled.
 */
public final class DebugCounters {
    /** Whether counting is on ({@code -Doam.debug.counters=true}); fixed for the JVM's life. */
    public static final boolean ENABLED =
            "true".equalsIgnoreCase(Environment.system().property("oam.debug.counters"));

    private static final Map<String, LongAdder> COUNTS = new ConcurrentHashMap<>();

    static {
        if (ENABLED) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> System.err.println(line()), "oam-debug-counters"));
        }
    }

    private DebugCounters() {}

    /** Adds one to {@code name} (when {@link #ENABLED}). */
    public static void count(String name) {
        if (ENABLED) {
            COUNTS.computeIfAbsent(name, k -> new LongAdder()).increment();
        }
    }

    /** The counts so far, by name. */
    public static Map<String, Long> snapshot() {
        Map<String, Long> out = new TreeMap<>();
        COUNTS.forEach((name, count) -> out.put(name, count.sum()));
        return out;
    }

    static String line() {
        StringBuilder out = new StringBuilder("oam debug counters:");
        snapshot()
                .forEach((name, count) ->
                        out.append(' ').append(name).append('=').append(count));
        return out.toString();
    }
}
