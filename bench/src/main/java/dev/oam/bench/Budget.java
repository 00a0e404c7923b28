package dev.oam.bench;

/** The time the whole run may take; waits never go past it, and sections after it are skipped. */
final class Budget {
    private final long start = System.nanoTime();
    private final long total;

    Budget(long totalSeconds) {
        this.total = totalSeconds * 1_000_000_000L;
    }

    long totalNanos() {
        return total;
    }

    long remainingNanos() {
        return Math.max(0, total - (System.nanoTime() - start));
    }

    boolean exhausted() {
        return remainingNanos() == 0;
    }

    double elapsedSeconds() {
        return (System.nanoTime() - start) / 1e9;
    }
}
