package dev.oam.bench;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** A line handler that runs one measurement and signals when it is done or failed. */
abstract class Probe implements LineHandler {
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile String error;

    final void finish() {
        done.countDown();
    }

    final void fail(String message) {
        if (error == null) {
            error = message;
        }
        done.countDown();
    }

    /** Waits until the probe finished, the channel failed, or the deadline passed (then throws). */
    final void await(Channel channel, Budget budget, long timeoutNanos, String what) throws BenchException {
        long start = System.nanoTime();
        long deadline = start + Math.min(timeoutNanos, budget.remainingNanos());
        try {
            while (!done.await(20, TimeUnit.MILLISECONDS)) {
                if (channel.failure() != null) {
                    throw new BenchException(what + ": " + channel.failure() + channel.diagnostics());
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new BenchException(what + ": no result after " + Math.round((System.nanoTime() - start) / 1e9)
                            + " s" + progress() + channel.diagnostics());
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException(what + ": interrupted");
        }
        if (error != null) {
            throw new BenchException(what + ": " + error + channel.diagnostics());
        }
    }

    /** Extra words for a timeout message, e.g. how far the probe got. */
    String progress() {
        return "";
    }

    /** True when the first 80 characters of a response line contain {@code "result"} (not {@code "error"}). */
    static boolean isResult(byte[] bytes, int offset, int length) {
        int limit = offset + Math.min(length, 80) - 8;
        for (int i = offset; i <= limit; i++) {
            if (bytes[i] == '"'
                    && bytes[i + 1] == 'r'
                    && bytes[i + 2] == 'e'
                    && bytes[i + 3] == 's'
                    && bytes[i + 4] == 'u'
                    && bytes[i + 5] == 'l'
                    && bytes[i + 6] == 't'
                    && bytes[i + 7] == '"') {
                return true;
            }
        }
        return false;
    }

    static boolean isResult(String line) {
        int limit = Math.min(line.length(), 80) - 8;
        for (int i = 0; i <= limit; i++) {
            if (line.startsWith("\"result\"", i)) {
                return true;
            }
        }
        return false;
    }

    static String shorten(String line) {
        return line.length() > 300 ? line.substring(0, 300) + "…" : line;
    }
}
