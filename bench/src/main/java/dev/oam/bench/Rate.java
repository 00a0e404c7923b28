package dev.oam.bench;

import java.util.Arrays;

/**
 * Throughput of the measured rounds (items per second): the median and the spread, plus the median per-item usage of
 * the server side.
 */
record Rate(double median, double min, double max, int rounds, long items, Meter.Usage usage) {
    static Rate of(double[] perRound, long items, Meter.Usage[] usages) {
        double[] sorted = perRound.clone();
        Arrays.sort(sorted);
        int n = sorted.length;
        double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
        return new Rate(
                median, sorted[0], sorted[n - 1], n, items, usages.length == 0 ? null : Meter.Usage.median(usages));
    }
}
