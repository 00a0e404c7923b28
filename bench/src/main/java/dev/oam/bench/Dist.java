package dev.oam.bench;

import java.util.Arrays;

/** A latency distribution (nanoseconds): nearest-rank percentiles. */
record Dist(int count, long p50, long p90, long p99, long max, long min) {
    static Dist of(long[] samples, int from, int to) {
        long[] sorted = Arrays.copyOfRange(samples, from, to);
        Arrays.sort(sorted);
        if (sorted.length == 0) {
            return new Dist(0, 0, 0, 0, 0, 0);
        }
        return new Dist(
                sorted.length,
                rank(sorted, 0.50),
                rank(sorted, 0.90),
                rank(sorted, 0.99),
                sorted[sorted.length - 1],
                sorted[0]);
    }

    static Dist of(long[] samples) {
        return of(samples, 0, samples.length);
    }

    private static long rank(long[] sorted, double q) {
        int index = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }
}
