package dev.oam.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Cheap counters that explain where time goes: CPU time and context switches of the server side (a child process, or
 * this JVM for in-process measurements). Context switches come from Linux {@code /proc}; elsewhere they are reported as
 * unknown (-1).
 */
final class Meter {
    /**
     * A reading of the counters.
     *
     * @param runWaitNanos time the server's threads spent runnable but waiting for a CPU (Linux schedstat), or -1
     */
    record Reading(long cpuNanos, long switches, long deliveries, long nanos, long runWaitNanos) {
        Reading(long cpuNanos, long switches, long deliveries, long nanos) {
            this(cpuNanos, switches, deliveries, nanos, -1);
        }

        /** Per-item figures between {@code this} (earlier) and {@code later}. */
        Usage perItem(Reading later, long items) {
            double cpu = cpuNanos < 0 || later.cpuNanos < 0 ? Double.NaN : (later.cpuNanos - cpuNanos) / 1e3 / items;
            double sw = switches < 0 || later.switches < 0 ? Double.NaN : (later.switches - switches) / (double) items;
            long chunks = later.deliveries - deliveries;
            double perDelivery = deliveries < 0 || chunks <= 0 ? Double.NaN : items / (double) chunks;
            double cores = cpuNanos < 0 || later.cpuNanos < 0
                    ? Double.NaN
                    : (later.cpuNanos - cpuNanos) / (double) Math.max(1, later.nanos - nanos);
            double wait = runWaitNanos < 0 || later.runWaitNanos < 0
                    ? Double.NaN
                    : (later.runWaitNanos - runWaitNanos) / 1e3 / items;
            return new Usage(cpu, sw, perDelivery, cores, wait);
        }
    }

    /**
     * @param cpuMicros server CPU microseconds per item
     * @param switches server context switches per item
     * @param itemsPerDelivery messages per pipe read (stdio) or per sink flush (in-process)
     * @param cores average cores the server kept busy
     * @param runWaitMicros microseconds per item the server's threads were ready to run but waited for a CPU: time
     *     other work on the machine took from the server, whatever the server's own design
     */
    record Usage(double cpuMicros, double switches, double itemsPerDelivery, double cores, double runWaitMicros) {
        static Usage median(Usage[] all) {
            return new Usage(med(all, 0), med(all, 1), med(all, 2), med(all, 3), med(all, 4));
        }

        private static double med(Usage[] all, int field) {
            double[] values = new double[all.length];
            for (int i = 0; i < all.length; i++) {
                Usage u = all[i];
                values[i] = switch (field) {
                    case 0 -> u.cpuMicros;
                    case 1 -> u.switches;
                    case 2 -> u.itemsPerDelivery;
                    case 3 -> u.cores;
                    default -> u.runWaitMicros;
                };
            }
            java.util.Arrays.sort(values);
            int n = values.length;
            return n == 0 ? Double.NaN : n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
        }
    }

    /** Sums of counter differences over several measured blocks. */
    static final class Totals {
        private long cpu;
        private long switches;
        private long deliveries;
        private long nanos;
        private long runWait;
        private boolean cpuKnown = true;
        private boolean switchesKnown = true;
        private boolean deliveriesKnown = true;
        private boolean runWaitKnown = true;

        void add(Reading before, Reading after) {
            cpuKnown &= before.cpuNanos() >= 0 && after.cpuNanos() >= 0;
            switchesKnown &= before.switches() >= 0 && after.switches() >= 0;
            deliveriesKnown &= before.deliveries() >= 0 && after.deliveries() >= 0;
            runWaitKnown &= before.runWaitNanos() >= 0 && after.runWaitNanos() >= 0;
            cpu += after.cpuNanos() - before.cpuNanos();
            switches += after.switches() - before.switches();
            deliveries += after.deliveries() - before.deliveries();
            nanos += after.nanos() - before.nanos();
            runWait += after.runWaitNanos() - before.runWaitNanos();
        }

        Usage perItem(long items) {
            Reading zero = new Reading(0, 0, deliveriesKnown ? 0 : -1, 0, 0);
            Reading sum = new Reading(
                    cpuKnown ? cpu : -1,
                    switchesKnown ? switches : -1,
                    deliveriesKnown ? deliveries : -1,
                    nanos,
                    runWaitKnown ? runWait : -1);
            return zero.perItem(sum, items);
        }
    }

    private Meter() {}

    /** CPU time of this JVM (all threads), or -1. */
    static long ownCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /** Voluntary plus involuntary context switches of every thread of {@code pid}, or -1. */
    static long contextSwitches(long pid) {
        Path tasks = Path.of("/proc", String.valueOf(pid), "task");
        if (!Files.isDirectory(tasks)) {
            return -1;
        }
        long total = 0;
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(tasks)) {
            for (Path task : dir) {
                try {
                    for (String line : Files.readAllLines(task.resolve("status"))) {
                        if (line.startsWith("voluntary_ctxt_switches:")
                                || line.startsWith("nonvoluntary_ctxt_switches:")) {
                            total += Long.parseLong(
                                    line.substring(line.indexOf(':') + 1).trim());
                        }
                    }
                } catch (IOException | NumberFormatException e) {
                    // a thread that ended while we looked; its switches are lost, which is fine
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return total;
    }

    /**
     * Nanoseconds every thread of {@code pid} has spent runnable but waiting for a CPU (the second field of Linux's
     * {@code /proc/<pid>/task/<tid>/schedstat}), or -1.
     */
    static long runQueueWait(long pid) {
        Path tasks = Path.of("/proc", String.valueOf(pid), "task");
        if (!Files.isDirectory(tasks)) {
            return -1;
        }
        long total = 0;
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(tasks)) {
            for (Path task : dir) {
                try {
                    String[] fields =
                            Files.readString(task.resolve("schedstat")).trim().split("\\s+");
                    total += Long.parseLong(fields[1]);
                } catch (IOException | RuntimeException e) {
                    // a thread that ended while we looked, or no schedstat: counted as nothing
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return total;
    }

    /**
     * The threads of {@code pid} whose name ({@code /proc/<pid>/task/<tid>/comm}, at most 15 characters) starts with
     * one of {@code prefixes}: their {@code schedstat} files, for {@link #runQueueWait(List)}. Empty off Linux.
     */
    static List<Path> threadStats(long pid, String... prefixes) {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> dir = Files.newDirectoryStream(Path.of("/proc", String.valueOf(pid), "task"))) {
            for (Path task : dir) {
                try {
                    String comm = Files.readString(task.resolve("comm")).trim();
                    for (String prefix : prefixes) {
                        if (comm.startsWith(prefix)) {
                            out.add(task.resolve("schedstat"));
                            break;
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    // a thread that ended while we looked
                }
            }
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
        return out;
    }

    /** Run-queue wait so far (ns) of the threads whose {@code schedstat} files are given (ended ones count 0). */
    static long runQueueWait(List<Path> stats) {
        long total = 0;
        for (Path stat : stats) {
            try {
                total += Long.parseLong(Files.readString(stat).trim().split("\\s+")[1]);
            } catch (IOException | RuntimeException e) {
                // ended
            }
        }
        return total;
    }

    /** The 1-minute load average, or null off Linux. */
    static String loadAverage() {
        try {
            String text = Files.readString(Path.of("/proc/loadavg")).trim();
            String[] parts = text.split("\\s+");
            return parts[0] + " " + parts[1] + " " + parts[2];
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
