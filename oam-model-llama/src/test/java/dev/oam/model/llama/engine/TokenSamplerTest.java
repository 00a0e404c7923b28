package dev.oam.model.llama.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class TokenSamplerTest {
    private static final float[] LOGITS = {1f, -3f, 4f, 4f, -0.5f, 2f, -7f, 0f};

    @Test
    void greedyIsTheArgmaxWithTiesToTheLowestIdAndRespectsTheMask() {
        assertThat(TokenSampler.argmax(LOGITS, LOGITS.length, null)).isEqualTo(2);
        long[] mask = {1L << 5 | 1L << 6};
        assertThat(TokenSampler.argmax(LOGITS, LOGITS.length, mask)).isEqualTo(5);
        assertThat(TokenSampler.argmax(LOGITS, LOGITS.length, new long[1])).isEqualTo(-1);
    }

    @Test
    void topKOneAndATinyTopPAreGreedyAndASeedRepeats() {
        TokenSampler sampler = new TokenSampler();
        float[] many = new float[300];
        for (int i = 0; i < many.length; i++) {
            many[i] = (float) Math.sin(i * 0.37) * 3 - (i % 7 == 0 ? 2 : 0);
        }
        int best = TokenSampler.argmax(many, many.length, null);
        assertThat(sampler.sample(many, many.length, null, 1.5, 1, 1, new SplittableRandom(1)))
                .isEqualTo(best);
        assertThat(sampler.sample(many, many.length, null, 1.5, 0, 1e-6, new SplittableRandom(1)))
                .isEqualTo(best);
        int first = sampler.sample(many, many.length, null, 1.0, 0, 1, new SplittableRandom(9));
        assertThat(sampler.sample(many, many.length, null, 1.0, 0, 1, new SplittableRandom(9)))
                .isEqualTo(first);
        Set<Integer> seen = new HashSet<>();
        SplittableRandom random = new SplittableRandom(3);
        for (int i = 0; i < 200; i++) {
            seen.add(sampler.sample(many, many.length, null, 1.0, 0, 1, random));
        }
        assertThat(seen).hasSizeGreaterThan(5);
        long[] mask = new long[5];
        mask[0] = 1L << 7 | 1L << 40;
        for (int i = 0; i < 50; i++) {
            assertThat(sampler.sample(many, many.length, mask, 2.0, 0, 1, random))
                    .isIn(7, 40);
        }
    }

    @Test
    void negativeLogitsSortBelowPositiveOnes() {
        TokenSampler sampler = new TokenSampler();
        float[] logits = new float[100];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = -5f - i * 0.01f;
        }
        logits[77] = 0.5f;
        assertThat(sampler.sample(logits, logits.length, null, 1.0, 0, 1e-9, new SplittableRandom(4)))
                .isEqualTo(77);
        assertThat(sampler.sample(logits, logits.length, null, 1.0, 1, 1, new SplittableRandom(4)))
                .isEqualTo(77);
    }

    private static SamplerExtras extras(double minP, double xtcProbability, double xtcThreshold) {
        return new SamplerExtras(
                minP, 1, 1, 64, 0, 0, 0, 1.75, 2, -1, SamplerExtras.DEFAULT_BREAKERS, xtcProbability, xtcThreshold);
    }

    private static SamplerExtras dry(double multiplier) {
        return new SamplerExtras(0, 1, 1, 64, 0, 0, multiplier, 1.75, 2, -1, List.of("\n"), 0, 0.1);
    }

    /** Probabilities (at temperature 1) 0.5, 0.3, 0.15, 0.05 for tokens 0 to 3. */
    private static float[] fourTokens() {
        return new float[] {(float) Math.log(0.5), (float) Math.log(0.3), (float) Math.log(0.15), (float) Math.log(0.05)
        };
    }

    private static Set<Integer> drawn(TokenSampler sampler, float[] logits, SamplerExtras x, long seed) {
        Set<Integer> seen = new HashSet<>();
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < 2000; i++) {
            seen.add(sampler.sample(logits, logits.length, null, 1.0, 0, 1, x, random));
        }
        return seen;
    }

    @Test
    void minPDropsTokensLessLikelyThanItsShareOfTheBest() {
        TokenSampler sampler = new TokenSampler();
        assertThat(drawn(sampler, fourTokens(), SamplerExtras.NONE, 1)).containsExactlyInAnyOrder(0, 1, 2, 3);
        // 0.05 < 0.2 * 0.5 ≤ 0.15: token 3 goes
        assertThat(drawn(sampler, fourTokens(), extras(0.2, 0, 0.1), 1)).containsExactlyInAnyOrder(0, 1, 2);
        // 0.15 < 0.5 * 0.5 ≤ 0.3
        assertThat(drawn(sampler, fourTokens(), extras(0.5, 0, 0.1), 1)).containsExactlyInAnyOrder(0, 1);
        assertThat(drawn(sampler, fourTokens(), extras(1, 0, 0.1), 1)).containsExactly(0);
        long[] mask = {1L << 3};
        assertThat(sampler.sample(fourTokens(), 4, mask, 1.0, 0, 1, extras(1, 0, 0.1), new SplittableRandom(1)))
                .as("min-p is measured against the best allowed token: a grammar never loses its only token")
                .isEqualTo(3);
    }

    @Test
    void xtcDropsTheTopChoicesButTheLeastLikelyAboveTheThreshold() {
        TokenSampler sampler = new TokenSampler();
        // always on, threshold 0.1: tokens 0, 1 and 2 are above it; 0 and 1 go, 2 and 3 stay
        assertThat(drawn(sampler, fourTokens(), extras(0, 1, 0.1), 2)).containsExactlyInAnyOrder(2, 3);
        // threshold 0.4: only token 0 is above it, so nothing goes
        assertThat(drawn(sampler, fourTokens(), extras(0, 1, 0.4), 2)).containsExactlyInAnyOrder(0, 1, 2, 3);
        // a threshold above 0.5 is off
        assertThat(drawn(sampler, fourTokens(), extras(0, 1, 0.6), 2)).containsExactlyInAnyOrder(0, 1, 2, 3);
        // on for about half the tokens: every token is drawn, token 0 less often than without XTC
        Set<Integer> half = drawn(sampler, fourTokens(), extras(0, 0.5, 0.1), 2);
        assertThat(half).containsExactlyInAnyOrder(0, 1, 2, 3);
        long[] mask = {1L | 1L << 1};
        assertThat(sampler.sample(fourTokens(), 4, mask, 1.0, 0, 1, extras(0, 1, 0.1), new SplittableRandom(5)))
                .as("XTC keeps one allowed token")
                .isEqualTo(1);
    }

    @Test
    void seededRunsOfTheWholeChainRepeat() {
        float[] many = new float[5000];
        for (int i = 0; i < many.length; i++) {
            many[i] = (float) (Math.sin(i * 0.37) * 4 + Math.cos(i * 0.011) * 2);
        }
        SamplerExtras x = new SamplerExtras(
                0.01, 0.95, 1.1, 64, 0.2, 0.1, 0.8, 1.75, 2, -1, SamplerExtras.DEFAULT_BREAKERS, 0.5, 0.1);
        int[] history = {5, 6, 7, 5, 6, 7, 5, 6};
        int[] first = run(many, x, history, 77);
        assertThat(run(many, x, history, 77)).isEqualTo(first);
        assertThat(run(many, x, history, 78)).isNotEqualTo(first);
    }

    private static int[] run(float[] logits, SamplerExtras x, int[] history, long seed) {
        TokenSampler sampler = new TokenSampler();
        SplittableRandom random = new SplittableRandom(seed);
        int[] out = new int[40];
        for (int i = 0; i < out.length; i++) {
            float[] row = logits.clone();
            sampler.penalize(row, row.length, history, history.length, x, t -> false);
            out[i] = sampler.sample(row, row.length, null, 0.9, 40, 0.95, x, random);
        }
        return out;
    }

    @Test
    void dryStopsAScriptedModelRepeatingASequence() {
        // A scripted model that, having said 1 2 3 4, always wants to go on as it did the first time: after 1 2 3 it
        // says 4. Greedy, without DRY, it repeats "1 2 3 4" for ever; with DRY the token that would extend the repeat
        // is pushed below the alternative (token 9) once the repeat is longer than the allowed length.
        int[] noDry = script(SamplerExtras.NONE);
        assertThat(noDry).containsSequence(1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4);
        int[] withDry = script(dry(2.0));
        assertThat(java.util.Arrays.stream(withDry).boxed().toList()).doesNotContainSequence(1, 2, 3, 4, 1, 2, 3, 4);
        assertThat(withDry).contains(9);
        // a breaker token in the sequence ends every match: "1 2 \n 1 2 \n" is never longer than the allowed length
        int[] broken = scriptWithBreaker(dry(2.0));
        assertThat(broken).containsSequence(1, 2, 0, 1, 2, 0, 1, 2, 0);
    }

    /** Scripted logits: after token t the model prefers t % 4 + 1 (logit 5); token 9 is always second (logit 3). */
    private static int[] script(SamplerExtras x) {
        TokenSampler sampler = new TokenSampler();
        int[] tokens = new int[64];
        int size = 0;
        tokens[size++] = 1;
        while (size < 40) {
            float[] row = new float[16];
            row[9] = 3;
            row[tokens[size - 1] % 4 + 1] = 5;
            sampler.penalize(row, row.length, tokens, size, x, t -> false);
            tokens[size++] = TokenSampler.argmax(row, row.length, null);
        }
        return java.util.Arrays.copyOf(tokens, size);
    }

    /** Scripted logits: 1 → 2 → 0 → 1 …, where 0 is a breaker; token 9 second. */
    private static int[] scriptWithBreaker(SamplerExtras x) {
        TokenSampler sampler = new TokenSampler();
        int[] tokens = new int[64];
        int size = 0;
        tokens[size++] = 1;
        while (size < 30) {
            float[] row = new float[16];
            row[9] = 3;
            int last = tokens[size - 1];
            row[last == 1 ? 2 : last == 2 ? 0 : 1] = 5;
            sampler.penalize(row, row.length, tokens, size, x, t -> t == 0);
            tokens[size++] = TokenSampler.argmax(row, row.length, null);
        }
        return java.util.Arrays.copyOf(tokens, size);
    }

    @Test
    void repetitionPenaltiesFollowLlamaCpp() {
        TokenSampler sampler = new TokenSampler();
        float[] row = {2f, -2f, 1f, 0.5f};
        int[] history = {0, 1, 2, 2, 3};
        SamplerExtras x = new SamplerExtras(0, 1, 2.0, 4, 0.5, 0.25, 0, 1.75, 2, -1, List.of(), 0, 0.1);
        sampler.penalize(row, 4, history, history.length, x, t -> false);
        // the window is the last 4 tokens (1, 2, 2, 3): token 0 is outside it
        assertThat(row[0]).isEqualTo(2f);
        assertThat(row[1]).isEqualTo(-2f * 2 - 0.25f - 0.5f); // negative: multiplied
        assertThat(row[2]).isEqualTo(1f / 2 - 2 * 0.25f - 0.5f); // positive: divided; seen twice
        assertThat(row[3]).isEqualTo(0.5f / 2 - 0.25f - 0.5f);
        long[] mask = {1L << 2};
        assertThat(sampler.sample(row, 4, mask, 0, 0, 1, x, new SplittableRandom(1)))
                .as("a penalised token the grammar requires is still picked")
                .isEqualTo(2);
    }

    @Test
    void topKAndTopPOnALargeVocabularyMatchAFullSort() {
        // The fast paths (candidates near the best first, selection instead of a sort, top-p over a sorted head) must
        // keep exactly the tokens a full sort keeps.
        SplittableRandom gen = new SplittableRandom(11);
        float[] logits = new float[262_144];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = (float) (gen.nextGaussian() * 3);
        }
        logits[1234] = 25;
        logits[4321] = 24;
        TokenSampler sampler = new TokenSampler();
        Integer[] order = new Integer[logits.length];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        java.util.Arrays.sort(order, (a, b) -> logits[a] != logits[b] ? Float.compare(logits[b], logits[a]) : a - b);
        Set<Integer> top40 = new HashSet<>(List.of(order).subList(0, 40));
        SplittableRandom random = new SplittableRandom(3);
        for (int i = 0; i < 100; i++) {
            assertThat(sampler.sample(logits, logits.length, null, 30.0, 40, 1, random))
                    .isIn(top40);
        }
        // top-p 0.9 at temperature 1 over a flat tail: the head that holds 90 % of the mass
        float[] flat = new float[262_144];
        double total = 0;
        for (int i = 0; i < flat.length; i++) {
            flat[i] = (float) -(i % 1000) * 0.01f;
        }
        for (float l : flat) {
            total += Math.exp(l);
        }
        Integer[] byLogit = order.clone();
        java.util.Arrays.sort(byLogit, (a, b) -> flat[a] != flat[b] ? Float.compare(flat[b], flat[a]) : a - b);
        double acc = 0;
        int keep = 0;
        while (acc < 0.9 * total) {
            acc += Math.exp(flat[byLogit[keep++]]);
        }
        Set<Integer> nucleus = new HashSet<>(List.of(byLogit).subList(0, keep));
        for (int i = 0; i < 100; i++) {
            assertThat(sampler.sample(flat, flat.length, null, 1.0, 0, 0.9, random))
                    .isIn(nucleus);
        }
    }

    @Test
    void utf8PiecesNeverSplitACharacter() {
        byte[] all = "a😀é€b".getBytes(StandardCharsets.UTF_8);
        Utf8Pieces pieces = new Utf8Pieces();
        StringBuilder out = new StringBuilder();
        for (byte b : all) {
            String delta = pieces.add(new byte[] {b});
            assertThat(delta).doesNotContain("\uFFFD");
            out.append(delta);
        }
        out.append(pieces.finish());
        assertThat(out.toString()).isEqualTo("a😀é€b");
        Utf8Pieces broken = new Utf8Pieces();
        assertThat(broken.add(new byte[] {'x', (byte) 0xF0, (byte) 0x9F})).isEqualTo("x");
        assertThat(broken.finish())
                .as("an unfinished character is dropped, never shown as U+FFFD")
                .isEmpty();
        Utf8Pieces lone = new Utf8Pieces();
        assertThat(lone.add(new byte[] {'a', (byte) 0x80, 'b'}) + lone.finish()).isEqualTo("ab");
        assertThat(lone.add(new byte[] {(byte) 0xC0, (byte) 0xAF, 'c'}) + lone.finish())
                .isEqualTo("c");
    }
}
