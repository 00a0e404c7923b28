package dev.oam.model.llama.engine;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.IntPredicate;
import org.jspecify.annotations.Nullable;

/**
 * Picks the next token from one row of logits, in Java, for engines that sample themselves (the FFM engine).
 * Deterministic: the same logits, parameters and random state give the same token, whatever else the batch held.
 *
 * <p>The chain is llama.cpp's: the repetition penalties and DRY ({@link #penalize}, applied to the row once, before any
 * pick), then top-k, typical-p, top-p, min-p, XTC, the temperature and one draw. Top-p, typical-p and min-p are
 * measured at temperature 1, as in llama.cpp, where the temperature comes last. Greedy (temperature 0, or top-k 1) is
 * the arg-max of the penalised row. A mask (bit {@code i} of {@code mask[i >>> 6]}) restricts every step to the allowed
 * tokens, so no cut and no penalty can leave a grammar without a token: the best allowed token always survives.
 *
 * <p>Cost: a sampled step reads an unmasked row once, as a greedy one does: one pass finds the best logit and keeps the
 * tokens within a window of the best seen so far. Tokens whose probability is below e^-30 of the likeliest (at the
 * draw's temperature and at 1) are never candidates, min-p narrows that window, and with top-k the candidates are first
 * looked for within {@value #NEAR} logits of the best (on Gemma's 262,144-token vocabulary, a few dozen), the whole
 * window only when fewer than k are there. Top-k is a selection, not a sort; top-p sorts only a growing head of the
 * candidates. Buffers are reused: no allocation per token once they have grown. One instance per thread.
 */
public final class TokenSampler {
    private static final double CUT = 30.0;
    /** With top-k, candidates are first looked for this close to the best logit (at temperature 1). */
    static final double NEAR = 10.0;
    /** The head top-p sorts first when the candidates are many. */
    private static final int HEAD = 512;
    /** The longest repeat DRY measures. */
    static final int DRY_MAX_MATCH = 64;
    /** The largest DRY exponent (length over the allowed length): keeps the penalty finite. */
    private static final int DRY_MAX_EXPONENT = 40;

    /** Candidates: (descending logit, ascending id) packed so that ascending order is the sampler's preference. */
    private long[] keys = new long[1024];

    private long[] scratch = new long[256];
    private double[] weights = new double[1024];
    /** Per token, zero between calls: the repetition counts, then DRY's longest repeat. */
    private int[] perToken = new int[0];

    private int[] touched = new int[256];

    /** The allowed token with the largest logit, ties to the lowest id; -1 when none is allowed. */
    static int argmax(float[] logits, int n, long @Nullable [] mask) {
        int best = -1;
        float bestLogit = Float.NEGATIVE_INFINITY;
        if (mask == null) {
            for (int i = 0; i < n; i++) {
                float l = logits[i];
                if (l > bestLogit || best < 0 && !Float.isNaN(l)) {
                    best = i;
                    bestLogit = l;
                }
            }
            return best;
        }
        for (int i = 0; i < n; i++) {
            float l = logits[i];
            if ((best < 0 || l > bestLogit) && allowed(mask, i) && !Float.isNaN(l)) {
                best = i;
                bestLogit = l;
            }
        }
        return best;
    }

    static boolean allowed(long @Nullable [] mask, int token) {
        return mask == null || (mask[token >>> 6] & 1L << token) != 0;
    }

    /**
     * One token with temperature, top-k and top-p only. {@code temperature} 0 (or top-k 1) is greedy and draws nothing
     * from {@code random}.
     *
     * @return the token, or -1 when the mask allows none
     */
    public int sample(
            float[] logits,
            int n,
            long @Nullable [] mask,
            double temperature,
            int topK,
            double topP,
            SplittableRandom random) {
        return sample(logits, n, mask, temperature, topK, topP, SamplerExtras.NONE, random);
    }

    /**
     * One token. Penalties are not applied here ({@link #penalize}); XTC draws from {@code random} only when it is on
     * and two or more candidates are left.
     *
     * @return the token, or -1 when the mask allows none
     */
    public int sample(
            float[] logits,
            int n,
            long @Nullable [] mask,
            double temperature,
            int topK,
            double topP,
            SamplerExtras x,
            SplittableRandom random) {
        double spread = Math.max(1, temperature);
        double gap = CUT * spread;
        if (x.minP() > 0) {
            gap = Math.min(gap, -Math.log(x.minP()));
        }
        double window = topK > 0 ? Math.min(gap, NEAR * spread) : gap;
        int best;
        int count;
        if (mask == null && temperature > 0 && topK != 1) {
            // One pass: the arg-max and the tokens within the window of the best so far, then those of the best.
            count = scan(logits, n, window);
            best = count > 0 ? id(keys[0]) : -1;
        } else {
            best = argmax(logits, n, mask);
            if (best < 0 || temperature <= 0 || topK == 1 || !Float.isFinite(logits[best])) {
                return best;
            }
            count = gather(logits, n, mask, logits[best] - window);
        }
        if (best < 0 || !Float.isFinite(logits[best])) {
            return best;
        }
        double max = logits[best];
        if (count < topK && window < gap) {
            count = gather(logits, n, mask, max - gap);
        }
        boolean sorted = false;
        if (topK > 0 && count > topK) {
            select(keys, 0, count, topK);
            count = topK;
        }
        if (x.typicalP() < 1 && count > 1) {
            count = typical(logits, count, x.typicalP());
            sorted = true;
        }
        if (topP < 1 && count > 1) {
            count = topP(logits, count, Math.max(0, topP), sorted);
            sorted = true;
        }
        if (x.xtc() && count > 1) {
            if (!sorted) {
                Arrays.sort(keys, 0, count);
                sorted = true;
            }
            count = xtc(logits, count, x, random);
        }
        // The draw at the temperature, relative to the best logit left.
        double top = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) {
            top = Math.max(top, logits[id(keys[i])]);
        }
        ensureWeights(count);
        double sum = 0;
        for (int i = 0; i < count; i++) {
            double w = Math.exp((logits[id(keys[i])] - top) / temperature);
            weights[i] = w;
            sum += w;
        }
        double r = random.nextDouble() * sum;
        for (int i = 0; i < count; i++) {
            r -= weights[i];
            if (r < 0) {
                return id(keys[i]);
            }
        }
        return id(keys[count - 1]);
    }

    /**
     * Applies the repeat, presence and frequency penalties and DRY to {@code logits} in place, from the context
     * {@code tokens[0, size)} (prompt and output). A penalty lowers a logit by a finite amount and never removes a
     * token, so a grammar's only allowed token stays allowed.
     *
     * @param breaker whether a token ends a DRY match (its text holds a sequence breaker)
     */
    public void penalize(float[] logits, int n, int[] tokens, int size, SamplerExtras x, IntPredicate breaker) {
        if (x.penalizes() && size > 0) {
            ensurePerToken(n);
            int from = x.repeatLastN() < 0 ? 0 : Math.max(0, size - x.repeatLastN());
            int seen = 0;
            for (int i = from; i < size; i++) {
                int t = tokens[i];
                if (t >= 0 && t < n && perToken[t]++ == 0) {
                    touched = grow(touched, seen);
                    touched[seen++] = t;
                }
            }
            float repeat = (float) x.repeatPenalty();
            for (int k = 0; k < seen; k++) {
                int t = touched[k];
                float l = logits[t];
                if (repeat != 1) {
                    l = l <= 0 ? l * repeat : l / repeat;
                }
                logits[t] = (float) (l - perToken[t] * x.frequencyPenalty() - x.presencePenalty());
                perToken[t] = 0;
            }
        }
        if (x.dry() && size > 1) {
            dry(logits, n, tokens, size, x, breaker);
        }
    }

    /**
     * DRY: for every earlier place the context's last tokens occur (a match of length ≥ the allowed length, not across
     * a breaker), the token that followed there is penalised by {@code multiplier * base^(length - allowed)}, the
     * longest match counting.
     */
    private void dry(float[] logits, int n, int[] tokens, int size, SamplerExtras x, IntPredicate breaker) {
        int last = size - 1;
        if (breaker.test(tokens[last])) {
            return;
        }
        ensurePerToken(n);
        int from = x.dryPenaltyLastN() < 0 ? 0 : Math.max(0, size - x.dryPenaltyLastN());
        int allowed = x.dryAllowedLength();
        int seen = 0;
        for (int j = last - 1; j >= from; j--) {
            int len = 0;
            while (len < DRY_MAX_MATCH
                    && j - len >= from
                    && tokens[j - len] == tokens[last - len]
                    && !breaker.test(tokens[j - len])) {
                len++;
            }
            if (len >= allowed) {
                int next = tokens[j + 1];
                if (next >= 0 && next < n && len > perToken[next]) {
                    if (perToken[next] == 0) {
                        touched = grow(touched, seen);
                        touched[seen++] = next;
                    }
                    perToken[next] = len;
                }
            }
        }
        for (int k = 0; k < seen; k++) {
            int t = touched[k];
            int exponent = Math.min(DRY_MAX_EXPONENT, perToken[t] - allowed);
            logits[t] = (float) (logits[t] - x.dryMultiplier() * Math.pow(x.dryBase(), exponent));
            perToken[t] = 0;
        }
    }

    /**
     * One pass over an unmasked row: fills {@link #keys} with the tokens within {@code window} of the largest logit,
     * the arg-max (ties to the lowest id) first; returns how many. Tokens within the window of the largest logit seen
     * so far are kept as the pass goes, and those the final maximum leaves out are dropped at the end.
     */
    private int scan(float[] logits, int n, double window) {
        int count = 0;
        int best = -1;
        float max = Float.NEGATIVE_INFINITY;
        // A first floor from a strided look at the row: the best logit is at least the best seen there, so nothing a
        // candidate could be is below it, and the pass stores few tokens before it meets the best.
        float seen = Float.NEGATIVE_INFINITY;
        for (int i = 0; i < n; i += 97) {
            seen = Math.max(seen, logits[i]);
        }
        double floor = Float.isNaN(seen) ? Double.NEGATIVE_INFINITY : seen - window;
        for (int i = 0; i < n; i++) {
            float l = logits[i];
            if (l >= floor) {
                if (l > max || best < 0) {
                    best = i;
                    max = l;
                    floor = l - window;
                }
                if (count == keys.length) {
                    count = compact(logits, count, floor);
                    if (count == keys.length) {
                        keys = Arrays.copyOf(keys, Math.min(n, count * 2));
                    }
                }
                keys[count++] = key(l, i);
            }
        }
        if (best < 0) {
            return 0;
        }
        count = compact(logits, count, floor);
        // the arg-max first: greedy callers and ties read keys[0]
        for (int i = 0; i < count; i++) {
            if (id(keys[i]) == best) {
                swap(keys, 0, i);
                break;
            }
        }
        return count;
    }

    /** Drops the keys of tokens below {@code floor}; returns how many are left. */
    private int compact(float[] logits, int count, double floor) {
        int kept = 0;
        for (int i = 0; i < count; i++) {
            if (logits[id(keys[i])] >= floor) {
                keys[kept++] = keys[i];
            }
        }
        return kept;
    }

    /** Fills {@link #keys} with the allowed tokens at or above {@code floor}; returns how many. */
    private int gather(float[] logits, int n, long @Nullable [] mask, double floor) {
        int count = 0;
        if (mask == null) {
            for (int i = 0; i < n; i++) {
                float l = logits[i];
                if (l >= floor) {
                    if (count == keys.length) {
                        keys = Arrays.copyOf(keys, Math.min(n, count * 2));
                    }
                    keys[count++] = key(l, i);
                }
            }
            return count;
        }
        for (int i = 0; i < n; i++) {
            float l = logits[i];
            if (l >= floor && allowed(mask, i)) {
                if (count == keys.length) {
                    keys = Arrays.copyOf(keys, Math.min(n, count * 2));
                }
                keys[count++] = key(l, i);
            }
        }
        return count;
    }

    /** Top-p at temperature 1: the head of the candidates holding {@code p} of their mass (at least one). */
    private int topP(float[] logits, int count, double p, boolean sorted) {
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) {
            max = Math.max(max, logits[id(keys[i])]);
        }
        double total = 0;
        for (int i = 0; i < count; i++) {
            total += Math.exp(logits[id(keys[i])] - max);
        }
        double target = p * total;
        int head = sorted ? count : Math.min(count, HEAD);
        while (true) {
            if (!sorted) {
                if (head < count) {
                    select(keys, 0, count, head);
                }
                Arrays.sort(keys, 0, head);
            }
            double acc = 0;
            for (int i = 0; i < head; i++) {
                acc += Math.exp(logits[id(keys[i])] - max);
                if (acc >= target) {
                    return i + 1;
                }
            }
            if (head == count) {
                return count;
            }
            head = Math.min(count, head * 8);
        }
    }

    /**
     * Locally typical sampling (llama.cpp's): the tokens whose surprise is closest to the entropy, until they hold
     * {@code p} of the mass; left sorted by logit.
     */
    private int typical(float[] logits, int count, double p) {
        double max = Double.NEGATIVE_INFINITY;
        for (int i = 0; i < count; i++) {
            max = Math.max(max, logits[id(keys[i])]);
        }
        ensureWeights(count);
        double total = 0;
        for (int i = 0; i < count; i++) {
            double w = Math.exp(logits[id(keys[i])] - max);
            weights[i] = w;
            total += w;
        }
        double entropy = 0;
        for (int i = 0; i < count; i++) {
            double q = weights[i] / total;
            if (q > 0) {
                entropy -= q * Math.log(q);
            }
        }
        if (scratch.length < count) {
            scratch = new long[Math.max(count, scratch.length * 2)];
        }
        for (int i = 0; i < count; i++) {
            double q = weights[i] / total;
            float score = (float) Math.abs(-Math.log(q) - entropy);
            scratch[i] = (long) Float.floatToIntBits(score) << 32 | i; // scores are ≥ 0: their bits sort as they do
        }
        Arrays.sort(scratch, 0, count);
        double acc = 0;
        int keep = count;
        for (int i = 0; i < count; i++) {
            acc += weights[(int) scratch[i]] / total;
            if (acc > p) {
                keep = i + 1;
                break;
            }
        }
        for (int i = 0; i < keep; i++) {
            scratch[i] = keys[(int) scratch[i]];
        }
        System.arraycopy(scratch, 0, keys, 0, keep);
        Arrays.sort(keys, 0, keep);
        return keep;
    }

    /**
     * XTC (llama.cpp's): with chance {@code probability}, when two or more sorted candidates are at least
     * {@code threshold} likely (at temperature 1), all of them but the least likely are dropped.
     */
    private int xtc(float[] logits, int count, SamplerExtras x, SplittableRandom random) {
        if (random.nextDouble() > x.xtcProbability()) {
            return count;
        }
        double max = logits[id(keys[0])];
        double total = 0;
        for (int i = 0; i < count; i++) {
            total += Math.exp(logits[id(keys[i])] - max);
        }
        int last = 0;
        for (int i = 0; i < count; i++) {
            if (Math.exp(logits[id(keys[i])] - max) / total >= x.xtcThreshold()) {
                last = i;
            } else {
                break;
            }
        }
        if (last == 0) {
            return count;
        }
        System.arraycopy(keys, last, keys, 0, count - last);
        return count - last;
    }

    /** The preference key of {@code token}: ascending keys are descending logits, ties to the lowest id. */
    static long key(float logit, int token) {
        int bits = Float.floatToIntBits(logit);
        int sortable = bits < 0 ? ~bits : bits | Integer.MIN_VALUE; // ascending as unsigned
        long descending = 0xFFFF_FFFFL - (sortable & 0xFFFF_FFFFL);
        return (descending << 32 | token) ^ Long.MIN_VALUE; // unsigned order as signed
    }

    static int id(long key) {
        return (int) key;
    }

    /** Moves the {@code k} smallest of {@code a[from, to)} to {@code a[from, from + k)}, in no order. */
    static void select(long[] a, int from, int to, int k) {
        int lo = from;
        int hi = to - 1;
        int target = from + k - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            // median of three as the pivot
            if (a[mid] < a[lo]) {
                swap(a, mid, lo);
            }
            if (a[hi] < a[lo]) {
                swap(a, hi, lo);
            }
            if (a[hi] < a[mid]) {
                swap(a, hi, mid);
            }
            long pivot = a[mid];
            int i = lo;
            int j = hi;
            while (i <= j) {
                while (a[i] < pivot) {
                    i++;
                }
                while (a[j] > pivot) {
                    j--;
                }
                if (i <= j) {
                    swap(a, i, j);
                    i++;
                    j--;
                }
            }
            if (target <= j) {
                hi = j;
            } else if (target >= i) {
                lo = i;
            } else {
                return;
            }
        }
    }

    private static void swap(long[] a, int i, int j) {
        long t = a[i];
        a[i] = a[j];
        a[j] = t;
    }

    private void ensureWeights(int count) {
        if (weights.length < count) {
            weights = new double[Math.max(count, weights.length * 2)];
        }
    }

    private void ensurePerToken(int n) {
        if (perToken.length < n) {
            perToken = new int[n];
        }
    }

    private static int[] grow(int[] a, int used) {
        return used < a.length ? a : Arrays.copyOf(a, a.length * 2);
    }
}
