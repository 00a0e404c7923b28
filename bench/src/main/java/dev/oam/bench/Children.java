package dev.oam.bench;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/** Every child process the harness started, so they are all destroyed at the end, also on failure. */
final class Children {
    private static final List<Process> PROCESSES = new CopyOnWriteArrayList<>();

    private Children() {}

    static void register(Process process) {
        PROCESSES.add(process);
    }

    /** Stops one child: it normally exits on end of input; otherwise destroy, then destroy forcibly. */
    static void stop(Process process, long graceMillis) {
        try {
            if (!process.waitFor(graceMillis, TimeUnit.MILLISECONDS)) {
                process.destroy();
                if (!process.waitFor(2, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                    process.waitFor(2, TimeUnit.SECONDS);
                }
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        } finally {
            PROCESSES.remove(process);
        }
    }

    static void destroyAll() {
        for (Process process : PROCESSES) {
            if (process.isAlive()) {
                process.destroyForcibly();
            }
        }
        PROCESSES.clear();
    }
}
