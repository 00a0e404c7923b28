package dev.oam.model.llama.engine;

import java.util.Arrays;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;

/**
 * Picks the next token from one row of logits, in Java, for engines that sample themselves (the FFM engine).
 * Deterministic: the same logits, parameters and random state give the same token, whatever else the batch held.
 *
 * <p>Greedy (temperature 0) is the arg-max. Otherwise: tokens whose probability at this temperature is below e^-30 of
 * the likeliest are dropped (they cannot be drawn in practice, and this keeps a 262k vocabulary cheap), then top-k,
 * then top-p over the tempered softmax, then one draw. A mask (bit {@code i} of {@code mask[i >>> 6]}) restricts every
 * step to the allowed tokens.
 */
public final class TokenSampler {
    private static final double CUT = 30.0;

    private int[] ids = new int[256];
    private double[] weights = new double[256];

    /** The allowed token with the largest logit, ties to the lowest id; -1 when none is allowed. */
    static int argmax(float[] logits, int n, long @Nullable [] mask) {
        int best = -1;
        float bestLogit = Float.NEGATIVE_INFINITY;
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
     * One token. {@code temperature} 0 (or top-k 1) is greedy and draws nothing from {@code random}.
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
        int best = argmax(logits, n, mask);
        if (best < 0 || temperature <= 0 || topK == 1) {
            return best;
        }
        double floor = logits[best] - CUT * temperature;
        int count = 0;
        for (int i = 0; i < n; i++) {
            float l = logits[i];
            if (l >= floor && allowed(mask, i)) {
                if (count == ids.length) {
                    ids = Arrays.copyOf(ids, count * 2);
                    weights = Arrays.copyOf(weights, count * 2);
                }
                ids[count++] = i;
            }
        }
        // Sort the survivors by logit, descending (ties by id): insertion sort for few, boxed sort for many.
        sortByLogit(logits, count);
        if (topK > 0 && topK < count) {
            count = topK;
        }
        double max = logits[ids[0]];
        double sum = 0;
        for (int i = 0; i < count; i++) {
            double w = Math.exp((logits[ids[i]] - max) / temperature);
            weights[i] = w;
            sum += w;
        }
        if (topP < 1) {
            double target = Math.max(0, topP) * sum;
            double acc = 0;
            int keep = 0;
            while (keep < count) {
                acc += weights[keep++];
                if (acc >= target) {
                    break;
                }
            }
            count = Math.max(1, keep);
            sum = acc;
        }
        double r = random.nextDouble() * sum;
        for (int i = 0; i < count; i++) {
            r -= weights[i];
            if (r < 0) {
                return ids[i];
            }
        }
        return ids[count - 1];
    }

    private void sortByLogit(float[] logits, int count) {
        if (count <= 32) {
            for (int i = 1; i < count; i++) {
                int id = ids[i];
                int j = i - 1;
                while (j >= 0 && before(logits, id, ids[j])) {
                    ids[j + 1] = ids[j];
                    j--;
                }
                ids[j + 1] = id;
            }
            return;
        }
        // Pack (logit order, id) into longs: sortable floats in the high bits, the id in the low bits.
        long[] keys = new long[count];
        for (int i = 0; i < count; i++) {
            int bits = Float.floatToIntBits(logits[ids[i]]);
            int sortable = bits < 0 ? ~bits : bits | Integer.MIN_VALUE; // ascending as unsigned
            long descending = 0xFFFF_FFFFL - (sortable & 0xFFFF_FFFFL);
            keys[i] = (descending << 32 | ids[i]) ^ Long.MIN_VALUE; // unsigned order as signed
        }
        Arrays.sort(keys);
        for (int i = 0; i < count; i++) {
            ids[i] = (int) keys[i];
        }
    }

    private static boolean before(float[] logits, int a, int b) {
        return logits[a] > logits[b] || logits[a] == logits[b] && a < b;
    }
}
